"""A fio job file on a simulated drive. The job file is read by ssdlab (jobfile.py), checked
against an allow-list of I/O-pattern options (options.py) and compiled to the simulator's
own workload (compile.py), generated and run in Rust in virtual time; fio never runs it.
The results come back in fio's own JSON and text layouts (output.py)."""

from __future__ import annotations


class FioJobError(ValueError):
    """A job file ssdlab will not run: one line naming the option or line and why."""
