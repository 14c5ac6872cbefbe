"""Low-queue-depth random writes on a clean drive, as AnandTech's 2011-2014 client reviews
ran them ("Desktop Iometer - 4KB Random Write": 4 KiB random writes over an 8 GB LBA space
at a queue depth of 3 for 3 minutes, the average MB/s reported, the worst write latency
mentioned): purge, then 4 KiB random writes at QD3 over the first 8 GB (the area, if
smaller) for --seconds (default 180).

A drive whose writes land in its write buffer and its free blocks runs at the write path's
speed; real drives of every era slow down and stall within minutes (mapping-table updates,
buffer flushes, the GC of the blocks scattered writes leave). The metrics show both: the
average, the first and the last minute's MB/s (a slowdown), the largest latency and the
seconds without a completed write (stalls)."""

from __future__ import annotations

import numpy as np

from .. import phase as ph
from ..phase import GB
from .common import MIB, Options, area_bytes, by_name, mbps
from .test import Test

DEFAULT_SECONDS = 180
SECONDS_HELP = "seconds of 4 KiB QD3 random writes"
SPAN = 8 * GB  # AnandTech: "an 8GB space of the drive"
QD = 3  # "three concurrent IOs"
NAME = "random_write"


def phases(capacity: int, opts: Options) -> list[ph.Phase]:
    span = min(SPAN // MIB * MIB, area_bytes(capacity, opts))
    return [ph.purge(),
            ph.rand_io(NAME, read_pct=0, queue_depth=QD, offset=0, length=span,
                       stop_seconds=opts.secs(DEFAULT_SECONDS))]


def analyze(results, opts: Options) -> dict:
    r = by_name(results)[NAME]
    mb_s = np.asarray(r.series.get("write_mbps", r.series.get("mbps", [])), dtype=float)
    iops = np.asarray(r.series.get("iops", []), dtype=float)

    def minute(v: np.ndarray) -> float | None:
        v = v[np.isfinite(v)]  # a second the fio log missed is missing, not 0
        return float(v.mean()) if v.size else None

    return {
        "mbps": mbps(r),
        "first_minute_mbps": minute(mb_s[:60]),
        "last_minute_mbps": minute(mb_s[-60:]),
        "max_latency_ms": float(r.latency["max_us"]) / 1000.0 if "max_us" in r.latency else None,
        "p99_latency_us": float(r.latency["p99_us"]) if "p99_us" in r.latency else None,
        "zero_seconds": int((iops == 0).sum()),
    }


TEST = Test(
    name="low-qd-write",
    title="Low-queue-depth random writes",
    phases=phases,
    analyze=analyze,
    default_seconds=DEFAULT_SECONDS,
    seconds_help=SECONDS_HELP,
    cost=2.6,
    in_review=False,
    summary="4 KiB random writes at QD3 over 8 GB of a clean drive for 3 minutes (AnandTech's desktop Iometer test)",
)
