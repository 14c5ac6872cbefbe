"""What may be written, and one run at a time per device.

A block device is written only when nothing uses it and nothing lives on it:
- never (whatever the flag says) when it, a partition of it or a device stacked on it is
  mounted, is active swap, backs the root filesystem, has holders (LVM, MD, dm-crypt) or is
  held open exclusively by someone else: stop that use first;
- with `--destroy-data=DEVICE` naming this same device (path, by-id link or serial) when it
  carries a partition table, partitions or a filesystem/RAID/LVM signature;
- freely when it is blank (no signature of any kind).
A file target is written only inside its own file; an existing file that ssdlab did not
create needs `--destroy-data=PATH`.
Reading needs none of this.
"""

from __future__ import annotations

import errno
import fcntl
import hashlib
import json
import os
import shutil
import stat
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

XATTR = "user.ssdlab.target"
SYS_CLASS_BLOCK = Path("/sys/class/block")


class UnsafeTarget(ValueError):
    """A refusal: the message says why and how to proceed. The CLI exits with status 2."""

    exit_code = 2


class DeviceLocked(UnsafeTarget):
    pass


# --------------------------------------------------------------------------- block devices
@dataclass
class BlockDev:
    path: str  # as given (/dev/disk/by-id/... or /dev/sdb)
    real: str  # /dev/sdb
    name: str  # kernel name: sdb, nvme0n1, loop3
    devno: str  # "maj:min"
    tree: set[str] = field(default_factory=set)  # itself, partitions, holders (kernel names)


def _read(p: Path | str, default: str = "") -> str:
    try:
        return Path(p).read_text().strip()
    except OSError:
        return default


def resolve_block(path: str) -> BlockDev:
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise UnsafeTarget(f"{path}: no such device; list block devices with `lsblk`") from None
    if not stat.S_ISBLK(st.st_mode):
        raise UnsafeTarget(f"{path} is not a block device; for a file use file:PATH:SIZE")
    devno = f"{os.major(st.st_rdev)}:{os.minor(st.st_rdev)}"
    sysdev = Path("/sys/dev/block") / devno
    name = os.path.basename(os.path.realpath(sysdev)) if sysdev.exists() else os.path.basename(
        os.path.realpath(path))
    dev = BlockDev(path=path, real=os.path.realpath(path), name=name, devno=devno)
    dev.tree = device_tree(name)
    return dev


def partitions(name: str) -> list[str]:
    base = SYS_CLASS_BLOCK / name
    out = []
    try:
        for child in base.iterdir():
            if (child / "partition").exists():
                out.append(child.name)
    except OSError:
        pass
    return sorted(out)


def holders(name: str) -> list[str]:
    try:
        return sorted(p.name for p in (SYS_CLASS_BLOCK / name / "holders").iterdir())
    except OSError:
        return []


def device_tree(name: str) -> set[str]:
    """The device, its partitions and everything stacked on any of them (dm, md, ...)."""
    seen: set[str] = set()
    todo = [name]
    while todo:
        n = todo.pop()
        if n in seen:
            continue
        seen.add(n)
        todo.extend(partitions(n))
        todo.extend(holders(n))
    return seen


def devno_of(name: str) -> str:
    return _read(SYS_CLASS_BLOCK / name / "dev")


def _mountinfo() -> list[tuple[str, str, str]]:
    """(maj:min, mount point, source) for every mount."""
    out = []
    for line in _read("/proc/self/mountinfo").splitlines():
        parts = line.split()
        if len(parts) < 10 or "-" not in parts:
            continue
        sep = parts.index("-")
        out.append((parts[2], parts[4].replace("\\040", " "), parts[sep + 2]))
    return out


def _source_devno(source: str) -> str:
    if not source.startswith("/"):
        return ""
    try:
        st = os.stat(source)
    except OSError:
        return ""
    if stat.S_ISBLK(st.st_mode):
        return f"{os.major(st.st_rdev)}:{os.minor(st.st_rdev)}"
    return ""


def mounted_in(tree: set[str]) -> list[tuple[str, str]]:
    """(kernel name, mount point) of mounts on any device of the tree."""
    nums = {devno_of(n): n for n in tree}
    nums.pop("", None)
    hits = []
    for majmin, mnt, src in _mountinfo():
        n = nums.get(majmin) or nums.get(_source_devno(src))
        if n:
            hits.append((n, mnt))
    return hits


def swaps_in(tree: set[str]) -> list[str]:
    nums = {devno_of(n): n for n in tree}
    hits = []
    for line in _read("/proc/swaps").splitlines()[1:]:
        p = line.split()
        if not p:
            continue
        d = _source_devno(p[0].replace("\\040", " "))
        if d in nums:
            hits.append(p[0])
    return hits


def root_in(tree: set[str]) -> bool:
    nums = {devno_of(n) for n in tree}
    st = os.stat("/")
    if f"{os.major(st.st_dev)}:{os.minor(st.st_dev)}" in nums:
        return True
    for majmin, mnt, src in _mountinfo():
        if mnt == "/" and (majmin in nums or _source_devno(src) in nums):
            return True
    return False


def signatures(path: str) -> list[str]:
    """Partition tables and filesystem/RAID/LVM signatures on the device (wipefs -n, then
    blkid -p as fallback)."""
    found: list[str] = []
    if shutil.which("wipefs"):
        r = subprocess.run(["wipefs", "--no-act", "--json", path], capture_output=True, text=True,
                           timeout=30)
        if r.returncode == 0:
            try:
                sigs = json.loads(r.stdout or "{}").get("signatures", [])
            except json.JSONDecodeError:
                sigs = []
            for s in sigs:
                t = s.get("type") or "?"
                if t not in found:
                    found.append(t)
            return found
    if shutil.which("blkid"):
        r = subprocess.run(["blkid", "-p", "-o", "export", path], capture_output=True, text=True,
                           timeout=30)
        for line in r.stdout.splitlines():
            k, _, v = line.partition("=")
            if k in ("TYPE", "PTTYPE") and v not in found:
                found.append(v)
    return found


def serial_of(name: str) -> str:
    for p in (SYS_CLASS_BLOCK / name / "device" / "serial", SYS_CLASS_BLOCK / name / "serial"):
        s = _read(p)
        if s:
            return s
    if shutil.which("lsblk"):
        r = subprocess.run(["lsblk", "-dno", "SERIAL", f"/dev/{name}"], capture_output=True,
                           text=True, timeout=10)
        return r.stdout.strip()
    return ""


def named(destroy_data: str | None) -> list[str]:
    """The devices (paths or serials) a --destroy-data value names: one, or several
    separated by commas (for runs over several drives)."""
    return [x.strip() for x in (destroy_data or "").split(",") if x.strip()]


def names_device(destroy_data: str | None, dev: BlockDev) -> bool:
    ser = None
    for d in named(destroy_data):
        if d.startswith("/"):
            if os.path.realpath(d) == dev.real:
                return True
        else:
            ser = serial_of(dev.name) if ser is None else ser
            if ser and d == ser:
                return True
    return False


def names_file(destroy_data: str | None, real: str) -> bool:
    return any(os.path.realpath(d) == real for d in named(destroy_data))


def open_exclusive(path: str) -> int:
    """An O_EXCL descriptor on the device: the kernel then refuses mounts and other
    exclusive users while we run. Raises UnsafeTarget when someone already holds it."""
    try:
        return os.open(path, os.O_RDONLY | os.O_EXCL | os.O_CLOEXEC)
    except OSError as e:
        if e.errno == errno.EBUSY:
            raise UnsafeTarget(
                f"refusing {path}: it is in use (mounted, part of a RAID/LVM/dm device, or held open "
                "exclusively by another program); stop that use first") from None
        raise


def check_block_write(path: str, destroy_data: str | None) -> BlockDev:
    """Raise UnsafeTarget when writing `path` is not allowed; return the device otherwise."""
    dev = resolve_block(path)
    if root_in(dev.tree):
        raise UnsafeTarget(f"refusing {path}: it holds the root filesystem of this machine")
    m = mounted_in(dev.tree)
    if m:
        what = ", ".join(f"/dev/{n} on {mnt}" for n, mnt in m[:3])
        raise UnsafeTarget(f"refusing {path}: mounted ({what}); unmount it first, then pass "
                           f"--destroy-data={dev.real}")
    s = swaps_in(dev.tree)
    if s:
        raise UnsafeTarget(f"refusing {path}: active swap ({', '.join(s)}); run `swapoff` first")
    hold = sorted({h for n in dev.tree for h in holders(n)})
    if hold:
        raise UnsafeTarget(
            f"refusing {path}: in use by {', '.join('/dev/' + h for h in hold)} (LVM, MD RAID or "
            "dm-crypt); deactivate it (vgchange -an / mdadm --stop / cryptsetup close) first")
    fd = open_exclusive(path)  # catches other exclusive users (and races with a mount)
    os.close(fd)
    if names_device(destroy_data, dev):
        return dev
    parts = partitions(dev.name)
    sigs = signatures(path)
    if parts or sigs:
        found = []
        if sigs:
            found.append("signatures " + ", ".join(sigs))
        if parts:
            found.append("partitions " + ", ".join(parts))
        if destroy_data:
            raise UnsafeTarget(
                f"refusing {path}: it carries data ({'; '.join(found)}) and --destroy-data="
                f"{destroy_data} names another device; pass --destroy-data={dev.real} (or its serial) "
                "to erase this one")
        raise UnsafeTarget(
            f"refusing {path}: it carries data ({'; '.join(found)}); if you mean to erase it, "
            f"pass --destroy-data={dev.real}")
    return dev


# --------------------------------------------------------------------------- files
def check_file_write(path: str, destroy_data: str | None) -> str:
    """A file target: a regular file (or a new one) in an existing directory. An existing
    file with content that ssdlab did not create needs --destroy-data=PATH."""
    real = os.path.realpath(path)
    parent = os.path.dirname(real) or "."
    if not os.path.isdir(parent):
        raise UnsafeTarget(f"refusing file:{path}: directory {parent} does not exist")
    if os.path.lexists(path):
        st = os.stat(real)
        if not stat.S_ISREG(st.st_mode):
            raise UnsafeTarget(f"refusing file:{path}: not a regular file (use /dev/... for a "
                               "block device)")
        if st.st_size > 0 and not is_ours(real):
            if not names_file(destroy_data, real):
                raise UnsafeTarget(
                    f"refusing file:{path}: the file exists with {st.st_size} bytes that ssdlab did "
                    f"not write; pass --destroy-data={real} to overwrite it")
    return real


def is_ours(path: str) -> bool:
    try:
        return os.getxattr(path, XATTR) == b"1"
    except OSError:
        return False


def mark_ours(path: str) -> None:
    try:
        os.setxattr(path, XATTR, b"1")
    except OSError:
        pass  # filesystems without user xattrs: the next run will ask for --destroy-data


# --------------------------------------------------------------------------- locks
def lock_dir() -> Path:
    for d in (Path("/run/lock"), Path("/var/lock")):
        if d.is_dir() and os.access(d, os.W_OK):
            return d
    return Path(os.environ.get("TMPDIR", "/tmp"))


def lock_path(key: str) -> Path:
    return lock_dir() / f"ssdlab-{hashlib.sha1(key.encode()).hexdigest()[:16]}.lock"


class DeviceLock:
    """One ssdlab run at a time per device (or file): an flock on a lock file named after
    the device number (or the file's real path), holding the owner's pid."""

    def __init__(self, key: str, label: str):
        self.key = key
        self.label = label
        self.path = lock_path(key)
        self.fd: int | None = None

    def acquire(self) -> "DeviceLock":
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as e:
            owner = ""
            try:
                owner = os.pread(fd, 64, 0).decode(errors="replace").strip()
            except OSError:
                pass
            os.close(fd)
            if e.errno in (errno.EWOULDBLOCK, errno.EAGAIN):
                raise DeviceLocked(
                    f"refusing {self.label}: another ssdlab run (pid {owner or '?'}) is using it; "
                    "wait for it to finish") from None
            raise
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        self.fd = fd
        return self

    def release(self) -> None:
        if self.fd is not None:
            try:
                fcntl.flock(self.fd, fcntl.LOCK_UN)
            finally:
                os.close(self.fd)
                self.fd = None

    def __enter__(self) -> "DeviceLock":
        return self.acquire()

    def __exit__(self, *exc) -> None:
        self.release()


def lock_for_block(path: str) -> DeviceLock:
    st = os.stat(path)
    return DeviceLock(f"dev:{os.major(st.st_rdev)}:{os.minor(st.st_rdev)}", path)


def lock_for_file(path: str) -> DeviceLock:
    return DeviceLock(f"file:{os.path.realpath(path)}", f"file:{path}")
