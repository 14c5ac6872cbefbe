"""What may be written. The rule (docs/real-drives.md): a block device is written only
with consent, and never while something uses it.

- Consent: every test that writes a block device needs `--destroy-data=DEVICE` naming
  that device (path, any link to it, or its serial when no other device present has it:
  the namespaces of one NVMe drive and drives behind one USB bridge share theirs; a loop
  device has none, and the file it is set up on is no name of it), blank or not. A device without a
  signature can still hold data (plain dm-crypt, a raw database or backup volume), and a
  signature probe that fails says nothing, so neither counts as consent.
- Refused even with the flag: a device that is read-only, holds the root filesystem, is
  mounted (itself, a partition, or anything stacked on it), is active swap, has devices
  stacked on it (LVM, MD RAID, dm-crypt, loop devices set up on it), is held open for
  writing by another process or exclusively by anyone: stop that use first.
A file target is written only inside its own file, never through another user's link
(safe_path.py); an existing file with content that ssdlab did not create (for this user)
needs `--destroy-data=PATH`, and a file with another name (a hard link: writing it writes
the other name's file too) or a loop device set up on it is refused whatever the flag
says.
The device is the one its path named when the drive was opened (block_dev.py: followed
once; a path given to --destroy-data names it when it leads to the same device number).
Reading needs none of this. One run at a time per device: guard/locks.py.
"""

from __future__ import annotations

import errno
import json
import os
import re
import shutil
import stat
import subprocess
from pathlib import Path

from ... import safe_path
from . import block_dev, inuse
from .block_dev import BlockDev
from .refusal import DeviceLocked as DeviceLocked, UnsafeTarget  # DeviceLocked: callers name safety's

XATTR = "user.ssdlab.target"
SYS_CLASS_BLOCK = inuse.SYS_CLASS_BLOCK


# --------------------------------------------------------------------------- block devices
def _read(p: Path | str, default: str = "") -> str:
    try:
        return Path(p).read_text().strip()
    except OSError:
        return default


def resolve_block(path: str) -> BlockDev:
    """The block device `path` names, followed once (block_dev.py), with what uses it."""
    dev = block_dev.resolve(path)
    dev.tree = inuse.device_tree(dev.name)
    return dev


def signatures(path: str) -> tuple[list[str], str]:
    """Partition tables and filesystem/RAID/LVM signatures on the device (wipefs -n, then
    blkid -p), and "" or why the probe failed: a failed probe says nothing about the data."""
    found: list[str] = []
    why = "neither wipefs nor blkid is installed"
    if shutil.which("wipefs"):
        try:
            r = subprocess.run(["wipefs", "--no-act", "--json", path], capture_output=True,
                               text=True, timeout=30)
            if r.returncode == 0 and not r.stdout.strip():
                return found, ""  # wipefs prints nothing when it finds nothing
            doc = json.loads(r.stdout) if r.returncode == 0 else None
            sigs = doc.get("signatures") if isinstance(doc, dict) else None
            if isinstance(sigs, list):
                for sg in sigs:
                    t = (sg.get("type") if isinstance(sg, dict) else None) or "?"
                    if t not in found:
                        found.append(str(t))
                return found, ""
            err = (r.stderr or "").strip().splitlines()
            why = f"wipefs failed: {err[-1] if err else f'exit {r.returncode}'}"
        except (OSError, subprocess.TimeoutExpired, json.JSONDecodeError) as e:
            why = f"wipefs failed: {e}"
    if shutil.which("blkid"):
        try:
            r = subprocess.run(["blkid", "-p", "-o", "export", path], capture_output=True,
                               text=True, timeout=30)
        except (OSError, subprocess.TimeoutExpired) as e:
            return found, f"{why}; blkid failed: {e}"
        if r.returncode == 0 or r.returncode == 2 and not r.stderr.strip():  # 2: nothing found
            for line in r.stdout.splitlines():
                k, _, v = line.partition("=")
                if k in ("TYPE", "PTTYPE") and v not in found:
                    found.append(v)
            return found, ""
        why = f"{why}; blkid failed (exit {r.returncode})"
    return found, why


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


def serials() -> dict[str, str]:
    """The serial of each whole device present (kernel name -> serial, "" without one);
    a partition is no device of its own here (it has its disk's)."""
    out: dict[str, str] = {}
    try:
        names = sorted(os.listdir(SYS_CLASS_BLOCK))
    except OSError:
        names = []
    for n in names:
        if (SYS_CLASS_BLOCK / n / "partition").exists():
            continue
        out[n] = _read(SYS_CLASS_BLOCK / n / "device" / "serial") or _read(SYS_CLASS_BLOCK / n / "serial")
    if any(not v for v in out.values()) and shutil.which("lsblk"):
        try:
            r = subprocess.run(["lsblk", "-dnro", "NAME,SERIAL"], capture_output=True, text=True, timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            return out
        for line in r.stdout.splitlines():
            name, _, ser = line.partition(" ")
            if not out.get(name, "x"):  # raw output escapes blanks and the like as \xNN
                out[name] = re.sub(r"\\x([0-9a-fA-F]{2})", lambda m: chr(int(m.group(1), 16)), ser).strip()
    return out


def sharing_serial(ser: str, name: str) -> list[str]:
    """The devices present other than `name` whose serial is `ser`."""
    return sorted(n for n, s in serials().items() if s and s == ser and n != name)


def named(destroy_data: str | None) -> list[str]:
    """The devices (paths or serials) a --destroy-data value names: one, or several
    separated by commas (for runs over several drives)."""
    return [x.strip() for x in (destroy_data or "").split(",") if x.strip()]


def names_device(destroy_data: str | None, dev: BlockDev) -> bool:
    """Whether --destroy-data names `dev`. A name through another user's link (one planted
    in /tmp) is refused: it is no consent, as it is no --drive."""
    ser = None
    for d in named(destroy_data):
        if d.startswith("/"):
            try:  # followed as the drive's path is: the same device, whatever names it
                if block_dev.devno_of(d, f"--destroy-data={d}") == dev.devno:
                    return True
            except safe_path.UnsafePath as e:
                raise UnsafeTarget(str(e)) from None
        else:
            ser = serial_of(dev.name) if ser is None else ser
            if ser and d == ser:
                others = sharing_serial(ser, dev.name)
                if others:
                    raise UnsafeTarget(
                        f"refusing {dev.path}: --destroy-data={d} is the serial of more than one device "
                        f"(/dev/{dev.name}, {', '.join('/dev/' + n for n in others[:4])}: namespaces of one "
                        f"drive, or drives behind one bridge), so it names none; pass --destroy-data={dev.real}")
                return True
    return False


def names_file(destroy_data: str | None, real: str) -> bool:
    for d in named(destroy_data):
        try:
            if safe_path.real(d) == real:
                return True
        except safe_path.UnsafePath:
            continue  # a name that leads through another user's link consents to nothing
    return False


def open_exclusive(dev: BlockDev) -> int:
    """An O_EXCL descriptor on the device: the kernel then refuses mounts and other
    exclusive users while we run. Raises UnsafeTarget when someone already holds it, or
    when its node is no longer the device checked."""
    dev.still()
    try:
        fd = os.open(dev.real, os.O_RDONLY | os.O_EXCL | os.O_CLOEXEC | os.O_NOFOLLOW)
    except OSError as e:
        if e.errno == errno.EBUSY:
            raise UnsafeTarget(
                f"refusing {dev.path}: it is in use (mounted, part of a RAID/LVM/dm device, or held open "
                "exclusively by another program); stop that use first") from None
        raise
    if os.fstat(fd).st_rdev != dev.rdev():  # swapped between the check and the open
        os.close(fd)
        raise dev.moved()  # the descriptor is closed: never handed back
    return fd


def in_use(path: str, dev: BlockDev) -> str:
    """Why the device may not be written whatever the flag says ("" when nothing uses it)."""
    if inuse.read_only(dev.name):
        return (f"refusing {path}: the device is read-only (/sys/class/block/{dev.name}/ro = 1); "
                "a write test needs a writable device")
    if inuse.root_in(dev.tree):
        return f"refusing {path}: it holds the root filesystem of this machine"
    m = inuse.mounted_in(dev.tree)
    if m:
        what = ", ".join(f"/dev/{n} on {mnt}" for n, mnt in m[:3])
        return f"refusing {path}: mounted ({what}); unmount it first"
    s = inuse.swaps_in(dev.tree)
    if s:
        return f"refusing {path}: active swap ({', '.join(s)}); run `swapoff` first"
    loops = [n for n in inuse.stacked(dev.name, dev.tree) if n.startswith("loop")]
    if loops:
        what = ", ".join("/dev/" + n for n in loops)
        return f"refusing {path}: loop device {what} is set up on it; detach it first (losetup -d)"
    hold = sorted({h for n in dev.tree for h in inuse.holders(n)})
    if hold:
        return (f"refusing {path}: in use by {', '.join('/dev/' + h for h in hold)} (LVM, MD RAID or "
                "dm-crypt); deactivate it (vgchange -an / mdadm --stop / cryptsetup close) first")
    w = inuse.writers(dev.tree | inuse.whole_disk(dev.name))  # a partition: its disk too
    if w:
        what = ", ".join(f"pid {pid} ({comm}) on /dev/{n}" for pid, comm, n in w[:3])
        return f"refusing {path}: open for writing by another process ({what}); stop it first"
    for alias in inuse.loop_aliases(dev.name):  # the same file under another loop device
        why = alias_in_use(alias)
        if why:
            return (f"refusing {path}: /dev/{alias} is set up on the same file and {why}; stop that use "
                    "first (or detach it: losetup -d)")
    return ""


def alias_in_use(name: str) -> str:
    """How a loop device holding the same data as the device under test is used ("" when
    it is not): mounted, swap, stacked on, written by a process, or held exclusively (by
    a mount, an assembly, another ssdlab run)."""
    tree = inuse.device_tree(name)
    m = inuse.mounted_in(tree)
    if m:
        return "is mounted (" + ", ".join(f"/dev/{n} on {mnt}" for n, mnt in m[:3]) + ")"
    if inuse.swaps_in(tree):
        return "is active swap"
    hold = sorted({h for n in tree for h in inuse.holders(n)} | set(inuse.stacked(name, tree)))
    if hold:
        return f"is in use by {', '.join('/dev/' + h for h in hold)}"
    w = inuse.writers(tree)
    if w:
        return f"is open for writing by pid {w[0][0]} ({w[0][1]})"
    try:
        os.close(os.open(f"/dev/{name}", os.O_RDONLY | os.O_EXCL | os.O_CLOEXEC))
    except OSError as e:
        if e.errno == errno.EBUSY:
            return "is held exclusively (mounted, assembled, or under test by another run)"
    return ""


def check_block_write(device: BlockDev | str, destroy_data: str | None) -> BlockDev:
    """Raise UnsafeTarget when writing the device (resolved once: a BlockDev, or a path
    resolved now) is not allowed; return the device otherwise."""
    dev = block_dev.resolve(device) if isinstance(device, str) else device
    dev.tree = inuse.device_tree(dev.name)  # what uses it now
    path = dev.path
    why = in_use(path, dev)
    if why:
        raise UnsafeTarget(why)
    fd = open_exclusive(dev)  # catches other exclusive users (and races with a mount)
    os.close(fd)
    if names_device(destroy_data, dev):
        return dev
    parts = inuse.partitions(dev.name)
    sigs, failed = signatures(dev.real)
    found = []
    if sigs:
        found.append("signatures " + ", ".join(sigs))
    if parts:
        found.append("partitions " + ", ".join(parts))
    if failed:
        found.append(f"its contents are unknown: {failed}")
    if not found:
        found.append("no signature found, which does not mean it holds no data")
    what = f"refusing {path}: writing destroys its data ({'; '.join(found)})"
    if destroy_data:
        backing = backing_named(destroy_data, dev)
        if backing:
            raise UnsafeTarget(f"{what}; --destroy-data={backing} is the file {path} is set up on, "
                               f"not the device written: pass {consent(dev)} to erase it")
        raise UnsafeTarget(f"{what} and --destroy-data={destroy_data} names another device; pass "
                           f"{consent(dev)} to erase this one")
    raise UnsafeTarget(f"{what}; if you mean to erase it, pass {consent(dev)}")


def consent(dev: BlockDev) -> str:
    """What to type to let ssdlab write `dev`: --destroy-data with its path, or with its
    serial when it has one (a loop device has none: its backing file is another file)."""
    ser = serial_of(dev.name)
    if ser and re.fullmatch(r"[A-Za-z0-9._:-]+", ser) and not ser.startswith("/") and \
            not sharing_serial(ser, dev.name):
        return f"--destroy-data={dev.real} (or its serial: --destroy-data={ser})"
    return f"--destroy-data={dev.real}"


def backing_named(destroy_data: str | None, dev: BlockDev) -> str:
    """The --destroy-data value that names the file the loop device `dev` is set up on
    ("" when none does)."""
    backing = _read(SYS_CLASS_BLOCK / dev.name / "loop" / "backing_file")
    if not backing:
        return ""
    for d in named(destroy_data):
        try:
            if d.startswith("/") and safe_path.real(d) == os.path.realpath(backing):
                return d
        except safe_path.UnsafePath:
            continue
    return ""


# --------------------------------------------------------------------------- files
def check_file_write(path: str, destroy_data: str | None, name: str | None = None) -> str:
    """A file target: a regular file (or a new one) in an existing directory, reached
    through no link of another user and kept in directories no one else can swap it in
    (safe_path). An existing file must be this user's (or root's) with no other name (a
    hard link), and if it has content that ssdlab did not create it needs
    --destroy-data=PATH. `name`: how messages call it (default file:PATH). Returns the
    file's real path."""
    name = name or f"file:{path}"
    try:
        real = safe_path.real(path, name)
        safe_path.check_dirs(real, name)
    except safe_path.UnsafePath as e:
        raise UnsafeTarget(str(e)) from None
    try:
        st = os.lstat(real)
    except FileNotFoundError:
        return real
    if not stat.S_ISREG(st.st_mode):
        raise UnsafeTarget(f"refusing {name}: not a regular file (use /dev/... for a block device)")
    if st.st_uid not in safe_path.trusted_uids():
        raise UnsafeTarget(f"refusing {name}: {real} belongs to uid {st.st_uid}, another user (who could "
                           "replace it with a link while it is written); use a file of your own")
    # refused whatever the flag says first (a loop device, swap, other names): the flag
    # would not help
    why = inuse.file_in_use(st) or other_names(st, real) or read_only(st, real)
    if why:
        raise UnsafeTarget(f"refusing {name}: {why}")
    if st.st_size > 0 and not is_ours(real) and not names_file(destroy_data, real):
        raise UnsafeTarget(
            f"refusing {name}: the file exists with {st.st_size} bytes that ssdlab did "
            f"not write; pass --destroy-data={real} to overwrite it")
    return real


def other_names(st: os.stat_result, real: str) -> str:
    """Why the file `st` (at `real`) may not be written: it has other names (hard links),
    whose files writing it would change too, another user's perhaps ("" when it has one)."""
    if st.st_nlink <= 1:
        return ""
    return (f"{real} has {st.st_nlink} names (hard links): writing it writes the file of every other name "
            "too; remove the other names, or give a copy of it (a file of its own)")


def read_only(st: os.stat_result, real: str) -> str:
    """Why the file `st` (at `real`) may not be written: its owner made it read-only, which
    root's fio and QEMU would not heed, as a read-only device is never written ("" when it
    is writable)."""
    if not st.st_mode & stat.S_IWUSR:
        return (f"{real} is read-only (mode {stat.S_IMODE(st.st_mode):04o}); make it writable "
                f"(chmod u+w {real}) to let ssdlab write it, or give a copy of it")
    if os.statvfs(real).f_flag & os.ST_RDONLY:
        return f"{real} is on a read-only filesystem; give a file on a writable one"
    return ""


def is_ours(path: str) -> bool:
    """Created by ssdlab for this user (the mark is an xattr any owner can set, so a file
    of another user never counts as ours)."""
    try:
        return os.stat(path).st_uid == os.geteuid() and os.getxattr(path, XATTR) == b"1"
    except OSError:
        return False


def mark_ours(file: int | str) -> None:
    """Mark the file (a descriptor of the file just created, or its path) as ssdlab's."""
    try:
        os.setxattr(file, XATTR, b"1", follow_symlinks=False) if isinstance(file, str) else os.setxattr(file, XATTR, b"1")
    except OSError:
        pass  # filesystems without user xattrs: the next run will ask for --destroy-data
