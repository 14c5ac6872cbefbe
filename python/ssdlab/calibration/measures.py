"""Derived measures: numbers a figure reads that no test reports as one metric (where the
SLC cache drops in a fill curve, where its recovery peaks rise, a fio job's percentile...).
Each is a Python function registered by name; a figures file names it (`measure = "NAME"`,
with `args`) and the function reads the run the figure names (`run`)."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from .figure import FILL, Ctx, RunKey

Measure = Callable[..., float | None]  # (ctx, run, **args) -> value or None
MEASURES: dict[str, Measure] = {}


def measure(fn: Measure) -> Measure:
    MEASURES[fn.__name__] = fn
    return fn


# ---- fill curves ---------------------------------------------------------------------------
@measure
def slc_share(c: Ctx, run: RunKey = FILL) -> float | None:
    """The SLC cache the fill test finds, as a share of the user capacity."""
    v = c.m(run, "slc_cache_gb")
    return None if v is None else v / c.capacity_gb()


def drop_index(c: Ctx, run: RunKey = FILL) -> int | None:
    from ..analysis.slc import fill_shape
    gb, v = c.seg(run=run)
    return fill_shape(gb, v).drop_index


def recovery_positions(c: Ctx, run: RunKey = FILL) -> list[float]:
    """Where recovery peaks rise (share of the fill), with the fill test's own rule."""
    from ..analysis.slc import RECOVERY, fill_shape
    gb, v = c.seg(run=run)
    shape = fill_shape(gb, v)
    if shape.drop_index is None:
        return []
    after = v[shape.drop_index:]
    level = np.median(after) + RECOVERY * (shape.peak_mbps - np.median(after))
    above = after >= level
    rises = np.nonzero(above[1:] & ~above[:-1])[0] + 1 + shape.drop_index
    return [float(gb[i] / gb[-1]) for i in rises]


@measure
def mean_recovery_position(c: Ctx, run: RunKey = FILL) -> float | None:
    p = recovery_positions(c, run)
    return float(np.mean(p)) if p else None


def post_drop_window(c: Ctx, gb_after: float, run: RunKey = FILL) -> np.ndarray:
    """Segment speeds in the first `gb_after` GB after the sustained drop, without the
    drop segment itself (it holds the end of the cache: part cached, part native)."""
    gb, v = c.seg(run=run)
    d = drop_index(c, run)
    if d is None:
        return np.empty(0)
    start = gb[d]
    return v[d + 1:][gb[d + 1:] <= start + gb_after]


@measure
def swing_max(c: Ctx, run: RunKey = FILL) -> float | None:
    """The fastest segment in the 20 GB after the drop segment."""
    w = post_drop_window(c, 20.0, run)
    return float(w.max()) if w.size else None


@measure
def swing_min(c: Ctx, run: RunKey = FILL) -> float | None:
    """The slowest segment in the 20 GB after the drop segment."""
    w = post_drop_window(c, 20.0, run)
    return float(w.min()) if w.size else None


@measure
def settled_after_swings(c: Ctx, run: RunKey = FILL) -> float | None:
    """Median segment speed from 20 GB after the drop to the end (the level it settles at)."""
    gb, v = c.seg(run=run)
    d = drop_index(c, run)
    if d is None:
        return None
    start = gb[d - 1] if d > 0 else 0.0
    rest = v[gb > start + 20.0]
    return float(np.median(rest)) if rest.size else None


@measure
def right_after_cache(c: Ctx, run: RunKey = FILL) -> float | None:
    """Median segment speed over the first 16 GB after the sustained drop: the level a
    review calls "after the cache" when the curve degrades further later."""
    w = post_drop_window(c, 16.0, run)
    return float(np.median(w)) if w.size else None


@measure
def max_after_drop(c: Ctx, run: RunKey = FILL) -> float | None:
    """The fastest segment from the drop to the end."""
    gb, v = c.seg(run=run)
    d = drop_index(c, run)
    return float(v[d:].max()) if d is not None else None


# ---- the pass after TRIM of a drive with a performance mode --------------------------------
# fast while at most half of the LBAs are mapped, slower while the drive reorganizes its
# data, close to the start once done
def _pass(c: Ctx, run: RunKey) -> tuple[np.ndarray, np.ndarray, float]:
    """(share of the pass at each segment's end, MB/s, median MB/s of the first 45 %)."""
    gb, v = c.seg(run=run)
    share = gb / gb[-1]
    return share, v, float(np.median(v[share <= 0.45]))


@measure
def pass_drop_position(c: Ctx, run: RunKey) -> float | None:
    """Share of the pass where the speed first falls below 60 % of the first half's."""
    share, v, fast = _pass(c, run)
    slow = np.nonzero(v < 0.6 * fast)[0]
    return float(share[slow[0]]) if slow.size else None


@measure
def pass_slowest_ratio(c: Ctx, run: RunKey) -> float | None:
    """The slowest segment of the pass over the first 45 %'s median."""
    share, v, fast = _pass(c, run)
    return float(v.min() / fast) if fast > 0 else None


@measure
def pass_end_ratio(c: Ctx, run: RunKey) -> float | None:
    """Median speed of the last 20 % of the pass over the first half's."""
    share, v, fast = _pass(c, run)
    return float(np.median(v[share > 0.8]) / fast) if fast > 0 else None


# ---- a fio job's figures (the run of a job file: ssdlab run fio) ---------------------------
def _direction(c: Ctx, run: RunKey, job: str, rw: str) -> dict[str, Any] | None:
    """Direction `rw` of fio job `job` in the run's fio JSON, None if it did no I/O."""
    doc = c.runs[(c.drive, run)]["metrics"]["fio"]
    return next((j[rw] for j in doc["jobs"] if j["jobname"] == job and j[rw]["total_ios"]), None)


@measure
def fio_clat(c: Ctx, run: RunKey, job: str, rw: str, pct: str) -> float | None:
    """The latency (µs) of fio job `job`, direction `rw`: percentile `pct` of fio's JSON
    ("50.000000"), "max" or "mean" of its completion latency."""
    d = _direction(c, run, job, rw)
    if d is None:
        return None
    lat = d["clat_ns"]
    return float(lat[pct] if pct in ("max", "mean") else lat["percentile"][pct]) / 1e3


@measure
def fio_iops(c: Ctx, run: RunKey, job: str, rw: str) -> float | None:
    """The IOPS of fio job `job`, direction `rw`."""
    d = _direction(c, run, job, rw)
    return None if d is None else float(d["iops"])


# ---- behaviour over a run's I/O phases -----------------------------------------------------
@measure
def phase_max(c: Ctx, run: RunKey, field: str) -> float | None:
    """The largest `field` (max_latency_ms, zero_seconds) over the run's I/O phases."""
    vals = [p[field] for p in c.phases(run).values()]
    return float(max(vals)) if vals else None


@measure
def phase_sum(c: Ctx, run: RunKey, field: str) -> float | None:
    """`field` summed over the run's I/O phases."""
    vals = [p[field] for p in c.phases(run).values()]
    return float(sum(vals)) if vals else None
