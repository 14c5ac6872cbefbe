"""A simulated twin of a drive from evidence (`ssdlab fit`, docs/fit.md): evidence.py (runs of
the store and figures files -> figures with tolerances), space.py (the physical parameters,
their bounds, the generic class a search starts from), search.py (Optuna's CMA-ES, trials
through executor.py), pinning.py (how well the evidence pins each parameter; conflicts),
crossval.py, profile_out.py (the twin's profile TOML), report.py, fitting.py (all of it in
order)."""
