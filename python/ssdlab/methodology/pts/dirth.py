"""PTS Demand Intensity / Response Time Histogram (DIRTH): purge, preconditioning, then
rounds of 4 KiB random 65/35 read/write over the active range at every thread count x
queue depth (32 ... 1 each, highest demand first), one minute each, until the T32Q32 IOPS
is steady. Reports IOPS against total outstanding I/O per thread count and the demand
intensity curve (response time against IOPS)."""

from __future__ import annotations

from collections.abc import Generator
from typing import TypedDict

from ...phase import KIB, Phase, PhaseResult
from ..common import Options
from ..test import Test
from . import common as C
from .figures import dirth_figures
from .grids import QDS, THREADS
from .grids import dirth_label as label

READ_PCT = 65


LABELS = [label(t, q) for t in THREADS for q in QDS]


def phases(capacity: int, opts: Options) -> Generator[Phase, PhaseResult | None, None]:
    po = C.pts_options(opts)
    yield from C.precondition(capacity, po)

    def steps(n: int):
        for t in THREADS:
            for q in QDS:
                yield C.io(C.round_name(n, label(t, q)), po, READ_PCT, 4 * KIB, t, q)

    yield from C.rounds(po, steps, lambda got: C.iops(got[label(THREADS[0], QDS[0])]))


class GridCell(TypedDict):
    """One thread count x queue depth: averages over the measurement window's rounds."""

    iops: float
    mean_us: float | None  # None: a round without a latency mean
    max_us: float


def analyze(results: list[PhaseResult], opts: Options) -> dict:
    po = C.pts_options(opts)
    rounds = C.complete_rounds(results, LABELS)
    values = [C.iops(r[label(THREADS[0], QDS[0])]) for r in rounds.values()]
    out = C.steady_metrics(values, po.max_rounds, "T32Q32 IOPS (4 KiB random 65/35)")
    win = C.window_rounds(out, rounds)
    grid: dict[str, GridCell] = {}
    for lb in LABELS:
        rs = [rounds[n][lb] for n in win]
        if not rs:
            continue
        means = [m for r in rs if (m := C.lat(r, "mean_us")) is not None]
        grid[lb] = {"iops": sum(C.iops(r) for r in rs) / len(rs),
                    "mean_us": sum(means) / len(means) if len(means) == len(rs) else None,
                    "max_us": max((C.lat(r, "max_us") or 0.0) for r in rs)}
    out["grid"] = grid
    if grid:
        best = max(grid, key=lambda k: grid[k]["iops"])
        out["max_iops"] = grid[best]["iops"]
        out["max_iops_at"] = best
    out["conditions"] = C.conditions(po, pattern="random", block_size_kib=4, read_pct=READ_PCT,
                                     threads=list(THREADS), queue_depths=list(QDS))
    return out


TEST = Test(name="pts-dirth", title="SNIA PTS: Demand Intensity / Response Time (DIRTH)", phases=phases, analyze=analyze, figures=dirth_figures, cost=30.0, in_review=False,
            summary="SNIA PTS Demand Intensity: IOPS and response time vs outstanding I/O")
