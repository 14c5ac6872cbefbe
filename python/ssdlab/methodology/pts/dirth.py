"""PTS Demand Intensity / Response Time Histogram (DIRTH): purge, preconditioning, then
rounds of 4 KiB random 65/35 over the active range at every thread count x queue depth
per thread (32, 16, 8, 6, 4, 2, 1 each, highest demand first), one minute each, with a
pre-write (4 KiB random writes at T32Q32 for a step's length) between rounds, until the
T32Q32 IOPS is steady. From the measurement window's averages it picks the MaxIOPS point
(the most IOPS at an average response time within the ceiling), the MinIOPS point (T1Q1)
and the MidIOPS point (the IOPS nearest halfway between), and runs each for 10 steps'
length (the specification's 10 minutes) to record its response-time histogram."""

from __future__ import annotations

import math
from typing import Any, TypedDict

import numpy as np

from ...analysis import latency_hist
from ...figures.pts_plots import Line, Plot, Table
from ...phase import KIB, Batch, PhaseResult
from ..common import Options
from ..test import Test
from . import common as C
from . import figures as F
from .grids import QDS, THREADS
from .grids import dirth_label as label

READ_PCT = 65
PREWRITE = "prewrite"
HIST_STEPS = 10  # a histogram point runs 10 steps: 10 minutes at the specification's length
POINTS = ("max", "mid", "min")
TRACKING = "T32Q32 IOPS (RND 4 KiB 65/35)"
LABELS = [label(t, q) for t in THREADS for q in QDS]
PERCENTILES = (99.0, 99.9, 99.99, 99.999)


class GridCell(TypedDict):
    """One thread count x queue depth: averages over the measurement window's rounds."""

    iops: float
    mean_us: float | None  # None: a round without a latency mean
    max_us: float


def grid_of(rounds: list[dict[str, Any]]) -> dict[str, GridCell]:
    grid: dict[str, GridCell] = {}
    for lb in LABELS:
        rs = [r[lb] for r in rounds if lb in r]
        if not rs:
            continue
        means = [m for r in rs if (m := C.lat(r, "mean_us")) is not None]
        grid[lb] = {"iops": sum(C.iops(r) for r in rs) / len(rs),
                    "mean_us": sum(means) / len(means) if len(means) == len(rs) else None,
                    "max_us": max((C.lat(r, "max_us") or 0.0) for r in rs)}
    return grid


def pick(grid: dict[str, GridCell], ceiling_us: float) -> dict[str, str]:
    """The MaxIOPS, MidIOPS and MinIOPS points: the most IOPS at an average response time
    within the ceiling (every point when none is), T1Q1, and the point within the ceiling
    whose IOPS lies nearest halfway between the two."""
    if not grid:
        return {"max": label(THREADS[0], QDS[0]), "mid": label(4, 4), "min": label(1, 1)}
    under = [k for k, v in grid.items() if v["mean_us"] is not None and v["mean_us"] <= ceiling_us]
    best = max(under or list(grid), key=lambda k: grid[k]["iops"])
    low = label(1, 1) if label(1, 1) in grid else min(grid, key=lambda k: grid[k]["iops"])
    half = (grid[best]["iops"] + grid[low]["iops"]) / 2
    between = [k for k in (under or list(grid)) if k not in (best, low)] or [best]
    mid = min(between, key=lambda k: abs(grid[k]["iops"] - half))
    return {"max": best, "mid": mid, "min": low}


def tq(lb: str) -> tuple[int, int]:
    t, q = lb[1:].split("q")
    return int(t), int(q)


def phases(capacity: int, opts: Options) -> C.Steps:
    po = C.pts_options(opts)
    yield from C.precondition(capacity, po)

    def steps(n: int):
        if n > 1:  # back to write saturation after a round that ended at T1Q1
            yield C.io(C.round_name(n, PREWRITE), po, 0, 4 * KIB, THREADS[0], QDS[0])
        for t in THREADS:
            for q in QDS:
                yield C.io(C.round_name(n, label(t, q)), po, READ_PCT, 4 * KIB, t, q)

    done = yield from C.rounds(po, steps, lambda got: {TRACKING: C.iops(got[label(THREADS[0], QDS[0])])})
    points = pick(grid_of(done[-5:]), po.response_ceiling_ms * 1000)
    yield Batch(C.io(f"hist-{p}", po, READ_PCT, 4 * KIB, *tq(points[p]), seconds=HIST_STEPS * po.round_seconds)
                for p in POINTS)


def point_figures(r: PhaseResult | Any) -> dict:
    """A histogram point's IOPS, response times and percentiles (never above its max)."""
    lat = r.latency or {}
    out = {"iops": C.iops(r), "mean_us": C.lat(r, "mean_us"), "max_us": C.lat(r, "max_us")}
    for p in PERCENTILES:
        out[f"p{p:g}_us".replace(".", "_")] = latency_hist.percentile(lat, p)
    return out


def analyze(results: list[PhaseResult], opts: Options) -> dict:
    po = C.pts_options(opts)
    rounds = C.complete_rounds(results, LABELS)
    values = [C.iops(r[label(THREADS[0], QDS[0])]) for r in rounds.values()]
    out = C.steady_metrics({TRACKING: values}, po.max_rounds)
    win = C.window_rounds(out, rounds)
    grid = grid_of([rounds[n] for n in win])
    out["grid"] = grid
    if grid:
        best = max(grid, key=lambda k: grid[k]["iops"])
        out["max_iops"] = grid[best]["iops"]
        out["max_iops_at"] = best
    chosen = pick(grid, po.response_ceiling_ms * 1000)
    hist = {r.phase.name.removeprefix("hist-"): r for r in results if r.phase.name.startswith("hist-")}
    out["points"] = {p: ({"at": label(hist[p].phase.jobs, hist[p].phase.queue_depth),
                          **point_figures(hist[p])} if p in hist else {"at": chosen[p]})
                     for p in POINTS}
    out["conditions"] = C.conditions(po, pattern="random", block_size_kib=4, read_pct=READ_PCT,
                                     threads=list(THREADS), queue_depths=list(QDS),
                                     prewrite=f"RND 4 KiB W, T{THREADS[0]}Q{QDS[0]}, one step, between rounds",
                                     response_ceiling_ms=po.response_ceiling_ms,
                                     histogram_s=HIST_STEPS * po.round_seconds)
    return out


# -- the report page -------------------------------------------------------------------
def histogram_lines(lat: dict, bins: int = 60) -> tuple[list[float], list[float], float]:
    """The stored histogram regrouped into equal bins from 0 to the slowest I/O: bin
    centres (ms), whole I/O counts (NaN: none) and the bin width (ms). As fio's and the
    specification's histograms, a bin counts I/Os: each stored bucket's go whole into the
    bin that holds its middle. A bin is a power of two of nanoseconds, at least 1/`bins` of
    the span and no narrower than the widest bucket holding I/Os, so no bin is empty for
    lack of resolution (a simulated drive's buckets, their bounds multiples of their width,
    each lie within one bin)."""
    edges, counts = lat.get("edges_us"), lat.get("counts")
    if edges is None or counts is None or np.asarray(counts).size == 0:
        return [], [], 0.0
    c = np.asarray(counts, dtype=float)
    lo, hi = latency_hist.bucket_bounds(edges, latency_hist.layout_of(lat))
    held = c > 0
    if not held.any():
        return [], [], 0.0
    top_ns = float(lat.get("max_us") or hi[held].max()) * 1e3
    widest_ns = float((hi - lo)[held].max()) * 1e3
    width_ns = 2.0 ** math.ceil(math.log2(max(top_ns / bins, widest_ns, 1.0)))
    n = max(1, math.ceil(top_ns / width_ns))
    at = np.clip(((lo + hi)[held] / 2 * 1e3 // width_ns).astype(np.int64), 0, n - 1)
    out = np.bincount(at, weights=c[held], minlength=n)
    centres = (np.arange(n) + 0.5) * width_ns / 1e6
    return ([float(x) for x in centres], [float(round(x)) if x > 0 else float("nan") for x in out],
            width_ns / 1e6)


def _threads(t: int) -> str:
    return f"{t} thread" + ("s" if t > 1 else "")


def _name(lb: str) -> str:
    t, q = tq(lb)
    return f"T{t}Q{q}"


def page(key: str, run: Any, d: Any) -> tuple:
    m = d.metrics or {}
    cond = m.get("conditions") or {}
    stim = (f"RND 4 KiB {READ_PCT}/{100 - READ_PCT}, threads {', '.join(map(str, THREADS))} x queue depth "
            f"per thread {', '.join(map(str, QDS))}; {cond.get('prewrite', '-')}; response-time "
            f"histograms of {cond.get('histogram_s', 600):g} s at the MaxIOPS (average response "
            f"time within {cond.get('response_ceiling_ms', C.RESPONSE_CEILING_MS):g} ms), MidIOPS "
            "and MinIOPS points")
    conv = F.by_label(d, [label(THREADS[0], QDS[0])], C.iops)
    out: list = [F.convergence(key, run.test, d, {TRACKING: conv[label(THREADS[0], QDS[0])]}, "IOPS"),
                 *F.window_plots(key, run.test, d, lambda name: "IOPS")]
    g = m.get("grid") or {}
    if not g:
        return stim, out
    pts = m.get("points") or {}
    by_t = {t: [(q, x) for q in sorted(QDS) if (x := g.get(label(t, q)))] for t in THREADS}
    out.append(Plot(f"fig-{key}-iops-toio", f"{run.test}: demand variation, IOPS vs queue depth per thread\n{d.label}",
                    "queue depth per thread (outstanding I/O of each thread)", "IOPS",
                    [Line(_threads(t), [q for q, _ in v], [x["iops"] for _, x in v])
                     for t, v in by_t.items() if v],
                    log_x=True, log_base=2, xticks=sorted(QDS)))
    ceiling = float(cond.get("response_ceiling_ms", C.RESPONSE_CEILING_MS))
    lines = [Line(_threads(t), [x["iops"] for _, x in v], [(x["mean_us"] or 0) / 1000 for _, x in v])
             for t, v in by_t.items() if v]
    top = max(x["iops"] for x in g.values())
    lines.append(Line(f"response-time ceiling {ceiling:g} ms", [0, top], [ceiling, ceiling], "lines", "dot"))
    for p in POINTS:
        at = str((pts.get(p) or {}).get("at") or "")
        if at in g:
            lines.append(Line(f"{p.capitalize()}IOPS point: {_name(at)}", [g[at]["iops"]],
                              [(g[at]["mean_us"] or 0) / 1000], "markers"))
    out.append(Plot(f"fig-{key}-demand", f"{run.test}: demand intensity, response time vs IOPS\n{d.label}",
                    "IOPS", "average response time (ms)", lines))
    out.append(Table(f"table-{key}-grid", f"{run.test}: measurement window averages\n{d.label}",
                     ["threads x queue depth", "outstanding I/O", "IOPS", "avg response (us)", "max response (us)"],
                     [[_name(label(t, q)), t * q, x["iops"], x["mean_us"], x["max_us"]]
                      for t, v in by_t.items() for q, x in v]))
    rows = [[f"{p.capitalize()}IOPS", _name(v["at"]), v.get("iops"), v.get("mean_us"), v.get("max_us"),
             *(v.get(f"p{x:g}_us".replace(".", "_")) for x in PERCENTILES)]
            for p in POINTS if (v := pts.get(p)) and "at" in v]
    if rows:
        out.append(Table(f"table-{key}-points", f"{run.test}: the histogram points\n{d.label}",
                         ["point", "threads x queue depth", "IOPS", "avg (us)", "max (us)",
                          *(f"{x:g} % (us)" for x in PERCENTILES)], rows,
                         f"{cond.get('histogram_s', 600):g} s at each point; percentiles from the "
                         "histogram, within the bucket, never above the maximum"))
    phases_ = {p.name.removeprefix("hist-"): p for p in d.phases if p.name.startswith("hist-")}
    for p in POINTS:
        ph = phases_.get(p)
        if ph is None:
            continue
        x, y, width = histogram_lines(ph.latency or {})
        if x:
            at = (pts.get(p) or {}).get("at", "")
            out.append(Plot(f"fig-{key}-hist-{p}",
                            f"{run.test}: response-time histogram, {p.capitalize()}IOPS point {_name(at) if at else ''}\n{d.label}",
                            "response time (ms)", f"I/Os per {width:.3g} ms bin", [Line("I/Os", x, y, "bars")],
                            log_y=True, y_from_zero=False))
    return stim, out


TEST = Test(uses=frozenset(), name="pts-dirth", options=C.RUN_OPTIONS, title="SNIA PTS: Demand Intensity / Response Time (DIRTH)", phases=phases,
            analyze=analyze, figures=F.per_drive("SNIA PTS: Demand Intensity / Response Time (DIRTH)", page),
            cost=35.0, in_review=False,
            verdict=C.verdict,
            summary="SNIA PTS Demand Intensity: IOPS and response time vs outstanding I/O")
