"""Where a FioTarget's I/O goes: a local block device, a file, or an NBD export (fio/nbd.py).

fio drives all three with the same jobs; what differs lives here, behind one small
interface (like fio's own ioengine ops): how the target is named in a job and which engine
reaches it, what may be written and what has to be claimed first, how a range is trimmed
and the whole target purged, what identifies it, and what it adds to a phase's results.
FioTarget holds one Transport and never asks what kind it is."""

from __future__ import annotations

import os
import stat
from typing import Any

from ... import safe_path
from ...phase import Identity, PhaseResult
from ..guard import locks, purge as purge_mod, safety
from .identity import Telemetry, block_info
from ..spec import DriveSpec


class Transport:
    """The defaults are those of a local file or device; see each subclass."""

    kind: str  # "block" | "file" | "nbd": the Identity kind
    path: str  # as the user named it
    dev: str  # what is opened (device node, real file path, socket or URI)
    capacity: int
    info: dict[str, Any]
    telemetry: Telemetry
    engine: str | None = None  # the one engine that reaches it; None: fio_job.pick_engine
    is_file = False  # a regular file (fio's job options differ)
    batches = True  # consecutive io phases may run as one fio process (fio/batch.py)

    def lock(self) -> locks.DeviceLock:
        raise NotImplementedError

    def identity(self, extra: dict[str, Any]) -> Identity:
        raise NotImplementedError

    def check_writes(self, destroy_data: str | None) -> None:
        """Raise safety.UnsafeTarget when writing is not allowed (nothing is held)."""
        raise NotImplementedError

    def claim_writes(self, destroy_data: str | None) -> None:
        """check_writes, then hold what a writing run must hold."""
        self.check_writes(destroy_data)

    def prepare_read(self, destroy_data: str | None) -> None:
        """Make the target readable (a file target that does not exist yet)."""

    def filename(self) -> str:
        """The target as a job names it (`filename=`, or `uri=` for the nbd engine)."""
        return self.dev

    def plan_header(self, may_write: bool = False) -> list[str]:
        """What `--plan` says of the target first (`may_write`: the run's consent is given)."""
        return []

    def can_trim(self) -> bool:
        return True

    def trim_command(self, offset: int, length: int) -> list[str]:
        raise NotImplementedError

    def purge_plan(self) -> purge_mod.PurgePlan:
        raise NotImplementedError

    def io_started(self) -> object:
        """Called as an io phase starts; its value goes back to io_done."""
        return None

    def io_done(self, result: PhaseResult, token: object) -> None:
        """Add what the transport knows of the phase to its result."""

    def close(self) -> None:
        """Let go of what claim_writes holds."""


class LocalBlock(Transport):
    """A block device of this host: written only with --destroy-data naming it, and held
    with O_EXCL while the run writes (no mount or other exclusive user meanwhile) and its
    lock exclusive (no run of another user reads it meanwhile: guard/device_lock.py)."""

    kind = "block"

    def __init__(self, path: str, plan: bool):
        self.path = path
        try:  # the one resolution: everything below uses it, never the path again
            self.block = safety.resolve_block(path)
        except safety.UnsafeTarget as e:
            hint = "; give one --drive for each drive" if "," in path and "no such device" in str(e) else ""
            raise safety.UnsafeTarget(f"{e}{hint}") from None
        self.info = block_info(self.block)
        self.capacity = int(self.info["capacity"])
        self.dev = self.block.real  # /dev/NAME: what fio and every tool is given
        self.telemetry = Telemetry(self.dev, "file" if plan else self.info.get("kind", "file"))
        self._excl_fd: int | None = None
        self._lock: locks.BlockLock | None = None

    def lock(self) -> locks.DeviceLock:
        self._lock = locks.lock_for_block(self.block)
        return self._lock

    def identity(self, extra: dict[str, Any]) -> Identity:
        return Identity(kind="block", model=self.info.get("model") or self.info["name"],
                        capacity=self.capacity, firmware=self.info.get("firmware", ""),
                        serial=self.info.get("serial", ""), extra=extra)

    def check_writes(self, destroy_data: str | None) -> None:
        safety.check_block_write(self.block, destroy_data)

    def claim_writes(self, destroy_data: str | None) -> None:
        self.check_writes(destroy_data)
        if self._lock is None:
            raise safety.UnsafeTarget(f"refusing {self.path}: the drive is not locked (opened to plan only)")
        self._lock.for_writing()  # no run of any user reads it meanwhile
        self._excl_fd = safety.open_exclusive(self.block)  # and its node still the device checked

    def prepare_read(self, destroy_data: str | None) -> None:
        self.block.still()  # what fio reads is the device identified

    def plan_header(self, may_write: bool = False) -> list[str]:
        loop = self.info.get("kind") == "loop" and self.info.get("backing_file")
        named = [("backing file", self.info.get("backing_file"))] if loop else [("serial", self.info.get("serial"))]
        words = [str(self.info.get("model", ""))] + [f"{k} {v}" for k, v in named + [
            ("firmware", self.info.get("firmware"))] if v]  # a loop device has no firmware
        head = [f"# device {self.dev}: {' '.join(words)}"]
        if may_write:  # the consent is given: "writing is allowed" follows
            return head
        return head + [f"# to let a run write it, pass {safety.consent(self.block)}"]

    def can_trim(self) -> bool:
        return bool(self.info.get("discard"))

    def trim_command(self, offset: int, length: int) -> list[str]:
        return purge_mod.blkdiscard(self.dev, offset, length)

    def purge_plan(self) -> purge_mod.PurgePlan:
        return purge_mod.plan_block(self.dev, self.info.get("kind", ""), bool(self.info.get("discard")),
                                    force=True)

    def close(self) -> None:
        if self._excl_fd is not None:
            os.close(self._excl_fd)
            self._excl_fd = None


class LocalFile(Transport):
    """A file of `size` bytes that ssdlab creates (O_EXCL, never through a symlink) or
    that --destroy-data names; it touches nothing but that file."""

    kind = "file"
    is_file = True

    def __init__(self, spec: str, path: str, size: int):
        self.spec, self.path = spec, path
        self.capacity = size
        # through no link of another user, nor one to a missing file (safe_path)
        self.dev = safe_path.real(path, f"file:{path}")
        self.info = {"path": path, "file": self.dev, "kind": "file", "capacity": size}
        self.telemetry = Telemetry(self.dev, "file")
        self._inode_lock: locks.DeviceLock | None = None  # a file this run created: its inode's lock
        self._lock: locks.FileTargetLock | None = None

    def lock(self) -> locks.DeviceLock:
        self._lock = locks.FileTargetLock(self.path)
        return self._lock

    def identity(self, extra: dict[str, Any]) -> Identity:
        st = os.statvfs(os.path.dirname(self.dev) or ".")
        extra["fs_free_bytes"] = st.f_bavail * st.f_frsize
        return Identity(kind="file", model=f"file on {_fs_of(self.dev)}", capacity=self.capacity,
                        firmware="", serial=self.dev, extra=extra)

    def check_writes(self, destroy_data: str | None) -> None:
        if safety.check_file_write(self.dev, destroy_data, f"file:{self.path}") != self.dev:
            raise safety.UnsafeTarget(f"refusing {self.spec}: {self.dev} changed into a symlink since "
                                      "ssdlab opened the drive; look at who else writes there")

    def claim_writes(self, destroy_data: str | None) -> None:
        self.check_writes(destroy_data)
        st = os.statvfs(os.path.dirname(self.dev))
        have = st.f_bavail * st.f_frsize
        if os.path.exists(self.dev):
            have += os.stat(self.dev).st_blocks * 512
        if have < self.capacity:
            raise safety.UnsafeTarget(
                f"refusing {self.spec}: the file needs {self.capacity / 1e9:.3g} GB and its "
                f"filesystem has {have / 1e9:.3g} GB free; choose a smaller SIZE")
        if self._lock is None:
            raise safety.UnsafeTarget(f"refusing {self.spec}: the drive is not locked (opened to plan only)")
        if os.path.lexists(self.dev):
            self._lock.for_writing()  # no run of any user reads or writes it meanwhile
        self._ensure(destroy_data, create=True)
        self._lock.for_writing()  # a file made just now: locked once it is there

    def prepare_read(self, destroy_data: str | None) -> None:
        self._ensure(destroy_data, create=False)
        if self._lock is not None:
            self._lock.shared()  # a file made just now: locked once it is there

    def _ensure(self, destroy_data: str | None, create: bool) -> None:
        exists = os.path.lexists(self.dev)
        size = os.lstat(self.dev).st_size if exists else 0
        if size >= self.capacity:
            return
        if not create:
            # reading a file that is not there yet: creating it writes only the file itself
            self.check_writes(destroy_data)
        # never through a link planted after the check (in the name or any directory above
        # it), and a new file is really new
        flags = os.O_WRONLY | (0 if exists else os.O_CREAT | os.O_EXCL)
        try:
            fd = safe_path.open_real(self.dev, flags, 0o600, f"file:{self.path}")
        except safe_path.UnsafePath as e:
            raise safety.UnsafeTarget(str(e)) from None
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                raise safety.UnsafeTarget(f"refusing {self.spec}: {self.dev} is not a regular file")
            why = safety.other_names(st, self.dev)  # a link made since the check
            if why:
                raise safety.UnsafeTarget(f"refusing {self.spec}: {why}")
            os.ftruncate(fd, self.capacity)
            if not exists:
                safety.mark_ours(fd)
                # the run's lock was taken on the name (there was no file yet): another run
                # reaching this file by another name (a hard link) now finds it locked too
                self._inode_lock = locks.lock_for_file(self.dev).acquire()
        finally:
            os.close(fd)

    def close(self) -> None:
        if self._inode_lock is not None:
            self._inode_lock.release()
            self._inode_lock = None

    def trim_command(self, offset: int, length: int) -> list[str]:
        return ["fallocate", "--punch-hole", "--offset", str(offset), "--length", str(length), self.dev]

    def purge_plan(self) -> purge_mod.PurgePlan:
        return purge_mod.plan_file(self.dev, self.capacity)


def local(spec: DriveSpec, plan: bool) -> Transport:
    """The transport of a block device or a file target."""
    if spec.kind == "device":
        return LocalBlock(spec.path, plan)
    if spec.kind != "file" or spec.size is None:
        raise ValueError(f"drive '{spec}': a real drive is /dev/... or file:PATH:SIZE")
    return LocalFile(spec.text, spec.path, spec.size)


def _fs_of(path: str) -> str:
    best, fs = "", "?"
    try:
        for line in open("/proc/self/mounts"):
            p = line.split()
            if len(p) >= 3 and (path == p[1] or path.startswith(p[1].rstrip("/") + "/")) and len(p[1]) >= len(best):
                best, fs = p[1], f"{p[2]} ({p[0]} at {p[1]})"
    except OSError:
        pass
    return fs
