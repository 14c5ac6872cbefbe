"""A block device named once. The path the user gives is followed once, one name at a time
(`open_path`), to a descriptor of the node it names; its device number, kernel name and
/dev node are read from that descriptor, and every later step (safety checks, consent,
identity, the lock, the node fio and the other tools are given) uses them, never the path
again: a link swapped meanwhile, or a path that reads differently from another mount
namespace, cannot make the device checked and the device written differ."""

from __future__ import annotations

import ctypes
import errno
import os
import stat
import struct
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path

from ... import safe_path
from . import char_device
from .refusal import UnsafeTarget

SYS_DEV_BLOCK = Path("/sys/dev/block")
PROC_SUPER_MAGIC = 0x9FA0
_WALK = os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC


@dataclass
class BlockDev:
    path: str  # as given (/dev/disk/by-id/... or /dev/sdb)
    real: str  # the node every tool is given: /dev/NAME when that is the device
    name: str  # kernel name: sdb, nvme0n1, loop3
    devno: str  # "maj:min"
    tree: set[str] = field(default_factory=set)  # itself, partitions, holders (kernel names)

    def rdev(self) -> int:
        maj, mi = self.devno.split(":")
        return os.makedev(int(maj), int(mi))

    def still(self) -> None:
        """Refuse unless `real` is still this device (checked right before it is written)."""
        try:
            st = os.stat(self.real, follow_symlinks=False)
        except OSError:
            st = None
        if st is None or not stat.S_ISBLK(st.st_mode) or st.st_rdev != self.rdev():
            raise self.moved()

    def moved(self) -> UnsafeTarget:
        """The refusal for a node that is no longer this device."""
        return UnsafeTarget(f"refusing {self.path}: {self.real} is no longer the device ssdlab checked "
                            f"({self.devno}, {self.name}); look at who changes device nodes there")


def _where(fd: int, default: str) -> str:
    """The path of what `fd` holds, as this process sees it (`default` without /proc)."""
    try:
        return os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return default


def _on_procfs(fd: int) -> bool:
    """Whether the descriptor's file is on procfs, whose links (/proc/PID/root, /proc/PID/fd/N)
    are the kernel's own: their text is no path to follow."""
    buf = ctypes.create_string_buffer(256)  # struct statfs; f_type comes first
    if ctypes.CDLL(None, use_errno=True).fstatfs(fd, buf) != 0:
        return False
    return struct.unpack_from("l", buf.raw)[0] == PROC_SUPER_MAGIC


def open_path(path: str, what: str) -> int:
    """An O_PATH descriptor of what `path` names, its links followed one at a time as
    safe_path follows them: a link owned by anyone but the caller or root is refused
    (safe_path.UnsafePath); each is read from the descriptor the walk holds, so a link
    swapped in after it was checked is never followed. A procfs link (/proc/self/root) is
    followed by the kernel, as it would follow it. OSError when a name is missing."""
    fd = os.open("/" if path.startswith("/") else ".", _WALK | os.O_DIRECTORY)
    parts = deque(path.split("/"))
    links = 0
    try:
        while parts:
            c = parts.popleft()
            if c in ("", "."):
                continue
            nfd = os.open(c, _WALK, dir_fd=fd)
            st = os.fstat(nfd)
            if not stat.S_ISLNK(st.st_mode):
                if any(p not in ("", ".") for p in parts) and not stat.S_ISDIR(st.st_mode):
                    os.close(nfd)
                    raise OSError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), c)
                os.close(fd)
                fd = nfd
                continue
            try:
                if st.st_uid not in safe_path.trusted_uids():
                    at = os.path.join(_where(fd, "?"), c)
                    raise safe_path.UnsafePath(what, f"{at} is a symlink owned by uid {st.st_uid}, another "
                                                     "user, which ssdlab does not follow; give the real path")
                links += 1
                if links > safe_path.MAX_LINKS:
                    raise safe_path.UnsafePath(what, f"more than {safe_path.MAX_LINKS} symlinks in the path "
                                                     "(a loop?)")
                if _on_procfs(nfd):
                    tfd = os.open(c, os.O_PATH | os.O_CLOEXEC, dir_fd=fd)  # the kernel's own link
                    os.close(fd)
                    fd = tfd
                    continue
                target = os.readlink("", dir_fd=nfd)  # the link checked, not what its name is now
            finally:
                os.close(nfd)
            if target.startswith("/"):
                os.close(fd)
                fd = os.open("/", _WALK | os.O_DIRECTORY)
            parts.extendleft(reversed(target.split("/")))
    except BaseException:
        os.close(fd)
        raise
    return fd


def _kernel_name(rdev: int, node: str) -> str:
    """The kernel's name of device `rdev` (sysfs), else the name of `node`."""
    sysdev = SYS_DEV_BLOCK / f"{os.major(rdev)}:{os.minor(rdev)}"
    return os.path.basename(os.path.realpath(sysdev)) if sysdev.exists() else os.path.basename(node)


def kernel_name(node: str) -> str:
    """The kernel's name of the block device at `node` (a node outside /dev may be named
    anything): what sysfs files it under. The name of `node` when it is no block device."""
    try:
        st = os.stat(node)
    except OSError:
        return os.path.basename(node)
    return _kernel_name(st.st_rdev, node) if stat.S_ISBLK(st.st_mode) else os.path.basename(node)


def dev_node(name: str, rdev: int) -> str | None:
    """/dev/NAME, when that node is the device `rdev` (not a link, not another device)."""
    node = f"/dev/{name}"
    try:
        st = os.stat(node, follow_symlinks=False)
    except OSError:
        return None
    return node if stat.S_ISBLK(st.st_mode) and st.st_rdev == rdev else None


def resolve(path: str) -> BlockDev:
    """The block device `path` names, followed once (`open_path`). UnsafeTarget with one
    line when it names none, or through another user's link."""
    try:
        fd = open_path(path, path)
    except safe_path.UnsafePath as e:
        raise UnsafeTarget(str(e)) from None
    except OSError as e:
        if e.errno == errno.ENOENT:
            raise UnsafeTarget(f"{path}: no such device; list block devices with `lsblk`") from None
        raise UnsafeTarget(f"{path}: {e.strerror}; list block devices with `lsblk`") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISBLK(st.st_mode):
            raise UnsafeTarget(char_device.not_block(path, st))
        devno = f"{os.major(st.st_rdev)}:{os.minor(st.st_rdev)}"
        opened = _where(fd, path)  # where the walk ended, as this process sees it
        name = _kernel_name(st.st_rdev, opened)
        real = dev_node(name, st.st_rdev) or _reachable(opened, st.st_rdev, path)
        return BlockDev(path=path, real=real, name=name, devno=devno)
    finally:
        os.close(fd)


def _reachable(opened: str, rdev: int, path: str) -> str:
    """A node of the device outside /dev (no /dev/NAME is it): the node the walk ended at,
    when that name leads to it here and no one else may change the directories above it
    (the tools open it by name)."""
    try:
        st = os.stat(opened, follow_symlinks=False)
        if not stat.S_ISBLK(st.st_mode) or st.st_rdev != rdev:
            raise OSError
        safe_path.check_dirs(opened, path)
    except (OSError, safe_path.UnsafePath):
        raise UnsafeTarget(f"refusing {path}: the device it names has no node here that ssdlab can hand to "
                           "fio (no /dev/NAME is it); give the device's node in this host's /dev") from None
    return opened


def devno_of(path: str, what: str) -> str | None:
    """The device number of the block device `path` names ("maj:min"), followed as
    `resolve` follows it; None when it names no block device (or nothing)."""
    try:
        fd = open_path(path, what)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
    finally:
        os.close(fd)
    return f"{os.major(st.st_rdev)}:{os.minor(st.st_rdev)}" if stat.S_ISBLK(st.st_mode) else None
