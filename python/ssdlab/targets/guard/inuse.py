"""What uses a block device: its partitions, devices stacked on it (dm, md, and loop
devices, which sysfs does not list as holders), mounts, swap, the root filesystem and
other processes holding it open for writing. All read from sysfs and /proc; nothing here
opens the device for writing."""

from __future__ import annotations

import fcntl
import os
import stat
import struct
from pathlib import Path

SYS_CLASS_BLOCK = Path("/sys/class/block")
SYS_BLOCK = Path("/sys/block")
LOOP_GET_STATUS64 = 0x4C05
# struct loop_info64: lo_device, lo_inode, lo_rdevice (u64 each) come first
_LOOP_INFO64_SIZE = 232


def _read(p: Path | str, default: str = "") -> str:
    try:
        return Path(p).read_text().strip()
    except OSError:
        return default


def devno_str(rdev: int) -> str:
    return f"{os.major(rdev)}:{os.minor(rdev)}"


def devno_of(name: str) -> str:
    return _read(SYS_CLASS_BLOCK / name / "dev")


def is_partition(name: str) -> bool:
    """Whether the block device of kernel name `name` is a partition of a disk."""
    return (SYS_CLASS_BLOCK / name / "partition").exists()


def partitions(name: str) -> list[str]:
    out = []
    try:
        for child in (SYS_CLASS_BLOCK / name).iterdir():
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


def _loop_status(loop: str) -> tuple[int, int, int] | None:
    """The kernel's record of what a loop device is set up on (LOOP_GET_STATUS64):
    (device of the backing file's filesystem, its inode, its rdev), the device numbers
    in the kernel's encoding; None when the device cannot be opened (not root) or is free."""
    try:
        fd = os.open(f"/dev/{loop}", os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        buf = fcntl.ioctl(fd, LOOP_GET_STATUS64, bytes(_LOOP_INFO64_SIZE))
        dev, ino, rdev = struct.unpack_from("=QQQ", buf)
        return dev, ino, rdev
    except OSError:
        return None
    finally:
        os.close(fd)


def _kernel_devno(dev: int) -> str:
    """maj:min of a device number in the kernel's encoding (huge_encode_dev)."""
    return f"{(dev >> 8) & 0xfff}:{(dev & 0xff) | ((dev >> 12) & 0xfff00)}"


def _backing_path_stat(loop: str) -> os.stat_result | None:
    """The backing file named in sysfs (may be stale: a renamed or replaced file)."""
    path = _read(SYS_BLOCK / loop / "loop" / "backing_file")
    if path.endswith(" (deleted)"):
        return None
    try:
        return os.stat(path) if path else None
    except OSError:
        return None


def loop_backing_devno(loop: str) -> str:
    """maj:min of the block device a loop device is set up on ("" for a file or when
    unknown). The kernel's own record (LOOP_GET_STATUS64: the backing inode's rdev) is
    tried first; the backing file's path in sysfs, which may be stale, second."""
    status = _loop_status(loop)
    if status is not None and status[2]:
        return devno_str(status[2])
    st = _backing_path_stat(loop)
    return devno_str(st.st_rdev) if st and stat.S_ISBLK(st.st_mode) else ""


def loop_backing_file(loop: str) -> tuple[str, int] | None:
    """(maj:min of its filesystem, inode) of the regular file a loop device is set up on;
    None for a device, a free loop device or when unknown."""
    status = _loop_status(loop)
    if status is not None:
        dev, ino, rdev = status
        return (_kernel_devno(dev), ino) if ino and not rdev else None
    st = _backing_path_stat(loop)
    return (devno_str(st.st_dev), st.st_ino) if st and stat.S_ISREG(st.st_mode) else None


def _set_up_loops() -> list[str]:
    try:
        return sorted(p.name for p in SYS_BLOCK.iterdir()
                      if p.name.startswith("loop") and (p / "loop").exists())
    except OSError:
        return []


def loops_over_file(st: os.stat_result) -> list[str]:
    """Loop devices set up on the file whose stat is `st` (its inode, whatever its name)."""
    key = (devno_str(st.st_dev), st.st_ino)
    return [lp for lp in _set_up_loops() if loop_backing_file(lp) == key]


def loop_aliases(loop: str) -> list[str]:
    """Other loop devices set up on the same file as `loop` (a loop device, or a partition
    of one): the same data by other names. A partition's own disk is no alias: it is
    checked as any disk is for its partitions."""
    key = loop_backing_file(loop) if loop.startswith("loop") else None
    if key is None:
        return []
    own = {loop} | whole_disk(loop)
    return [lp for lp in _set_up_loops() if lp not in own and loop_backing_file(lp) == key]


def file_in_use(st: os.stat_result) -> str:
    """Why a file target may not be written whatever the flag says ("" when nothing uses
    it): a loop device set up on it is a block device that may be mounted or tested, and
    an active swap file is the kernel's (it refuses the writes)."""
    loops = loops_over_file(st)
    if loops:
        return (f"loop device {', '.join('/dev/' + n for n in loops)} is set up on it; detach it "
                "first (losetup -d)")
    for name in _swap_names():
        try:
            sw = os.stat(name)
        except OSError:
            continue
        if stat.S_ISREG(sw.st_mode) and (sw.st_dev, sw.st_ino) == (st.st_dev, st.st_ino):
            return f"it is active swap ({name}); run `swapoff {name}` first"
    return ""


def _swap_names() -> list[str]:
    """The devices and files in /proc/swaps (blanks in names as the kernel escapes them)."""
    return [line.split()[0].replace("\\040", " ")
            for line in _read("/proc/swaps").splitlines()[1:] if line.split()]


def loops_on(names: set[str]) -> list[str]:
    """Loop devices set up on any of the devices `names` (kernel names)."""
    nums = {devno_of(n) for n in names} - {""}
    return [lp for lp in _set_up_loops() if lp not in names and loop_backing_devno(lp) in nums]


def device_tree(name: str) -> set[str]:
    """The device, its partitions and everything stacked on any of them: dm and md
    devices (sysfs holders) and loop devices set up on them."""
    seen: set[str] = set()
    todo = [name]
    while todo:
        n = todo.pop()
        if n in seen:
            continue
        seen.add(n)
        todo.extend(partitions(n))
        todo.extend(holders(n))
        todo.extend(loops_on({n}))
    return seen


def stacked(name: str, tree: set[str]) -> list[str]:
    """Members of `tree` that sit on top of `name` (not itself, not its partitions)."""
    own = {name, *partitions(name)}
    return sorted(tree - own)


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
    return devno_str(st.st_rdev) if stat.S_ISBLK(st.st_mode) else ""


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
    nums = {devno_of(n) for n in tree} - {""}
    hits = []
    for name in _swap_names():
        if _source_devno(name) in nums:
            hits.append(name)
    return hits


def root_in(tree: set[str]) -> bool:
    nums = {devno_of(n) for n in tree} - {""}
    if devno_str(os.stat("/").st_dev) in nums:
        return True
    return any(mnt == "/" and (majmin in nums or _source_devno(src) in nums)
               for majmin, mnt, src in _mountinfo())


def whole_disk(name: str) -> set[str]:
    """The disk a partition is part of (empty for a whole device): what is written to the
    disk is written to the partition too."""
    if not (SYS_CLASS_BLOCK / name / "partition").exists():
        return set()
    return {(SYS_CLASS_BLOCK / name).resolve().parent.name}


def read_only(name: str) -> bool:
    """The kernel refuses writes (`losetup -r`, a write-protected card, `blockdev --setro`)."""
    if _read(SYS_CLASS_BLOCK / name / "ro") == "1":
        return True
    if (SYS_CLASS_BLOCK / name / "partition").exists():  # a partition of a read-only disk
        return _read((SYS_CLASS_BLOCK / name).resolve().parent / "ro") == "1"
    return False


def writers(tree: set[str]) -> list[tuple[int, str, str]]:
    """(pid, command, kernel name) of other processes holding a device of the tree open
    for writing (a VM's raw disk, dd, a database on a raw volume), or the file a loop
    device of the tree is set up on (the device's data: a VM using the image, another
    run testing it as a file target). Processes we may not inspect are not seen; the
    exclusive open and the consent flag cover the rest."""
    nums = {devno_of(n): n for n in tree}
    nums.pop("", None)
    files: dict[tuple[str, int], str] = {}  # a loop device's file -> how messages name it
    for n in tree:
        key = loop_backing_file(n) if n.startswith("loop") else None
        if key:
            files[key] = f"{n}'s file"
    me = os.getpid()
    out = []
    try:
        pids = [int(p) for p in os.listdir("/proc") if p.isdigit()]
    except OSError:
        return []
    for pid in pids:
        if pid == me:
            continue
        fd_dir = f"/proc/{pid}/fd"
        try:
            fds = os.listdir(fd_dir)
        except OSError:
            continue
        for fd in fds:
            try:
                st = os.stat(f"{fd_dir}/{fd}")
            except OSError:
                continue
            if stat.S_ISBLK(st.st_mode):
                held = nums.get(devno_str(st.st_rdev))
            elif stat.S_ISREG(st.st_mode) and files:
                held = files.get((devno_str(st.st_dev), st.st_ino))
            else:
                continue
            if held is None:
                continue
            flags = 0
            for line in _read(f"/proc/{pid}/fdinfo/{fd}").splitlines():
                if line.startswith("flags:"):
                    flags = int(line.split()[1], 8)
            if flags & os.O_ACCMODE in (os.O_WRONLY, os.O_RDWR):
                out.append((pid, _read(f"/proc/{pid}/comm", "?"), held))
                break
    return out
