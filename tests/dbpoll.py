"""Watching a results database another process is writing (signal tests wait for rows
instead of sleeping a fixed time)."""

from __future__ import annotations

import sqlite3
from pathlib import Path


def count(db: str | Path, sql: str) -> int:
    """The first column of `sql`'s first row, read-only; 0 while the file is not created
    yet or busy."""
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=1) as c:
            return c.execute(sql).fetchone()[0]
    except sqlite3.Error:
        return 0
