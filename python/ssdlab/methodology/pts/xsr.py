"""PTS Cross Stimulus Recovery (XSR): purge, then three access groups back to back:
sequential 1024 KiB writes (T1Q32) for 8 hours, random 8 KiB writes for 6 hours, and
sequential 1024 KiB writes again for 8 hours. Reports throughput per minute across the
groups and how long each group took to settle (the first minute ending a steady 5-minute
window), which for the third group is the recovery from the random stimulus.

ssdlab ends each group also once it has written CAPACITIES x the user capacity (see
docs/methodology.md): a drive rewritten that often has long reached the group's state."""

from __future__ import annotations

from typing import TypedDict

import numpy as np

from ...analysis import pts_steady
from ...phase import KIB, Phase, PhaseResult
from ..common import Options
from ..test import Test
from . import common as C
from .figures import xsr_figures
from .wsat import per_minute

MIB = 1024 * KIB
CAPACITIES = 2
# name: (stimulus, pattern, block size, hours, threads x qd by segment)
GROUPS = {
    "ag1": ("SEQ 1024 KiB W", "seq", MIB, 8.0),
    "ag2": ("RND 8 KiB W", "rand", 8 * KIB, 6.0),
    "ag3": ("SEQ 1024 KiB W", "seq", MIB, 8.0),
}
RANDOM_OUTSTANDING = {"client": (2, 16), "enterprise": (4, 32)}


def phases(capacity: int, opts: Options) -> list[Phase]:
    po = C.pts_options(opts)
    out = list(C.precondition(capacity, po, wipc=False))
    for g, (_, pattern, bs, hours) in GROUPS.items():
        t, q = (1, 32) if pattern == "seq" else RANDOM_OUTSTANDING[po.segment]
        stop = max(bs, int(CAPACITIES * capacity * po.scale)) // bs * bs
        out.append(C.io(g, po, 0, bs, t, q, pattern=pattern, seconds=max(1.0, hours * 3600 * po.scale),
                        stop_bytes=stop))
    return out


class Group(TypedDict):
    """One access group's figures (its last 5 minutes, and when it became steady)."""

    stimulus: str
    minutes: float
    mbps: float | None
    iops: float | None
    steady_minute: float | None
    mbps_by_minute: list[float]


def analyze(results: list[PhaseResult], opts: Options) -> dict:
    po = C.pts_options(opts)
    groups: dict[str, Group] = {}
    for r in results:
        if r.phase.name not in GROUPS:
            continue
        stim = GROUPS[r.phase.name][0]
        step = 60 if len(r.series.get("mbps", [])) >= 600 else 1
        mb = per_minute(r.series, "mbps", seconds=step)
        io = per_minute(r.series, "iops", seconds=step)
        steady = None
        for last in range(pts_steady.WINDOW, mb.size + 1):
            if pts_steady.window(mb[last - pts_steady.WINDOW:last], last).steady:
                steady = last * step / 60
                break
        groups[r.phase.name] = {
            "stimulus": stim, "minutes": float(r.totals.get("duration_s", 0.0)) / 60,
            "mbps": float(np.nanmean(mb[-5:])) if mb.size else None,
            "iops": float(np.nanmean(io[-5:])) if io.size else None,
            "steady_minute": steady, "mbps_by_minute": [float(x) for x in mb]}
    out: dict[str, object] = {"groups": groups}
    if "ag3" in groups and "ag1" in groups and groups["ag1"]["mbps"]:
        out["recovery_ratio"] = (groups["ag3"]["mbps"] or 0.0) / groups["ag1"]["mbps"]
        out["recovery_minutes"] = groups["ag3"]["steady_minute"]
    out["conditions"] = C.conditions(po, groups={g: v[0] for g, v in GROUPS.items()},
                                     hours=[v[3] * po.scale for v in GROUPS.values()],
                                     capacities_per_group=CAPACITIES * po.scale)
    return out


TEST = Test(name="pts-xsr", title="SNIA PTS: Cross Stimulus Recovery (XSR)", phases=phases, analyze=analyze, figures=xsr_figures, cost=10.0, in_review=False,
            summary="SNIA PTS Cross Stimulus Recovery: sequential, random, sequential writes")
