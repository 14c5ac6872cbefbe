"""A simulated drive exported as a block device over NBD, paced in real time
(`ssdlab serve`, docs/serve.md).

- nbdkit.py: the nbdkit command line and process (the plugin is the Rust crate
  crates/ssdsim-nbd, built by `make build`), readiness, the marker that says a socket
  is a served simulated drive;
- stats.py: the plugin's stats lines -> series, totals and metrics for the store;
- server.py: one serving session from start to stored run.
"""

from .server import ServeOptions, Serving, serve

__all__ = ["ServeOptions", "Serving", "serve"]
