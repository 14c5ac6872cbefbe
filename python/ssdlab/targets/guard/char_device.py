"""What to say of a --drive that is a character device: an NVMe controller's node
(/dev/nvme0) or a namespace's generic node (/dev/ng0n1) is a device a user of an NVMe drive
meets beside its namespaces' block devices (/dev/nvme0n1), and the way to the block device
is what the refusal gives, not "use a file"."""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

SYS_DEV_CHAR = Path("/sys/dev/char")
SYS_CLASS_BLOCK = Path("/sys/class/block")


def _subsystem(node: Path) -> str:
    try:
        return os.path.basename(os.path.realpath(node / "subsystem"))
    except OSError:
        return ""


def _namespaces(ctrl: str) -> list[str]:
    """The block devices of the controller named `ctrl` (nvme0 -> nvme0n1, nvme0n2 ...),
    as the kernel names them: nvme<instance>n<namespace>; partitions left out."""
    pat = re.compile(rf"{re.escape(ctrl)}n\d+")
    try:
        names = os.listdir(SYS_CLASS_BLOCK)
    except OSError:
        return []
    return sorted((n for n in names if pat.fullmatch(n)), key=lambda n: int(n.rsplit("n", 1)[1]))


def not_block(path: str, st: os.stat_result) -> str:
    """The one-line refusal of `path`, whose stat `st` is no block device's."""
    if not stat.S_ISCHR(st.st_mode):
        return f"{path} is not a block device; for a file use file:PATH:SIZE"
    node = SYS_DEV_CHAR / f"{os.major(st.st_rdev)}:{os.minor(st.st_rdev)}"
    name = os.path.basename(os.path.realpath(node)) if node.exists() else os.path.basename(path)
    sub = _subsystem(node)
    if sub == "nvme" and re.fullmatch(r"nvme\d+", name):
        ns = _namespaces(name)
        # none named after it: a multipath controller's namespaces take its subsystem's number
        which = (f"its namespaces here: {', '.join('/dev/' + n for n in ns[:4])}" if ns
                 else "`nvme list` shows them")
        return (f"{path} is not a block device: it is the NVMe controller {name}'s character device; "
                f"give a namespace's block device ({which})")
    m = re.fullmatch(r"ng(\d+)n(\d+)", name)
    if sub == "nvme-generic" and m:
        blk = f"nvme{m.group(1)}n{m.group(2)}"
        which = (f"--drive /dev/{blk}" if (SYS_CLASS_BLOCK / blk).exists()
                 else "its /dev/nvmeXnY, as `nvme list` shows")
        return (f"{path} is not a block device: it is an NVMe namespace's generic character device; "
                f"give the namespace's block device ({which})")
    return f"{path} is not a block device but a character device; give a block device (`lsblk` lists them)"
