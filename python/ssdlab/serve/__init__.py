"""A simulated drive exported as a block device over NBD, paced in real time
(`ssdlab serve`, docs/serve.md).

- nbdkit.py: the nbdkit command line and process (the plugin is the Rust crate
  crates/ssdsim-nbd, built by `make build`), readiness, the marker that says a socket
  is a served simulated drive;
- stats.py: the plugin's stats lines -> series, totals and metrics for the store;
- server.py: one serving session from start to stored run;
- keeper.py: how a session is stored (also when serve itself was killed outright).

nbdkit.py and stats.py are the served drive's side of its protocol with clients (targets/
nbd.py reads the marker and the stats): they import nothing of ssdlab's. This package
imports none of its modules, so a client does not load the server.
"""
