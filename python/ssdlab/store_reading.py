"""How a read command opens an existing results store (store.py), changing nothing: the
user's own store read-write where it can be (a reader may checkpoint its own -wal),
else read-only, else (read-only media, where SQLite cannot make its -shm file) as an
immutable file; another user's store (root reading a user's) without writing a byte of
it or making a file beside it.

SQLite reads a WAL store through its -wal and -shm files, and makes them when they are
missing, even for a read-only connection (root can, and SQLite gives them to the store's
owner): a file that was not there, and an empty -wal the owner's next run would find.
They are missing when no connection of the owner is open, as the last one to close
checkpoints the -wal into the store and removes both. Looking first and opening after
would leave a window: the owner's writer closes in between, and SQLite makes them again.
So the reader takes SQLite's own reader lock on the store first (a POSIX read lock on the
bytes a connection locks while it reads, held on a descriptor of the store's): while it
is held a closing connection cannot get the exclusive lock it checkpoints and removes
them under, and leaves them, as it does for any open reader. Then, with both there, the
store is read through them (the -shm read-only: `readonly_shm`); without them (no
connection of the owner's was open, and none can remove them now), as an immutable file,
which SQLite reads without them (what a writer of the owner's starting meanwhile puts in
a new -wal is then not read); on a filesystem without locks, as an immutable file too.

A POSIX lock belongs to the process, not the descriptor: closing any descriptor of the
store drops every lock the process has on it, SQLite's own included. The descriptor is
therefore kept until the connection is closed (Store.close closes it after), and SQLite's
own reader lock, which its connection holds while it is open, covers the same bytes."""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import sqlite3
import time
from typing import Callable

# SQLite's lock bytes (os_unix.c): a reader holds a read lock on SHARED_SIZE bytes from
# SHARED_FIRST; the exclusive lock a closing connection needs is a write lock on them
PENDING_BYTE = 0x40000000
SHARED_FIRST = PENDING_BYTE + 2
SHARED_SIZE = 510
_POLL_S = 0.02

Connect = Callable[[str], sqlite3.Connection]


class Busy(Exception):
    """The store's owner holds it exclusively for longer than a reader waits."""


def open_own(connect: Connect, uri_path: str) -> tuple[sqlite3.Connection, bool]:
    """The user's own store: (connection, read_only)."""
    try:
        return connect(f"file:{uri_path}?mode=rw"), False
    except sqlite3.OperationalError:
        pass
    try:
        return connect(f"file:{uri_path}?mode=ro"), True
    except sqlite3.OperationalError:
        return connect(f"file:{uri_path}?mode=ro&immutable=1"), True


def open_theirs(real: str, connect: Connect, uri_path: str, wait_s: float) -> tuple[sqlite3.Connection, int]:
    """Another user's store, read-only: (connection, the descriptor holding the reader
    lock, to be closed after the connection). Busy when the lock is not had in `wait_s`
    seconds (a connection of the owner's holds the store exclusively: checkpointing it as
    it closes, or changing its journal mode)."""
    fd = os.open(real, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        if not _reader_lock(fd, wait_s):  # a filesystem without locks: SQLite cannot read through them
            return connect(f"file:{uri_path}?mode=ro&immutable=1"), fd
        if all(os.path.isfile(f"{real}-{x}") for x in ("wal", "shm")):
            with contextlib.suppress(sqlite3.OperationalError):
                return connect(f"file:{uri_path}?mode=ro&readonly_shm=1"), fd
        return connect(f"file:{uri_path}?mode=ro&immutable=1"), fd
    except BaseException:
        os.close(fd)
        raise


def _reader_lock(fd: int, wait_s: float) -> bool:
    """The reader lock taken (False: the filesystem has no locks)."""
    deadline = time.monotonic() + wait_s
    while True:
        try:
            fcntl.lockf(fd, fcntl.LOCK_SH | fcntl.LOCK_NB, SHARED_SIZE, SHARED_FIRST, os.SEEK_SET)
            return True
        except OSError as e:
            if e.errno in (errno.ENOLCK, errno.EOPNOTSUPP, errno.ENOSYS):
                return False
            if e.errno not in (errno.EACCES, errno.EAGAIN):
                raise
        if time.monotonic() >= deadline:
            raise Busy()
        time.sleep(_POLL_S)
