"""A fio job file on a simulated drive. The job file is read by ssdlab (fioformat/jobfile.py), checked
against an allow-list of I/O-pattern options (options.py) and compiled to the simulator's
own workload (compile.py), generated and run in Rust in virtual time; fio never runs it.
The results come back in fio's own JSON and text layouts (fioformat/json_write.py,
fioformat/text_output.py)."""

from __future__ import annotations

from ..fioformat.jobfile import FioJobError  # raised by the reader and every check after it

__all__ = ["FioJobError"]
