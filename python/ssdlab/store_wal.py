"""The store's -wal file kept (nearly) empty between writes.

SQLite names a store's -wal and -shm files after the store's path, not its file: when the
file at that path is replaced (`mv other.sqlite results.sqlite`) while a run's connection
has pages in the -wal, the next program to open the path reads those pages as the new
file's (they are valid frames, and nothing in them names the file they belong to), and its
checkpoint copies them into it, damaging it. The runner notices a replaced store before and
after each write (Store.gone) and then writes nothing more; what it cannot undo is what is
already in the -wal. So each write transaction is followed by a checkpoint that copies the
-wal into the store file and truncates the -wal to 0 bytes: between writes there is then
nothing in it to apply to another file, and the window is the write itself.

What a checkpoint held back (below) is settled once more when the store is seen gone and as
it is closed (Store.settle_gone): through the run's own connection, so into the file it
opened (still open, even when unlinked). SQLite does not checkpoint at close into a file
that was moved (its pager checks SQLITE_FCNTL_HAS_MOVED), so Python 3.12's
SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE would change nothing here; but it then leaves the -wal
under the path with whatever it holds, for the next program to read as the new file's.
Another program that opened the new file while the -wal still held the run's pages (the
two then share the -wal and -shm) has read them already: nothing done later undoes that.

The checkpoint does not wait (busy timeout 0 meanwhile): with another connection writing,
or reading through the -wal at that moment, SQLite copies what it can and leaves the rest,
and the next write of any ssdlab process (each settles after its own) empties it; a run's
writes never stall behind a reader. Its cost: each write's pages are written twice (-wal,
then store file) as SQLite does at its own checkpoints anyway (every 1000 pages), and one
more sync of the store file per write."""

from __future__ import annotations

import sqlite3


def settle(db: sqlite3.Connection, busy_timeout_ms: int) -> None:
    """After a commit on `db`: the -wal copied into the store file and truncated, as far as
    other connections let it be done at once; then the busy timeout `busy_timeout_ms` again."""
    db.execute("PRAGMA busy_timeout = 0")
    try:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
    except sqlite3.OperationalError:
        pass  # (locked: another connection's turn) what is left goes with the next write's
    finally:
        db.execute(f"PRAGMA busy_timeout = {busy_timeout_ms}")
