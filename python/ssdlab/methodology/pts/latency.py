"""PTS Latency: purge, preconditioning, then rounds of random I/O at one thread and queue
depth 1 (T1Q1), R/W mix 100/0, 65/35, 0/100 x block size 8 and 4 KiB, one minute each,
until the 4 KiB write average response time is steady. Reports average, maximum and
five-nines (99.999 %) response times of the measurement window."""

from __future__ import annotations

from collections.abc import Generator

from ...phase import KIB, Phase, PhaseResult
from ..common import Options
from ..test import Test
from . import common as C
from .figures import latency_figures

MIXES = (100, 65, 0)
BLOCKS = (8 * KIB, 4 * KIB)


def label(read_pct: int, bs: int) -> str:
    return f"rw{read_pct}_bs{C.bs_label(bs)}"


LABELS = [label(m, b) for m in MIXES for b in BLOCKS]


def phases(capacity: int, opts: Options) -> Generator[Phase, PhaseResult | None, None]:
    po = C.pts_options(opts)
    yield from C.precondition(capacity, po)

    def steps(n: int):
        for m in MIXES:
            for b in BLOCKS:
                yield C.io(C.round_name(n, label(m, b)), po, m, b, 1, 1)

    yield from C.rounds(po, steps, lambda got: C.lat(got[label(0, 4 * KIB)], "mean_us") or 0.0)


def five_nines(r) -> float | None:
    """99.999 % of the response times: from the histogram when the target recorded one
    (edges_us, counts), else None (fio reports up to 99.99 % by default)."""
    import numpy as np

    latd = r.latency or {}
    edges, counts = latd.get("edges_us"), latd.get("counts")
    if edges is None or counts is None:
        v = latd.get("p99_999_us")
        return None if v is None else float(v)
    c = np.asarray(counts, dtype=np.float64)
    e = np.asarray(edges, dtype=np.float64)
    if c.sum() <= 0 or e.size < c.size:
        return None
    i = int(np.searchsorted(np.cumsum(c), 0.99999 * c.sum()))
    return float(e[min(i + 1, e.size - 1)] if e.size > c.size else e[min(i, e.size - 1)])


def analyze(results: list[PhaseResult], opts: Options) -> dict:
    po = C.pts_options(opts)
    rounds = C.complete_rounds(results, LABELS)
    values = [C.lat(r[label(0, 4 * KIB)], "mean_us") or 0.0 for r in rounds.values()]
    out = C.steady_metrics(values, po.max_rounds, "4 KiB random write average response time (us)")
    win = C.window_rounds(out, rounds)
    table = {}
    for m in MIXES:
        for b in BLOCKS:
            rs = [rounds[n][label(m, b)] for n in win]
            means = [C.lat(r, "mean_us") for r in rs]
            maxes = [C.lat(r, "max_us") for r in rs]
            nines = [five_nines(r) for r in rs]
            table[label(m, b)] = {
                "avg_us": sum(x for x in means if x is not None) / len(rs) if rs and None not in means else None,
                "max_us": max((x for x in maxes if x is not None), default=None),
                "p99_999_us": max((x for x in nines if x is not None), default=None),
                "iops": sum(C.iops(r) for r in rs) / len(rs) if rs else None}
    out["latency_table"] = table
    out["conditions"] = C.conditions(po, threads=1, queue_depth=1, pattern="random",
                                     mixes_read_pct=list(MIXES),
                                     block_sizes_kib=[b // KIB for b in BLOCKS])
    return out


TEST = Test(name="pts-latency", title="SNIA PTS: Latency", phases=phases, analyze=analyze, figures=latency_figures,
            cost=3.0, in_review=False, summary="SNIA PTS Latency: average, maximum and 5-nines response times at T1Q1")
