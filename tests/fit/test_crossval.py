"""Cross-validation's folds: what a fold runs by default."""

from __future__ import annotations

from types import SimpleNamespace

from ssdlab.fit import descent, fitting
from ssdlab.fit.space import Param

PARAMS = [Param("spare_pct", 2, 60, "%", "spare area"),
          Param("nand.native.read_us", 20, 200, "us", "read time"),
          Param("ftl.gc_buffers", 1, 64, "", "GC buffers", integer=True),
          Param("dies", 1, 64, "dies", "dies", pow2=True)]


def test_a_fold_runs_what_the_search_ran_before_its_steps_and_one_round():
    """The die-count scan and screening (which a fold that chooses as the search did takes
    from the memo) and one round of steps over the smooth parameters: nothing after, as the
    trials a looser bound left (another basin, CMA-ES) lowered no fold's loss."""
    phases = [{"phase": "die count", "trials": 7}, {"phase": "policies", "trials": 2},
              {"phase": "screen", "trials": 102}, {"phase": "steps", "trials": 182},
              {"phase": "cma-es", "trials": 64}]
    search = SimpleNamespace(phases=phases, start=SimpleNamespace(params=PARAMS),
                             free=lambda: [p.key for p in PARAMS])
    smooth = 2  # spare_pct and the read time: the GC buffers and the dies are scanned, not stepped
    assert fitting.fold_trials(search) == 7 + 2 + 102 + smooth + len(descent.LAMBDAS)
    # a search with no steps (nothing smooth to step): its trials so far and a batch
    search.phases = phases[:3]
    assert fitting.fold_trials(search) == 111 + smooth + len(descent.LAMBDAS)
