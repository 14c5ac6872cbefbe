"""One ssdlab run of each user at a time per device (or file): an flock on a lock file
named after the device number (or the file's inode: its real path while it does not
exist yet), holding the owner's pid. A block device is also locked on its own node, and a
file target on the file itself, which every user's runs see (device_lock.py, file_lock.py:
shared while a run reads, exclusive once it writes).

The lock files live in a directory only their owner can write: /run/ssdlab (root, 0700)
for root, $XDG_RUNTIME_DIR/ssdlab or /tmp/ssdlab-UID (0700) for other users. Nobody else
can plant a symlink there (a root run would follow it and truncate its target) or hold a
lock to block runs; files are still opened with O_NOFOLLOW and checked (regular file,
ours) before they are written.

A lock file is removed by its holder when it lets go (and a file no run holds, left by a
killed run, by the next run that lets go of a lock), always while holding its flock. A run
that opened the file just before it was removed then holds a lock on a file that no longer
has that name; so the lock is taken only once the name, after the flock, still leads to
the file flocked (the same inode); otherwise the run opens the name again."""

from __future__ import annotations

import errno
import fcntl
import hashlib
import os
import stat
import time
from pathlib import Path

from ... import safe_path
from . import block_dev
from .block_dev import BlockDev
from .device_lock import NodeLock
from .file_lock import FileLock
from .refusal import DeviceLocked, UnsafeTarget

_HELD: dict[str, str] = {}  # key -> label, locks this process holds
_ATTEMPTS = 50  # opens of a name removed under us before giving up (each a removal by a run)
_BUSY_WAIT_S = 0.2  # a lock held this briefly is a sweep of stale files (below), not a run


def _private_dir(d: Path) -> Path:
    """`d` created 0700 if missing, and refused unless it is a real directory owned by us
    that nobody else can write."""
    try:
        os.mkdir(d, 0o700)
    except FileExistsError:
        pass
    except OSError as e:
        raise UnsafeTarget(f"cannot create the lock directory {d}: {e.strerror}") from None
    st = os.lstat(d)
    if st.st_uid != os.geteuid():  # made first by another user (anyone can, in /tmp): not ours to remove
        raise UnsafeTarget(f"refusing lock directory {d}: uid {st.st_uid}, another user, made it (or a link "
                           f"there) first; set XDG_RUNTIME_DIR or TMPDIR to a directory only you can write "
                           f"(ssdlab keeps its lock files in ssdlab/ or ssdlab-{os.geteuid()}/ there), or ask "
                           "root to remove it")
    if not stat.S_ISDIR(st.st_mode) or st.st_mode & 0o022:
        raise UnsafeTarget(f"refusing lock directory {d}: not a directory owned by uid "
                           f"{os.geteuid()} and writable only by it; remove it and run again")
    return d


def lock_dir() -> Path:
    if os.geteuid() == 0:
        return _private_dir(Path("/run/ssdlab") if Path("/run").is_dir() else Path("/var/lock/ssdlab"))
    xdg = os.environ.get("XDG_RUNTIME_DIR")
    if xdg and os.path.isdir(xdg) and os.stat(xdg).st_uid == os.geteuid():
        return _private_dir(Path(xdg) / "ssdlab")
    return _private_dir(Path(os.environ.get("TMPDIR", "/tmp")) / f"ssdlab-{os.geteuid()}")


def lock_path(key: str) -> Path:
    return lock_dir() / f"ssdlab-{hashlib.sha1(key.encode()).hexdigest()[:16]}.lock"


class DeviceLock:
    def __init__(self, key: str, label: str):
        self.key = key
        self.label = label
        self.path = lock_path(key)
        self.fd: int | None = None

    def acquire(self) -> "DeviceLock":
        if self.key in _HELD:
            raise DeviceLocked(f"refusing {self.label}: this run already uses it (as {_HELD[self.key]}); "
                               "give each drive once")
        for _ in range(_ATTEMPTS):
            fd = self._open()
            if fd is None:
                continue  # removed between the open and its checks: open the name again
            if not self._flock(fd):
                continue  # removed before the flock: the name is another file, or none
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
            self.fd = fd
            _HELD[self.key] = self.label
            return self
        raise UnsafeTarget(f"refusing {self.label}: its lock file {self.path} was removed "
                           f"{_ATTEMPTS} times while being opened; run again")

    def _open(self) -> int | None:
        """The lock file, created if missing, never through a symlink; None when it was
        removed meanwhile (no link left)."""
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        except OSError as e:
            raise UnsafeTarget(f"refusing {self.label}: cannot open its lock file {self.path}: "
                               f"{e.strerror}; remove it and run again") from None
        st = os.fstat(fd)
        if stat.S_ISREG(st.st_mode) and st.st_uid == os.geteuid() and st.st_nlink == 0:
            os.close(fd)
            return None
        if not stat.S_ISREG(st.st_mode) or st.st_uid != os.geteuid() or st.st_nlink != 1:
            os.close(fd)
            raise UnsafeTarget(f"refusing {self.label}: its lock file {self.path} is not ssdlab's "
                               "(not a regular file owned by this user); remove it and run again")
        return fd

    def _flock(self, fd: int) -> bool:
        """The flock on `fd`, and whether the lock file's name still leads to it (False: the
        descriptor is closed). Refuses while another run holds it."""
        deadline = time.monotonic() + _BUSY_WAIT_S
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except OSError as e:
                if e.errno not in (errno.EWOULDBLOCK, errno.EAGAIN):
                    os.close(fd)
                    raise
                if time.monotonic() >= deadline:  # a run holds it (a sweep holds it briefly)
                    owner = ""
                    try:
                        owner = os.pread(fd, 64, 0).decode(errors="replace").strip()
                    except OSError:
                        pass
                    os.close(fd)
                    raise DeviceLocked(
                        f"refusing {self.label}: another ssdlab run (pid {owner or '?'}) is using it; "
                        "wait for it to finish") from None
                time.sleep(0.01)
        if _same_file(fd, self.path):
            return True
        os.close(fd)
        return False

    def release(self) -> None:
        if self.fd is not None:
            try:
                _unlink_if_same(self.fd, self.path)  # while the flock is held
                sweep(self.path.parent)
            except OSError:
                pass  # a lock file left is only a file: the next run removes it
            finally:
                os.close(self.fd)  # drops the flock
                self.fd = None
                _HELD.pop(self.key, None)

    def __enter__(self) -> "DeviceLock":
        return self.acquire()

    def __exit__(self, *exc) -> None:
        self.release()


def _same_file(fd: int, path: Path) -> bool:
    """Whether `path` (not followed if a link) is the file open as `fd`."""
    try:
        a, b = os.fstat(fd), os.stat(path, follow_symlinks=False)
    except FileNotFoundError:
        return False
    return (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)


def _unlink_if_same(fd: int, path: Path) -> None:
    """Remove the lock file `path` if it is the file `fd` holds the flock of (the caller
    holds it: no run can be using that file, and any run that opened it will see it gone)."""
    if _same_file(fd, path):
        os.unlink(path)


def sweep(d: Path) -> int:
    """Remove the lock files in `d` that no run holds (left by runs that were killed):
    each flocked, checked to be the file its name leads to, then removed; one a run holds
    is left alone. Returns how many were removed."""
    removed = 0
    try:
        names = [n for n in os.listdir(d) if n.startswith("ssdlab-") and n.endswith(".lock")]
    except OSError:
        return 0
    for name in names:
        path = d / name
        try:
            fd = os.open(path, os.O_RDWR | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
        except OSError:
            continue  # gone, or a symlink: not ours to touch
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode) or st.st_uid != os.geteuid() or st.st_nlink != 1:
                continue
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                continue  # a run holds it
            if _same_file(fd, path):
                os.unlink(path)
                removed += 1
        except OSError:
            continue
        finally:
            os.close(fd)
    return removed


def claim(key: str, label: str) -> None:
    """This run uses the drive `key` (a key as DeviceLock's) without a lock file here: a
    drive on another host, whose agent holds the lock there. A drive given twice, by any
    names, is refused as DeviceLock refuses it."""
    if key in _HELD:
        raise DeviceLocked(f"refusing {label}: this run already uses it (as {_HELD[key]}); "
                           "give each drive once")
    _HELD[key] = label


def unclaim(key: str) -> None:
    _HELD.pop(key, None)


def drive_key(kind: str, path: str) -> str:
    """What a drive is, whatever names it: a block device's number, a file's inode (its
    real path while it does not exist yet): the key of its lock, and of a drive given twice
    in one run. A hard link or a bind mount names the same inode by another path."""
    if kind == "file":
        real = safe_path.real(path, f"file:{path}")
        try:
            st = os.stat(real)
        except OSError:
            return f"file:{real}"
        return f"inode:{st.st_dev}:{st.st_ino}" if stat.S_ISREG(st.st_mode) else f"file:{real}"
    return f"dev:{block_dev.resolve(path).devno}"  # followed as the run follows it


class BlockLock(DeviceLock):
    """A block device's (resolved once: block_dev.py): this user's lock file, then the
    device's own lock, shared (device_lock.py); `for_writing` makes that one exclusive."""

    def __init__(self, dev: BlockDev):
        super().__init__(f"dev:{dev.devno}", dev.real)
        self.node = NodeLock(dev, dev.real)

    def acquire(self) -> "BlockLock":
        super().acquire()
        try:
            self.node.acquire()
        except BaseException:
            super().release()
            raise
        return self

    def for_writing(self) -> None:
        """Refused (DeviceLocked) while another run of any user reads or writes it."""
        self.node.exclusive()

    def release(self) -> None:
        self.node.release()
        super().release()


class FileTargetLock(DeviceLock):
    """A file target's: this user's lock file, then the file's own lock (file_lock.py),
    shared once the file is there (`shared`), exclusive from `for_writing`."""

    def __init__(self, path: str):
        super().__init__(drive_key("file", path), f"file:{path}")
        self.file = FileLock(safe_path.real(path, self.label), self.label)

    def acquire(self) -> "FileTargetLock":
        super().acquire()
        try:
            self.shared()
        except BaseException:
            super().release()
            raise
        return self

    def shared(self) -> None:
        """The file's lock, shared, if the file is there and it is not held yet."""
        if not self.file.held() and os.path.lexists(self.file.node):
            self.file.acquire()

    def for_writing(self) -> None:
        """Refused (DeviceLocked) while another run of any user reads or writes the file
        (the file must be there: a new one is locked once made)."""
        if not self.file.held():
            self.file.acquire()
        self.file.exclusive()

    def release(self) -> None:
        self.file.release()
        super().release()


def lock_for_block(dev: BlockDev) -> BlockLock:
    return BlockLock(dev)


def lock_for_file(path: str) -> DeviceLock:
    return DeviceLock(drive_key("file", path), f"file:{path}")
