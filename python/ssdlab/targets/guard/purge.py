"""Purge: put a real drive back to a known (empty) state with the strongest method the
device and the installed tools allow, and say which one was used.

Strongest first:
1. `nvme-format-crypto`: NVMe Format with Secure Erase Settings = 2 (cryptographic erase:
   the media encryption key is replaced), when the controller supports it.
2. `nvme-format-user-data`: NVMe Format with SES = 1 (user data erase: every block
   erased, mapping reset).
3. `ata-security-erase`: ATA SECURITY ERASE UNIT through hdparm (sets a temporary
   password, erases, and the drive clears the password), when supported and not frozen.
4. `blkdiscard`: discard (TRIM/deallocate) of the whole device: the FTL drops every
   mapping; the cells are erased later by GC, not immediately.
5. `punch-hole` (file targets): deallocate the whole file (fallocate --punch-hole).
6. `none`: nothing available; the run records that the drive was not reset.

A purge erases the device it was given and nothing else. An ATA erase and an NVMe Format
act on the whole disk or namespace, so a partition is purged by a discard (which the
kernel keeps inside the partition's range), and an NVMe namespace is formatted only when
the format cannot reach another namespace: the controller has room for one only, or it
says a format and a secure erase apply to the namespace named (FNA bits 0 and 1 clear).
A format keeps the namespace's format (LBA format, protection information): a purge resets
a drive's state, not how it is set up.
"""

from __future__ import annotations

import json
import shutil
from functools import lru_cache
import subprocess
from dataclasses import dataclass, field

from . import inuse
from .block_dev import kernel_name

METHODS = ("nvme-format-crypto", "nvme-format-user-data", "ata-security-erase", "blkdiscard",
           "punch-hole", "none", "nbd-trim", "remote-trim")
# numeric code stored in totals["purge_method_code"] (index in METHODS + 1)
CODES = {m: i + 1 for i, m in enumerate(METHODS)}
ATA_PASS = "ssdlab"


@dataclass
class PurgePlan:
    method: str
    commands: list[list[str]] = field(default_factory=list)
    why: str = ""

    @property
    def code(self) -> int:
        return CODES[self.method]


def _out(cmd: list[str], timeout: float = 20.0) -> str:
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout).stdout
    except (OSError, subprocess.TimeoutExpired):
        return ""


FNA_FORMAT_ALL = 0x1  # Format NVM applies to every namespace of the subsystem
FNA_ERASE_ALL = 0x2  # a secure erase (SES 1 or 2) applies to every namespace
FNA_CRYPTO = 0x4  # cryptographic erase supported
# how long a purge command may take: a user-data erase of a large drive can outlast
# nvme-cli's own format timeout (10 minutes), after which the kernel aborts the command
# and resets the controller, so the format is given this wait too
PURGE_WAIT_S = 4 * 3600


def id_ctrl(dev: str) -> dict:
    """`nvme id-ctrl` of the controller of `dev` ({} when nvme-cli cannot say)."""
    return _identify("id-ctrl", dev)


def id_ns(dev: str) -> dict:
    """`nvme id-ns` of namespace `dev` ({} when nvme-cli cannot say)."""
    return _identify("id-ns", dev)


def _identify(what: str, dev: str) -> dict:
    if not shutil.which("nvme"):
        return {}
    try:
        doc = json.loads(_out(["nvme", what, dev, "-o", "json"]) or "{}")
    except json.JSONDecodeError:
        return {}
    return doc if isinstance(doc, dict) else {}


def nvme_format_as_is(doc: dict) -> list[str] | None:
    """The `nvme format` options that keep namespace `dev`'s format as `nvme id-ns` (`doc`)
    reports it: its LBA format, protection information type and location, and whether
    metadata is interleaved (FLBAS, DPS). nvme-cli keeps only the LBA format by itself and
    sets no protection information unless told: a format would switch a namespace's
    end-to-end protection off. None when id-ns does not say."""
    flbas, dps = doc.get("flbas"), doc.get("dps")
    if not isinstance(flbas, int) or isinstance(flbas, bool) or not isinstance(dps, int) or isinstance(dps, bool):
        return None
    lbaf = flbas & 0xF
    if _int(doc.get("nlbaf", 0)) >= 16:  # more than 16 formats: FLBAS bits 6:5 are the index's upper bits
        lbaf |= ((flbas >> 5) & 0x3) << 4
    return [f"--lbaf={lbaf}", f"--pi={dps & 0x7}", f"--pil={(dps >> 3) & 0x1}", f"--ms={(flbas >> 4) & 0x1}"]


def _int(v: object) -> int:
    try:
        return int(str(v), 0)
    except ValueError:
        return 0


def nvme_ses_support(doc: dict) -> tuple[bool, bool]:
    """(user-data erase, crypto erase) support from `nvme id-ctrl`'s OACS and FNA fields."""
    fmt = bool(_int(doc.get("oacs", 0)) & 0x2)  # Format NVM supported
    return (fmt, fmt and bool(_int(doc.get("fna", 0)) & FNA_CRYPTO))


def nvme_namespace_room(doc: dict) -> int:
    """How many namespaces the controller has room for (`nvme id-ctrl`'s NN, the largest
    namespace id; 0 when it does not say)."""
    return _int(doc.get("nn", 0))


def nvme_namespaces(dev: str, allocated: bool) -> list[int] | None:
    """The namespace ids `nvme list-ns` gives for the controller of `dev`: those attached to
    it (active), or with `allocated` every namespace of its subsystem, attached or not
    (Identify CNS 10h, which a controller without namespace management may refuse). None
    when nvme-cli cannot say. Its JSON: {"nsid_list": [{"nsid": 1}, ...]}."""
    if not shutil.which("nvme"):
        return None
    try:
        doc = json.loads(_out(["nvme", "list-ns", dev, "-o", "json", *(["--all"] if allocated else [])]) or "null")
    except json.JSONDecodeError:
        return None
    rows = doc.get("nsid_list") if isinstance(doc, dict) else None
    if not isinstance(rows, list):
        return None
    ids = [r.get("nsid") if isinstance(r, dict) else None for r in rows]
    if not all(isinstance(i, int) and not isinstance(i, bool) for i in ids):
        return None
    return [int(i) for i in ids if i is not None]


def nvme_nsid(dev: str) -> int | None:
    """The namespace id of block device `dev` (sysfs's nsid attribute; None if unknown)."""
    try:
        return int((inuse.SYS_CLASS_BLOCK / kernel_name(dev) / "nsid").read_text())
    except (OSError, ValueError):
        return None


def nvme_alone(dev: str, doc: dict, allocated: bool) -> bool:
    """Whether namespace `dev` is the only one a controller-wide command could reach: the
    controller (`nvme id-ctrl` `doc`) has room for one namespace (NN = 1), or `nvme list-ns`
    names this one alone (attached to the controller; with `allocated`, in the subsystem).
    False whenever that cannot be told: the cautious answer."""
    if nvme_namespace_room(doc) == 1:
        return True
    own = nvme_nsid(dev)
    return own is not None and nvme_namespaces(dev, allocated) == [own]


def nvme_format_reaches_others(dev: str, doc: dict) -> bool:
    """Whether a Format with secure erase of namespace `dev` could erase another namespace
    too: the controller (`nvme id-ctrl`) applies it to every namespace of its subsystem
    (FNA bit 0 or 1) and this one is not the only one there can be or that the subsystem
    holds."""
    return bool(_int(doc.get("fna", 0)) & (FNA_FORMAT_ALL | FNA_ERASE_ALL)) and not nvme_alone(dev, doc, True)


def ata_erase_state(hdparm_i: str) -> tuple[bool, bool, bool]:
    """(supported, frozen, enabled) from `hdparm -I` text."""
    sec = hdparm_i.split("Security:", 1)[1] if "Security:" in hdparm_i else ""
    sec = sec.split("\n\n", 1)[0] if sec else ""
    lines = [x.strip() for x in sec.splitlines()]
    supported = any(x == "supported" for x in lines)
    frozen = any(x == "frozen" for x in lines)
    enabled = any(x == "enabled" for x in lines)
    return supported, frozen, enabled


@lru_cache(maxsize=1)
def blkdiscard_has_force() -> bool:
    """util-linux >= 2.36 opens the device with O_EXCL unless --force; older ones have no
    --force (and no O_EXCL)."""
    return "--force" in _out(["blkdiscard", "--help"])


def blkdiscard(dev: str, offset: int | None = None, length: int | None = None) -> list[str]:
    """The blkdiscard command for `dev` while ssdlab itself holds it with O_EXCL."""
    cmd = ["blkdiscard"] + (["--force"] if blkdiscard_has_force() else [])
    if offset is not None:
        cmd += ["--offset", str(offset)]
    if length is not None:
        cmd += ["--length", str(length)]
    return cmd + [dev]


def plan_block(dev: str, kind: str, discard: bool, force: bool = True) -> PurgePlan:
    """The strongest purge for block device `dev` (kind from identity: nvme, sd, loop ...)
    that erases `dev` alone (module docstring)."""
    why = "no secure erase available"
    if inuse.is_partition(kernel_name(dev)):
        why = "a partition: a secure erase would erase its whole disk"
    elif kind == "nvme":
        ctrl = id_ctrl(dev)
        user, crypto = nvme_ses_support(ctrl)
        as_is = nvme_format_as_is(id_ns(dev)) if user or crypto else None
        wait = [f"--timeout={PURGE_WAIT_S * 1000}"]  # milliseconds
        if (user or crypto) and nvme_format_reaches_others(dev, ctrl):
            why = "the controller's format erases every namespace, not only this one"
        elif (user or crypto) and as_is is None:
            why = "the namespace's format could not be read (nvme id-ns), and a format could change it"
        elif crypto and as_is is not None:
            return PurgePlan("nvme-format-crypto", [["nvme", "format", dev, "--ses=2", *as_is, *wait, "--force"]],
                             "controller supports cryptographic erase")
        elif user and as_is is not None:
            return PurgePlan("nvme-format-user-data", [["nvme", "format", dev, "--ses=1", *as_is, *wait, "--force"]],
                             "controller supports Format NVM with user data erase")
    elif kind == "sd" and shutil.which("hdparm"):
        sup, frozen, enabled = ata_erase_state(_out(["hdparm", "-I", dev]))
        if sup and not frozen and not enabled:
            return PurgePlan("ata-security-erase", [
                ["hdparm", "--user-master", "u", "--security-set-pass", ATA_PASS, dev],
                ["hdparm", "--user-master", "u", "--security-erase", ATA_PASS, dev],
            ], "ATA security erase supported and not frozen")
    if discard and shutil.which("blkdiscard"):
        cmd = blkdiscard(dev) if force else ["blkdiscard", dev]
        return PurgePlan("blkdiscard", [cmd], f"whole-device discard ({why})")
    return PurgePlan("none", [], f"no erase method available ({why}): the drive keeps its state")


def plan_file(path: str, size: int) -> PurgePlan:
    return PurgePlan("punch-hole", [["fallocate", "--punch-hole", "--offset", "0", "--length",
                                     str(size), path]], "file target: deallocate the whole file")


def execute(plan: PurgePlan, timeout: float = PURGE_WAIT_S) -> None:
    for cmd in plan.commands:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        if r.returncode != 0:
            msg = (r.stderr or r.stdout).strip().splitlines()
            raise RuntimeError(f"purge ({plan.method}) failed: `{' '.join(cmd)}`: "
                               f"{msg[-1] if msg else f'exit {r.returncode}'}")
