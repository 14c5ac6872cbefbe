"""A drive's volatile write cache, switched as a test's specification asks (SNIA PTS: client
on, enterprise off) and read back: NVMe through feature 06h (nvme-cli), SATA through
hdparm. Not saved (no "save" bit): the drive's own setting returns at its next power cycle,
and the target puts back the state it found when it closes. Other devices (loop, NBD,
virtio, files) have no cache of their own to switch: the kernel's queue/write_cache only
decides whether the kernel sends flushes. A partition's cache is its disk's, shared with
the disk's other partitions: it is left as it is (consent to write one partition is none
to change how the others are written). So is an NVMe namespace's, unless its controller
has room for that namespace alone (`nvme id-ctrl`'s NN = 1, as guard/purge.py decides
whether a format can reach another namespace): feature 06h is the controller's, for every
namespace it has, and a killed run leaves it switched."""

from __future__ import annotations

import re
import shutil
import subprocess
from dataclasses import dataclass

from ..guard import block_dev, inuse, purge

NVME_FEATURE = "6"  # Volatile Write Cache (NVMe base specification, Set/Get Features 06h)


@dataclass(frozen=True)
class Route:
    """How this drive's cache is read and set; `why` says why it cannot be, when so."""

    tool: str  # "nvme", "hdparm" or "" (not switchable)
    dev: str
    why: str = ""

    def read_cmd(self) -> list[str]:
        return (["nvme", "get-feature", self.dev, "-f", NVME_FEATURE] if self.tool == "nvme"
                else ["hdparm", "-W", self.dev])

    def set_cmd(self, on: bool) -> list[str]:
        # a controller's feature, not a namespace's: the namespace's own id is refused
        # ("Feature Not Namespace Specific"), all namespaces (FFFFFFFFh) is taken
        return (["nvme", "set-feature", self.dev, "-f", NVME_FEATURE, "-n", "0xffffffff", "-v", str(int(on))]
                if self.tool == "nvme" else ["hdparm", f"-W{int(on)}", self.dev])


def route(dev: str, kind: str) -> Route:
    """kind: the device's kind as the identity reads it (nvme, sd, loop, nbd, ...)."""
    if kind in ("nvme", "sd") and inuse.is_partition(block_dev.kernel_name(dev)):
        return Route("", dev, "a partition: the write cache is its disk's, shared with the disk's other "
                              "partitions, and is left as it is")
    if kind == "nvme":
        tool = "nvme"
    elif kind == "sd":
        tool = "hdparm"
    else:
        return Route("", dev, f"a {kind or 'file'} target has no volatile write cache of its own to switch")
    if not shutil.which(tool):
        pkg = "nvme-cli" if tool == "nvme" else "hdparm"
        return Route("", dev, f"{tool} not installed (apt-get install {pkg})")
    if tool == "nvme" and not purge.nvme_alone(dev, ctrl := purge.id_ctrl(dev), False):
        nn = purge.nvme_namespace_room(ctrl)
        room = (f"with room for {nn} namespaces and others attached or not told apart (nvme list-ns)" if nn
                else "that does not say how many namespaces it has room for (nvme id-ctrl)")
        return Route("", dev, f"a namespace of a controller {room}: the write cache is the controller's, "
                              "shared with its other namespaces, and is left as it is")
    return Route(tool, dev)


def parse(tool: str, text: str) -> bool | None:
    """The cache's state from the tool's answer, None when it says nothing readable.
    nvme-cli: "get-feature:0x06 (Volatile Write Cache), Current value:0x00000001" (or
    "...value:00000000", hexadecimal either way);
    hdparm: " write-caching =  1 (on)"."""
    if tool == "nvme":
        m = re.search(r"[Cc]urrent value:\s*(?:0x)?([0-9a-fA-F]+)", text)
        return None if m is None else bool(int(m.group(1), 16) & 1)  # bit 0: WCE
    m = re.search(r"write-caching\s*=\s*(\d)", text)
    return None if m is None else m.group(1) == "1"


def _run(cmd: list[str]) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)


def read(r: Route) -> bool | None:
    if not r.tool:
        return None
    res = _run(r.read_cmd())
    return parse(r.tool, res.stdout + res.stderr) if res.returncode == 0 else None


def switch(r: Route, on: bool) -> tuple[bool | None, str]:
    """Set the cache and read it back: (the state read back, why it is not `on` or "")."""
    if not r.tool:
        return None, r.why
    res = _run(r.set_cmd(on))
    if res.returncode != 0:
        msg = (res.stderr or res.stdout).strip().splitlines()
        return read(r), f"`{' '.join(r.set_cmd(on))}` failed: {msg[-1] if msg else f'exit {res.returncode}'}"
    now = read(r)
    return now, "" if now == on else "the drive reads back another state than was set"
