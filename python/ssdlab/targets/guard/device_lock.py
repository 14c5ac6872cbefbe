"""The lock every user's runs see on a block device: an flock on the device's own node
(/dev/NAME), shared while a run only reads the device and exclusive once it writes, the
way util-linux and udev lock block devices (systemd's "Locking Block Device Access": a
program that writes holds it exclusively, one that probes holds it shared).

locks.py keeps each user's runs one at a time per device with lock files in a directory
only that user can write, so it cannot see another user's runs: a read run of one user
could overlap another user's write run (writers alone exclude each other, by O_EXCL).
The node is where every user meets without a directory they may all write: nothing is
created, there is no name to plant a link at, and only someone who may open the device
can lock it (who could hold it with O_EXCL, or flock it with flock(1), anyway). A run
takes the shared lock when it opens the device and turns it exclusive when it is allowed
to write (guard/safety.py), before anything is written; a run that cannot is refused.
Runs that only read may overlap, whoever runs them: neither changes a byte.

A partition is locked on its disk's node, as udev and util-linux lock it (a partition's
own node is not what they lock): a run on the disk and one on any of its partitions see
each other, and a run that writes one partition keeps out runs on the disk's others too
(it cannot tell which bytes they share with the disk; two partitions are rarely tested at
once). A user who may open the partition but not its disk locks the partition's node.

flock turns a shared lock into an exclusive one by letting go first: when another
holder is in the way, the shared lock is gone too. It is taken again at once (the run is
refused anyway); failing that, the run holds none, and is refused all the same.

Every mount of devtmpfs is the one /dev, so any name of a device (a link such as
/dev/disk/by-id/..., /dev itself bind-mounted elsewhere) leads to the same node, and a
node made with mknod somewhere else (another inode) is locked as /dev/NAME, found from its
major:minor through /sys/dev/block. A run whose /dev is another (a container's own) locks
another file, whose lock these runs do not see.

file_lock.py locks a file target the same way, on the file itself."""

from __future__ import annotations

import errno
import fcntl
import os
import time
from pathlib import Path

from . import block_dev
from .block_dev import BlockDev
from .refusal import DeviceLocked, UnsafeTarget

_WAIT_S = 2.0  # a lock held this briefly is a probe (udev's, blkid's), not a run
_POLL_S = 0.02


def node_of(dev: BlockDev) -> str:
    """The node whose lock stands for the device `dev` (resolved once: block_dev.py):
    /dev/NAME of the device, or of its disk for a partition (when this user may open it);
    else the node the device was found at."""
    sysdev = block_dev.SYS_DEV_BLOCK / dev.devno
    own = dev.real
    if not (sysdev / "partition").exists():
        return own
    # a partition: its disk's node, which udev and util-linux lock for all of its
    # partitions, so that a run on the disk and one on a partition see each other
    disk = sysdev.resolve().parent
    try:
        maj, mi = (disk / "dev").read_text().split(":")
    except (OSError, ValueError):
        return own
    whole = _node(disk, os.makedev(int(maj), int(mi)))
    if whole is None:
        return own
    try:  # a user given the partition alone (a udev rule) locks what they may open
        os.close(os.open(whole, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOFOLLOW))
    except OSError:
        return own
    return whole


def _node(sysdev: Path, rdev: int) -> str | None:
    """/dev/NAME of the device `sysdev` (/sys/...), when that node is the device."""
    return block_dev.dev_node(sysdev.resolve().name, rdev) if sysdev.exists() else None


class NodeLock:
    """The flock on a block device's node: `acquire` (shared), `exclusive`, `release`.
    `label` names the device in messages."""

    what = "device"  # in messages: "it holds the device's lock"

    def __init__(self, dev: BlockDev | str, label: str):
        self.label = label
        dev = block_dev.resolve(dev) if isinstance(dev, str) else dev
        self.node = node_of(dev)
        self.own = dev.real
        self.fd: int | None = None
        self.mode = 0  # fcntl.LOCK_SH or LOCK_EX while held

    def _open(self) -> int:
        try:
            return os.open(self.node, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOFOLLOW)
        except OSError as e:
            hint = (f"; reading a device takes read access to {self.node} (root, or its group)"
                    if e.errno in (errno.EACCES, errno.EPERM) else "")
            raise UnsafeTarget(f"refusing {self.label}: cannot open {self.node}: {e.strerror}{hint}") from None

    def acquire(self) -> "NodeLock":
        self.fd = self._open()
        if not self._take(fcntl.LOCK_SH):
            why = self._refusal(fcntl.LOCK_SH)
            self.release()
            raise DeviceLocked(why)
        return self

    def exclusive(self) -> None:
        """The lock made exclusive: no other run (of any user) reads or writes the device
        until it is released. Refused while another holds it."""
        if self.fd is None:
            raise UnsafeTarget(f"refusing {self.label}: its device lock is not held; open the drive again")
        if self.mode == fcntl.LOCK_EX:
            return
        if self._take(fcntl.LOCK_EX):
            return
        why = self._refusal(fcntl.LOCK_EX)
        if not self._take(fcntl.LOCK_SH):  # flock let go of the shared lock: take it again
            self.release()
        raise DeviceLocked(why)

    def release(self) -> None:
        if self.fd is not None:
            os.close(self.fd)  # drops the flock
            self.fd = None
            self.mode = 0

    def _take(self, mode: int) -> bool:
        assert self.fd is not None
        deadline = time.monotonic() + _WAIT_S
        while True:
            try:
                fcntl.flock(self.fd, mode | fcntl.LOCK_NB)
                self.mode = mode
                return True
            except OSError as e:
                if e.errno not in (errno.EWOULDBLOCK, errno.EAGAIN):
                    raise
            self.mode = 0  # a failed conversion let go of what was held
            if time.monotonic() >= deadline:
                return False
            time.sleep(_POLL_S)

    def _refusal(self, wanted: int) -> str:
        """Why the lock `wanted` was not had: who holds the node's lock, and how."""
        assert self.fd is not None
        held = holders(self.fd)
        writers = [pid for pid, excl in held if excl]
        readers = [pid for pid, excl in held if not excl] if wanted == fcntl.LOCK_EX else []
        how = "is writing it" if writers or not readers else "is reading it"
        if self.node != self.own:
            how += f" or another partition of its disk {self.node}"
        pid = (writers or readers or [0])[0]
        who = describe(pid) if pid else "another program"
        return (f"refusing {self.label}: {who} {how} (it holds the {self.what}'s lock, as every ssdlab run does); "
                "wait for it to finish")


def holders(fd: int) -> list[tuple[int, bool]]:
    """(pid, exclusive) of every flock held on the file open as `fd` (/proc/locks; waiters
    left out)."""
    st = os.fstat(fd)
    key = f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}:{st.st_ino}"
    out = []
    try:
        text = Path("/proc/locks").read_text()
    except OSError:
        return []
    for line in text.splitlines():
        f = line.split()
        if len(f) >= 6 and f[1] == "FLOCK" and f[5] == key and f[4].isdigit():
            out.append((int(f[4]), f[3] == "WRITE"))
    return out


def describe(pid: int) -> str:
    """`pid 1234 (fio, uid 1000)`: as much of it as may be read."""
    try:
        comm = Path(f"/proc/{pid}/comm").read_text().strip()
        uid = os.stat(f"/proc/{pid}").st_uid
    except OSError:
        return f"pid {pid}"
    return f"pid {pid} ({comm}, uid {uid})"
