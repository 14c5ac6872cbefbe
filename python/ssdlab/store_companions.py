"""The files SQLite keeps beside a store: `-wal`, `-shm` and `-journal`, opened by name
(after the store's path) and taken for the store's own. Their pages are the store's
newest: a `-wal` someone else put there is read as the store, and the next checkpoint (a
connection that closes, even `results list`'s) copies it into the store file. In a
directory others may add to (/tmp, or any sticky one) another user could so rewrite any
run of the store, a finished one included, without writing a byte of its file; a `-shm`
of theirs, kept mapped, lets them change the index of the `-wal` while a run writes.

So before SQLite opens a store of the caller's, each of these that exists must be a
regular file of the caller's (or root's) with no other name, and is refused otherwise,
with one line naming it; and for a store in WAL mode, the `-wal` and `-shm` that do not
exist yet are created here, new (O_EXCL, no link followed), as the caller's, so that
nobody can put theirs there between the check and SQLite's open (in a sticky directory no
one else may then remove or replace them). A new store is made in WAL mode from the start
(`new_store`): SQLite sets the mode of an empty file only once it has opened it, and
deletes a -wal it finds beside an empty file, which would leave a moment for another
user's -wal after all. The store itself, written, has one name too (`one_name`)."""

from __future__ import annotations

import contextlib
import os
import shutil
import sqlite3
import stat
import tempfile
import time

from . import safe_path

SUFFIXES = ("wal", "shm", "journal")
WAL_MODE = b"\x02\x02"  # a store file's header, bytes 18-19: WAL mode (SQLite's file format)


def check(real: str, what: str, own: bool = True, make: bool = True) -> None:
    """UnsafePath when a file beside the store `real` (its real path) is a symlink, or, for
    a store of the caller's (`own`), not the caller's own; then its -wal and -shm made the
    caller's when missing (WAL mode only; `make`). Another user's store is read as its owner left
    it (store_reading.py): its files are theirs."""
    for suffix in SUFFIXES:
        _check_one(f"{real}-{suffix}", what, own)
    if own and make and _in_wal_mode(real):
        for suffix in ("wal", "shm"):
            _make(f"{real}-{suffix}", real, what)


def new_store(real: str, what: str) -> None:
    """Make the store `real` (its real path, where nothing is yet) new, in WAL mode: made so
    in a private directory beside it (mkdtemp: 0700) and linked into place (from its
    directory's descriptor: no link followed on the way, none replaced at the name), so
    SQLite never opens it, nor its -wal, where another user may add files. Exists when
    something has the name already (another process, or a planted link or file); a
    directory that takes no private one gets the empty file SQLite then makes."""
    remove_stale(os.path.dirname(real))
    try:
        d = tempfile.mkdtemp(prefix=NEW_PREFIX, dir=os.path.dirname(real))
    except OSError:
        os.close(safe_path.open_real(real, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o644, what))
        return
    try:
        db = sqlite3.connect(os.path.join(d, "store"))
        try:
            db.execute("PRAGMA journal_mode = WAL")
        finally:
            db.close()  # the -wal goes with it: the file alone holds the (empty) store, 0644 less the umask
        parent, name = os.path.split(real)
        src, dst = os.open(d, os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC), safe_path.dir_fd(parent)
        try:
            os.link("store", name, src_dir_fd=src, dst_dir_fd=dst, follow_symlinks=False)
        except FileExistsError:
            raise safe_path.Exists(what, f"{real} exists", refusal=False) from None
        finally:
            os.close(src)
            os.close(dst)
    finally:
        shutil.rmtree(d, ignore_errors=True)


ONE_NAME_WAIT_S = 2.0  # a store another run is making has a second name until it is in place


def one_name(real: str, what: str) -> None:
    """Refuse a store with other names (hard links): SQLite takes an empty file for a new
    database, so an empty file of root's given a second name at --db (anyone may, where
    fs.protected_hardlinks is 0) would be written. A store another run is making has its
    private name for a moment (new_store): waited for."""
    deadline = time.monotonic() + ONE_NAME_WAIT_S
    while (n := os.lstat(real).st_nlink) > 1:
        if time.monotonic() > deadline:
            raise safe_path.UnsafePath(what, f"{real} has {n} names (hard links): what is stored would be written "
                                             "to the file of every other name too; give --db a file of its own")
        time.sleep(0.05)


NEW_PREFIX = ".ssdlab-new-"
STALE_AFTER_S = 3600.0  # a store is made in milliseconds: an older directory's maker was killed


def remove_stale(parent: str) -> None:
    """The private directories of new stores this user's killed processes left in `parent`
    (a SIGKILL while one was made): this user's own (never another's, nor a link), older than
    STALE_AFTER_S; shutil.rmtree follows no link inside."""
    try:
        names = [n for n in os.listdir(parent) if n.startswith(NEW_PREFIX)]
    except OSError:
        return
    for name in names:
        path = os.path.join(parent, name)
        with contextlib.suppress(OSError):
            st = os.lstat(path)
            if stat.S_ISDIR(st.st_mode) and st.st_uid == os.geteuid() and time.time() - st.st_mtime >= STALE_AFTER_S:
                shutil.rmtree(path)


def _check_one(path: str, what: str, own: bool = True) -> None:
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    except OSError as e:
        raise safe_path.UnsafePath(what, f"cannot look at {path}: {e.strerror}", refusal=False) from None
    if stat.S_ISLNK(st.st_mode):  # SQLite refuses it (O_NOFOLLOW), saying only "unable to open"
        raise safe_path.UnsafePath(what, f"{path} is a symlink (owned by uid {st.st_uid}), which SQLite never "
                                         "follows; remove it")
    if not own:
        return
    if not stat.S_ISREG(st.st_mode) or st.st_uid not in safe_path.trusted_uids() or st.st_nlink != 1:
        whose = (f"belongs to uid {st.st_uid}, another user" if st.st_uid not in safe_path.trusted_uids()
                 else "is not a regular file" if not stat.S_ISREG(st.st_mode) else f"has {st.st_nlink} names")
        raise safe_path.UnsafePath(what, f"{path} {whose}: SQLite would read it as the store's own newest "
                                         "pages; remove it (and keep stores where only you can add files)")


def _in_wal_mode(real: str) -> bool:
    try:
        fd = os.open(real, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        return os.pread(fd, 2, 18) == WAL_MODE
    finally:
        os.close(fd)


def _make(path: str, real: str, what: str) -> None:
    """`path` created empty as the caller's (as SQLite makes it: the store's mode), unless
    it is there (checked above, or made since: checked again) or cannot be (a read-only
    directory: SQLite then reads the store without it)."""
    try:
        mode = stat.S_IMODE(os.stat(real).st_mode) & 0o666
        fd = safe_path.open_real(path, os.O_RDWR | os.O_CREAT | os.O_EXCL, mode, what)
    except safe_path.Exists:
        _check_one(path, what)
        return
    except (safe_path.UnsafePath, OSError):
        return
    with contextlib.suppress(OSError):
        os.fchmod(fd, mode)  # not narrowed by the umask: others read the store as before
    os.close(fd)


__all__ = ["SUFFIXES", "check", "new_store", "one_name"]
