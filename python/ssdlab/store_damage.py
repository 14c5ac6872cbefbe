"""How a results store that cannot be read is reported (store.py, cli/errors.py): one line
with SQLite's own words and the way out, which depends on whether the file ever was a
database."""

from __future__ import annotations

import os
from pathlib import Path

SQLITE_HEADER = b"SQLite format 3\x00"  # the first 16 bytes of every SQLite database file


def damage_hint(path: Path, e: Exception | str) -> str:
    """One line: SQLite's own report (quick_check's is several lines) and the way out: for
    a file that never was an SQLite database (a text file, a --db typo), checking --db, not
    a recovery there is nothing to recover from."""
    what = "; ".join(x.strip() for x in str(e).splitlines() if x.strip())
    if len(what) > 300:
        what = what[:297] + "..."
    if _foreign_file(path):
        return f"{path} is not an ssdlab results store (not an SQLite database: {what}); check --db"
    return (f"results store {path} is damaged ({what}); recover what is left with "
            f"`sqlite3 {path} .recover | sqlite3 recovered.sqlite` and use --db recovered.sqlite")


def _foreign_file(path: Path) -> bool:
    """Does `path` hold bytes that do not begin as an SQLite database's? (False when it
    cannot be read, or is empty: SQLite makes an empty file a database.)"""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return False
    try:
        head = os.read(fd, len(SQLITE_HEADER))
    except OSError:
        return False
    finally:
        os.close(fd)
    return bool(head) and head != SQLITE_HEADER[:len(head)]


__all__ = ["damage_hint"]
