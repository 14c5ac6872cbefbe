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
which SQLite reads without them; on a filesystem without locks, as an immutable file too.

SQLite trusts an immutable file not to change: it keeps the pages it has read and reads
the rest as they are now. The reader lock stops the owner's last connection from
checkpointing and removing the -wal, not a new connection of the owner's, which makes a
new -wal, writes to it and checkpoints it into the store file (every 1000 pages, or when
asked): a read after that, or during it, gives an answer the store never held (a run from
before with its metrics from after, or "malformed" for a sound store). Such a writer
leaves traces that stay while the lock is held: its -wal and -shm, which SQLite removes
only under the exclusive lock the reader's lock refuses; and its writes move the sizes
and mtimes. So open_theirs returns what an immutable read rests on (`state`: the store
file's inode, size and mtime, its -wal's and its -shm's), and a read is good only when
`unchanged` says so after it; else Store opens the store again and reads again, through
the -wal and -shm now there, which SQLite keeps consistent; a store changing under
REOPENS reads in a row is one line (Changing). Checking costs a few stat calls per read,
where a private copy of the store to read would cost its size (hundreds of MB) in memory
or on disk per command, and could change while it is made just the same. Where the
filesystem has no locks, the -wal can come and go: sizes and mtimes are then the only
trace, and an mtime's clock ticks in milliseconds.

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
State = tuple  # what an immutable read rests on (`state`); None: read through -wal and -shm
REOPENS = 5  # a store changing under each of these many reads in a row: Changing


class Changing(Exception):
    """Another user's store, read as an immutable file, changed under every read of it."""


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


def open_theirs(real: str, connect: Connect, uri_path: str, wait_s: float) -> tuple[sqlite3.Connection, int, State | None]:
    """Another user's store, read-only: (connection, the descriptor holding the reader
    lock, to be closed after the connection, and what a read of it rests on: `unchanged`
    after a read says whether it is good). Busy when the lock is not had in `wait_s`
    seconds (a connection of the owner's holds the store exclusively: checkpointing it as
    it closes, or changing its journal mode); Changing when the store changes under the
    connection's first read each time."""
    for _ in range(REOPENS):
        fd = os.open(real, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
        try:
            locked = _reader_lock(fd, wait_s)  # False: a filesystem without locks
            seen = state(fd, real)
            if locked and seen[-2] and seen[-1]:  # its -wal and -shm: read through them
                with contextlib.suppress(sqlite3.OperationalError):
                    return connect(f"file:{uri_path}?mode=ro&readonly_shm=1"), fd, None
                # the failed connection's close dropped the process's locks on the store
                _reader_lock(fd, wait_s)
                seen = state(fd, real)
            try:
                db = connect(f"file:{uri_path}?mode=ro&immutable=1")
            except sqlite3.DatabaseError:
                if unchanged(fd, real, seen):  # the store's own fault
                    raise
            else:
                if unchanged(fd, real, seen):
                    return db, fd, seen
                db.close()
        except BaseException:
            os.close(fd)
            raise
        os.close(fd)
    raise Changing()


def state(fd: int, real: str) -> State:
    """The store file (by the descriptor the reader lock is on): inode, size, mtime; and its
    -wal (inode, size, mtime) and -shm (inode; written through memory, its mtime lags), or
    None where there is none."""
    st = os.fstat(fd)
    wal = shm = None
    with contextlib.suppress(FileNotFoundError):
        w = os.lstat(f"{real}-wal")
        wal = (w.st_ino, w.st_size, w.st_mtime_ns)
    with contextlib.suppress(FileNotFoundError):
        shm = (os.lstat(f"{real}-shm").st_ino,)
    return (st.st_ino, st.st_size, st.st_mtime_ns, wal, shm)


def unchanged(fd: int, real: str, seen: State | None) -> bool:
    """The store as a read through its connection found it: always so for one read
    through its -wal and -shm (seen is None), as SQLite reads a consistent state then."""
    return seen is None or state(fd, real) == seen


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
