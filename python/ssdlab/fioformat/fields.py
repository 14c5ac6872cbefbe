"""What fio's JSON output and its logs share: the data directions, in fio's order (the
JSON's per-direction objects, and the logs' ddir column: 0 read, 1 write, 2 trim), and the
object unified_rw_reporting adds (or puts in their place)."""

from __future__ import annotations

DIRS = ("read", "write", "trim")
MIXED = "mixed"
