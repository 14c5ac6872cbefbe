"""TRIM validation: purge, a clean sequential write pass (which also fills the drive),
4 KiB random-write torture at QD32 for --seconds, TRIM of the whole drive, then the same
sequential write pass again. Both passes record MB/s per segment as the fill does (1 GB,
or 1/32 of a drive smaller than 32 GB: a 256 MiB namespace got one point per pass, a
line the figure could not draw)."""

from __future__ import annotations

from .. import phase as ph
from .common import Options, area_bytes, by_name, mbps
from .fill import segment_bytes
from ..figures import lazy
from .test import Test

# The review tortures for 60 min; 10 min already holds a full drive deep in GC steady
# state and keeps simulated runs short. --seconds 3600 gives the review's figure.
DEFAULT_SECONDS = 600
SECONDS_HELP = "duration of the random-write torture"


def phases(capacity: int, opts: Options) -> list[ph.Phase]:
    n = area_bytes(capacity, opts)
    return [
        ph.purge(),
        ph.seq_write("clean", offset=0, length=n, stop_bytes=n, segment_bytes=segment_bytes(n)),
        ph.rand_io("torture", read_pct=0, offset=0, length=n,
                   stop_seconds=opts.secs(DEFAULT_SECONDS)),
        ph.trim("trim"),
        ph.seq_write("after_trim", offset=0, length=n, stop_bytes=n, segment_bytes=segment_bytes(n)),
    ]


def analyze(results, opts: Options) -> dict:
    r = by_name(results)
    clean, after = mbps(r["clean"]), mbps(r["after_trim"])
    return {"clean_mbps": clean, "after_trim_mbps": after,
            "recovery_ratio": after / clean if clean > 0 else None}


TEST = Test(
    name="trim",
    title="TRIM validation",
    phases=phases,
    analyze=analyze,
    figures=lazy("trim"),
    default_seconds=DEFAULT_SECONDS,
    seconds_help=SECONDS_HELP,
    cost=4.1,
    keeps_segments=True,
)
