"""The lock every user's runs see on a file target: an flock on the file itself, shared
while a run only reads it and exclusive once it writes, as device_lock.py locks a block
device's node.

locks.py's lock files keep one user's runs on a file one at a time, in a directory only
that user can write, so they cannot see another user's runs: two users who may both
write one file (root's file of mode 0666, say) each found theirs free, and wrote it at
once. The file is where every run meets, as the node is for a device: nothing is created
for the lock, and only who may open the file can take it. A file that is not there yet is
locked once the run has made it."""

from __future__ import annotations

import errno
import os

from ... import safe_path
from .device_lock import NodeLock
from .safety import UnsafeTarget


class FileLock(NodeLock):
    """The flock on the file at `real` (a path safe_path.real resolved): `acquire`
    (shared), `exclusive`, `release`, refusals as a device's."""

    what = "file"

    def __init__(self, real: str, label: str):  # not NodeLock's: there is no device to find
        self.label = label
        self.node = self.own = real
        self.fd: int | None = None
        self.mode = 0

    def _open(self) -> int:
        parent, name = os.path.split(self.node)
        try:  # never through a link put in the path since it was resolved
            d = safe_path.dir_fd(parent)
            try:
                return os.open(name, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=d)
            finally:
                os.close(d)
        except OSError as e:
            why = ("it changed into a symlink since ssdlab checked it" if e.errno in (errno.ELOOP, errno.ENOTDIR)
                   else e.strerror)
            raise UnsafeTarget(f"refusing {self.label}: cannot open {self.node}: {why}") from None

    def held(self) -> bool:
        return self.fd is not None
