"""What fio's JSON output and its logs share: the data directions, in fio's order (the
JSON's per-direction objects, and the logs' ddir column: 0 read, 1 write, 2 trim), and the
object unified_rw_reporting adds (or puts in their place)."""

from __future__ import annotations

import re

DIRS = ("read", "write", "trim")
MIXED = "mixed"

# fio's synchronous engines complete an I/O in the call that issues it: fio records no
# submission latency for them (slat N=0, an empty _slat log); psync is its default on Linux
SYNC_ENGINES = frozenset({"sync", "psync", "vsync", "pvsync", "pvsync2"})


# engines that do a trim in the call that issues it (fio 3.33's FIO_ASYNCIO_SYNC_TRIM): fio
# records no submission latency for it. libaio and io_uring trim alongside the job's I/Os in
# flight, posixaio once they have completed (fio 3.38 queues io_uring's trims; ssdlab follows
# fio 3.33). io_uring_cmd has the flag in 3.33 but cannot trim there; fio 3.36 and later
# queue its trims, as ssdlab does
TRIM_IN_CALL = frozenset({"libaio", "io_uring"})
TRIM_DRAINED = frozenset({"posixaio"})
SYNC_TRIM_ENGINES = TRIM_IN_CALL | TRIM_DRAINED


def flag_on(options: dict, key: str) -> bool:
    """A boolean fio option given as on (a bare key reads as on; sync=sync or dsync too)."""
    if key not in options:
        return False
    return str(options[key]).strip().lower() in ("", "1", "true", "yes", "on", "sync", "dsync")


def sg_in_call(options: dict) -> bool:
    """Whether fio's sg does each I/O in the call that issues it (FIO_Q_COMPLETED), as a
    synchronous engine: on an sd block device (SG_IO's ioctl) always, on an sg character
    device (/dev/sgN, /dev/bsg/...) with sync=1 or direct=1; there it otherwise writes the
    command and reads the reply later (queued), as it does for a job without a filename."""
    if str(options.get("ioengine") or "").strip().split(":")[0].lower() != "sg":
        return False
    name = str(options.get("filename") or "").strip()
    chardev = not name or re.match(r"/dev/(sg\d|bsg/)", name) is not None
    return not chardev or flag_on(options, "sync") or flag_on(options, "direct")


def measures_slat(options: dict, direction: str = "read") -> bool:
    """Whether fio records submission latencies for a job with these options in this
    direction: only for an I/O its engine queues (libaio, io_uring...; the null engine
    queues at iodepth above 1; the trims of SYNC_TRIM_ENGINES are synchronous)."""
    engine = str(options.get("ioengine") or "psync").strip().split(":")[0].lower()
    if direction == DIRS[2] and engine in SYNC_TRIM_ENGINES:
        return False
    if engine in ("null", "cpp_null"):
        try:
            return int(str(options.get("iodepth") or "1").strip()) > 1
        except ValueError:
            return False
    return engine not in SYNC_ENGINES and not sg_in_call(options)
