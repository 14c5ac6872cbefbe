"""PTS Latency: purge, preconditioning, then rounds of random I/O at one thread and queue
depth 1 (T1Q1), R/W mix 100/0, 65/35, 0/100 x block size 8, 4 and (on drives with
512-byte logical blocks) 0.5 KiB, one minute each, until the 4 KiB 0/100 average
response time is steady. Reports average, maximum and five-nines (99.999 %) response
times of the measurement window."""

from __future__ import annotations

from typing import Any

from ...analysis import latency_hist
from ...figures.pts_plots import Matrix3D, Table
from ...phase import KIB, PhaseResult
from ..common import Options
from ..test import Test
from . import common as C
from . import figures as F
from .grids import mix_label

MIXES = (100, 65, 0)
BLOCKS = (8 * KIB, 4 * KIB)
TRACKING = "RND 4 KiB 0/100 average response time (us)"


def label(read_pct: int, bs: int) -> str:
    return f"rw{read_pct}_bs{C.bs_label(bs)}"


def blocks(po: C.PtsOptions) -> tuple[int, ...]:
    return BLOCKS + ((C.SMALL_BLOCK,) if po.small_blocks else ())


def labels(po: C.PtsOptions) -> list[str]:
    return [label(m, b) for m in MIXES for b in blocks(po)]


LABELS = [label(m, b) for m in MIXES for b in BLOCKS]  # without the 0.5 KiB steps


def phases(capacity: int, opts: Options) -> C.Steps:
    po = C.pts_options(opts)
    yield from C.precondition(capacity, po)

    def steps(n: int):
        for m in MIXES:
            for b in blocks(po):
                yield C.io(C.round_name(n, label(m, b)), po, m, b, 1, 1)

    yield from C.rounds(po, steps,
                        lambda got: {TRACKING: C.lat(got[label(0, 4 * KIB)], "mean_us") or 0.0})


def five_nines(latencies: list[dict]) -> float | None:
    """99.999 % of the response times of these steps together, from their histograms
    (interpolated within the bucket, never above the slowest I/O); None without any."""
    return latency_hist.percentile(latency_hist.merge(latencies), 99.999)


def analyze(results: list[PhaseResult], opts: Options) -> dict:
    po = C.pts_options(opts)
    rounds = C.complete_rounds(results, labels(po))
    values = [C.lat(r[label(0, 4 * KIB)], "mean_us") or 0.0 for r in rounds.values()]
    out = C.steady_metrics({TRACKING: values}, po.max_rounds)
    win = C.window_rounds(out, rounds)
    table = {}
    for m in MIXES:
        for b in blocks(po):
            rs = [rounds[n][label(m, b)] for n in win]
            means = [C.lat(r, "mean_us") for r in rs]
            maxes = [C.lat(r, "max_us") for r in rs]
            table[label(m, b)] = {
                "avg_us": sum(x for x in means if x is not None) / len(rs) if rs and None not in means else None,
                "max_us": max((x for x in maxes if x is not None), default=None),
                "p99_999_us": five_nines([getattr(r, "latency", None) or {} for r in rs]),
                "iops": sum(C.iops(r) for r in rs) / len(rs) if rs else None}
    out["latency_table"] = table
    out["conditions"] = C.conditions(po, threads=1, queue_depth=1, pattern="random",
                                     mixes_read_pct=list(MIXES),
                                     block_sizes_kib=[b / KIB for b in blocks(po)],
                                     small_blocks=po.small_blocks_note())
    return out


# -- the report page -------------------------------------------------------------------
def page(key: str, run: Any, d: Any) -> tuple:
    m = d.metrics or {}
    t = m.get("latency_table") or {}
    sizes = sorted(b for b in (*BLOCKS, C.SMALL_BLOCK) if label(0, b) in t) or sorted(BLOCKS)
    mixes = sorted(MIXES)  # 0/100 first
    cells = [(x, b) for x in mixes for b in sizes]
    names = {label(x, b): f"{C.bs_kib(b)} KiB {mix_label(x)}" for x, b in cells}
    avg = F.by_label(d, names, lambda r: C.lat(r, "mean_us"))
    mx = F.by_label(d, names, lambda r: C.lat(r, "max_us"))
    out: list = [
        F.convergence(key, run.test, d, {names[k]: v for k, v in avg.items()},
                      "average response time (us)", ": average response time"),
        F.convergence(key, run.test, d, {names[k]: v for k, v in mx.items()},
                      "maximum response time (us)", ": maximum response time", "convergence-max"),
        *F.window_plots(key, run.test, d, lambda name: "average response time (us)")]
    if t:
        out.insert(0, Table(
            f"table-{key}-latency", f"{run.test}: response times (us) at T1Q1\n{d.label}",
            ["block size (KiB)", "R/W mix", "average", "maximum", "99.999 %", "IOPS"],
            [[C.bs_kib(b), mix_label(x), *(t.get(label(x, b), {}).get(f) for f in
                                           ("avg_us", "max_us", "p99_999_us", "iops"))]
             for b in sizes for x in mixes],
            "measurement window: average of the rounds' averages, the largest maximum, the "
            "99.999 % of all its I/Os (within the histogram's bucket, never above the maximum)"))
        for f, what in (("avg_us", "average"), ("max_us", "maximum")):
            out.append(Matrix3D(f"fig-{key}-3d-{f.removesuffix('_us')}", f"{run.test}: {what} response time\n{d.label}",
                                [C.bs_kib(b) for b in sizes], [mix_label(x) for x in mixes],
                                [[t.get(label(x, b), {}).get(f) for b in sizes] for x in mixes],
                                zlabel=f"{what} response time (us)"))
    cond = m.get("conditions") or {}
    stim = (f"RND, R/W mix {', '.join(mix_label(x) for x in MIXES)} x block size "
            f"{', '.join(C.bs_kib(b) for b in sorted(sizes, reverse=True))} KiB, T1Q1; 0.5 KiB "
            f"{cond.get('small_blocks', '-')}")
    return stim, out


TEST = Test(uses=frozenset(), name="pts-latency", options=C.RUN_OPTIONS, title="SNIA PTS: Latency", phases=phases, analyze=analyze,
            figures=F.per_drive("SNIA PTS: Latency", page), cost=2.0, in_review=False,
            verdict=C.verdict,
            summary="SNIA PTS Latency: average, maximum and 5-nines response times at T1Q1")
