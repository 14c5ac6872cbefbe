"""Working-set size: on a filled drive, 4 KiB random reads at QD32 confined to the first
1, 2, 4, 8 ... GB and finally the whole written area, --seconds each; then --seconds of
4 KiB random reads at QD1 over the whole area, whose latency percentiles are the drive's
read QoS (the QD1 random-read QoS of AnandTech's enterprise reviews).

The drive is purged and filled first; with `precondition=False` (`--no-precondition`)
those two steps are skipped and the test only reads, for a drive that is already filled
(a real drive then needs no --destroy-data).

Before the reads the drive idles until its background work after the fill (SLC folding,
GC) is done: reads that race that work measure it, not the mapping cache. A simulated
drive ends the idle as soon as it has nothing left to do (at most IDLE_CAP_S); a real drive
cannot tell us, so it idles IDLE_CAP_S. The wait is reported as `idle_wait_s` (null with
--no-precondition, which reads at once: the drive was filled earlier)."""

from __future__ import annotations

import math

from .. import phase as ph
from ..phase import GB
from .fill import segment_bytes
from .common import MIB, Options, area_bytes, by_name
from ..figures import lazy
from .test import Test

DEFAULT_SECONDS = 5
SECONDS_HELP = "seconds of random reads per working-set size"
QD1 = "qd1_reads"
# QD1 read latency statistics reported (the phase's latency keys)
QD1_STATS = ("mean", "p50", "p99", "p99_9", "p99_99", "max")
IDLE_CAP_S = 300.0  # 300 s of idle let every profile's post-fill folding finish


def sizes(area: int) -> list[int]:
    out, gb = [], 1
    while gb * GB < area:
        out.append(gb * GB // MIB * MIB)
        gb *= 2
    return out + [area]


def labels(sizes: list[int]) -> list[str]:
    """Each size in GB as its phase and its key in `iops_by_gb` name it: two significant
    digits at least (a tiny drive's 0.067 GB is not "0.1") and one decimal at least (the
    nominal sets stay "1", "2", "4"), more where two sizes would read the same (a whole
    area of 1.04 GB beside the 1 GB set)."""
    out: list[str] = []
    for size in sizes:
        gb = size / GB
        digits = max(1, 1 - math.floor(math.log10(gb)))
        text = f"{round(gb, digits):g}"
        while text in out and digits < 9:
            digits += 1
            text = f"{round(gb, digits):g}"
        out.append(text)
    return out


def phases(capacity: int, opts: Options) -> list[ph.Phase]:
    n = area_bytes(capacity, opts)
    sets = sizes(n)
    prep = [ph.purge(), ph.seq_write("fill", offset=0, length=n, stop_bytes=n, segment_bytes=segment_bytes(n)),
            ph.idle(IDLE_CAP_S, name="settle", until_quiet=True)]
    return (prep if opts.precondition else []) + [
        ph.rand_io(f"ws_{name}", read_pct=100, offset=0, length=s,
                   stop_seconds=opts.secs(DEFAULT_SECONDS))
        for s, name in zip(sets, labels(sets))
    ] + [ph.rand_io(QD1, read_pct=100, queue_depth=1, offset=0, length=n,
                    stop_seconds=opts.secs(DEFAULT_SECONDS))]


def analyze(results, opts: Options) -> dict:
    named = by_name(results)
    ws = [r for name, r in named.items() if name.startswith("ws_")]
    settle = named.get("settle")
    qd1 = named.get(QD1)
    lat = qd1.latency if qd1 is not None else {}
    return {
        **{f"qd1_read_{k}_us": (float(lat[f"{k}_us"]) if f"{k}_us" in lat else None) for k in QD1_STATS},
        "iops_by_gb": {r.phase.name[3:]: float(r.totals["iops"]) for r in ws},
        "lat_p99_us_by_gb": {r.phase.name[3:]: float(r.latency["p99_us"]) for r in ws},
        "lat_mean_us_by_gb": {r.phase.name[3:]: float(r.latency["mean_us"]) for r in ws},
        "idle_wait_s": float(settle.totals["duration_s"]) if settle is not None else None,
    }


TEST = Test(
    name="working-set",
    title="Working-set size",
    phases=phases,
    analyze=analyze,
    figures=lazy("working_set"),
    default_seconds=DEFAULT_SECONDS,
    seconds_help=SECONDS_HELP,
    cost=1.7,
    precondition_optional=True,
)
