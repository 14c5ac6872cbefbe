"""Performance consistency: purge, sequential fill, then 4 KiB random writes at QD32 over
the same area for --seconds (2000 by default), IOPS every second."""

from __future__ import annotations

import numpy as np

from .. import phase as ph
from ..analysis import steady_state, summary
from ..analysis.steady import WINDOW
from .common import Options, area_bytes, by_name, opt_total

DEFAULT_SECONDS = 2000
SECONDS_HELP = "duration of the random-write phase"


def phases(capacity: int, opts: Options) -> list[ph.Phase]:
    n = area_bytes(capacity, opts)
    return [
        ph.purge(),
        ph.seq_write("fill", offset=0, length=n, stop_bytes=n),
        ph.rand_io("random", read_pct=0, offset=0, length=n,
                   stop_seconds=opts.secs(DEFAULT_SECONDS)),
    ]


def analyze(results, opts: Options) -> dict:
    r = by_name(results)["random"]
    iops = np.asarray(r.series["iops"], dtype=np.float64)
    ss = steady_state(iops)
    # never steady: summarise the last window of rounds so the figures still mean "the end"
    start = ss.start_s if ss.reached else max(0, iops.size - WINDOW * ss.round_s)
    s = summary(iops[start:])
    return {
        "steady_iops": s.mean,
        "steady_stdev": s.stdev,
        "p1_low_iops": s.p1_low,
        "min_iops": s.min,
        "steady_start_s": ss.start_s,
        "waf": opt_total(r, "waf"),
    }
