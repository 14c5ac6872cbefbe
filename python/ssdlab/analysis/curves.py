"""Curves reduced to a few numbers that do not depend on the drive's size: a latency
histogram's quantiles, a series binned by the bytes written (share of a phase), the fast
stretch at the start of a write burst (and the average speed up to small shares of it)."""

from __future__ import annotations

import math

import numpy as np

from .latency_hist import bucket_bounds

# a quantile of n samples is known to +-QUANTILE_Z x sqrt(q (1 - q) / n) of probability: the
# binomial spread of the count below it (3: 99.7 % of repeats of the same phase)
QUANTILE_Z = 3.0


def hist_quantiles(edges_us, counts, qs) -> list[float | None]:
    """Quantiles of a latency histogram given as its non-empty buckets (the simulator's
    upper bounds, fio's bucket values; both ~3 % wide): the bucket where the cumulative
    count reaches each quantile. None for an empty histogram."""
    e = np.asarray(edges_us, dtype=np.float64)
    c = np.asarray(counts, dtype=np.float64)
    n = min(e.size, c.size)
    e, c = e[:n], c[:n]
    order = np.argsort(e, kind="stable")
    e, c = e[order], c[order]
    total = float(c.sum())
    if n == 0 or total <= 0:
        return [None for _ in qs]
    cum = np.cumsum(c)
    return [float(e[min(int(np.searchsorted(cum, q * total, side="left")), n - 1)]) for q in qs]


def quantile_step(edges_us, counts, q: float, layout: str = "upper") -> float | None:
    """How far a histogram's q-quantile (as hist_quantiles reads it) is known, relative to
    it: the farther of the quantiles at q -+ the binomial spread of n samples, plus the width
    of its bucket. A quantile between two modes (an MLC drive's lower and upper page reads,
    half the reads each) can land on either in another run of the same phase: its step
    spans the gap. None for an empty histogram."""
    c = np.asarray(counts, dtype=np.float64)
    n = float(c.sum()) if c.size else 0.0
    if n <= 0:
        return None
    d = QUANTILE_Z * math.sqrt(q * (1.0 - q) / n)
    lo, mid, hi = hist_quantiles(edges_us, counts, [max(q - d, 0.0), q, min(q + d, 1.0)])
    if not mid or lo is None or hi is None:
        return None
    low, high = bucket_bounds([mid], layout)
    return (max(hi - mid, mid - lo) + float(high[0] - low[0])) / mid


def by_share(x, y, weights, n: int) -> list[float | None]:
    """`y` (a per-second rate) averaged over each of `n` equal shares of `x` (cumulative
    bytes at each second's end), weighted by `weights` (the seconds' lengths): the rate of
    each tenth of a write burst, however long the drive took for it."""
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    w = np.asarray(weights, dtype=np.float64)
    if x.size == 0 or x[-1] <= 0:
        return [None] * n
    start = np.r_[0.0, x[:-1]]
    out: list[float | None] = []
    for k in range(n):
        lo, hi = x[-1] * k / n, x[-1] * (k + 1) / n
        # the part of each second's bytes that falls in [lo, hi)
        span = np.clip(np.minimum(x, hi) - np.maximum(start, lo), 0.0, None)
        share = np.divide(span, x - start, out=np.zeros_like(span), where=(x - start) > 0)
        wt = w * share
        out.append(float((y * wt).sum() / wt.sum()) if wt.sum() > 0 else None)
    return out


def rate_by_share(gb, t_s, n: int) -> list[float | None]:
    """MB/s of each of `n` equal shares of a write (bytes over time, from per-segment
    cumulative GB and seconds): a fill curve that reads the same at any drive size."""
    g = np.r_[0.0, np.asarray(gb, dtype=np.float64)]
    t = np.r_[0.0, np.asarray(t_s, dtype=np.float64)]
    if g[-1] <= 0:
        return [None] * n
    marks = np.linspace(0.0, g[-1], n + 1)
    tt = np.interp(marks, g, t)
    dt = np.diff(tt)
    return [float((marks[k + 1] - marks[k]) * 1000.0 / dt[k]) if dt[k] > 0 else None for k in range(n)]


def average_by_share(gb, t_s, n: int) -> list[float | None]:
    """MB/s from the start of a write to the end of each of its `n` shares: a cumulative
    average, which moves smoothly as a cache grows or shrinks (a binned rate jumps from the
    cached speed to the native one as the cache's end crosses the bin)."""
    g = np.r_[0.0, np.asarray(gb, dtype=np.float64)]
    t = np.r_[0.0, np.asarray(t_s, dtype=np.float64)]
    if g[-1] <= 0:
        return [None] * n
    marks = np.linspace(0.0, g[-1], n + 1)[1:]
    tt = np.interp(marks, g, t)
    return [float(m * 1000.0 / x) if x > 0 else None for m, x in zip(marks, tt)]


def average_to(gb, t_s, shares, at_least: float | None = None) -> list[float | None]:
    """MB/s from the start of a write to each of `shares` of it (cumulative GB and seconds of
    its segments, interpolated within a segment). With `at_least` (MB/s), a segment slower
    than that counts at that speed: a stall lands anywhere in a write (at another place on a
    drive of another size), so the average shows only what runs faster, such as a cache."""
    g = np.r_[0.0, np.asarray(gb, dtype=np.float64)]
    t = np.r_[0.0, np.asarray(t_s, dtype=np.float64)]
    if g[-1] <= 0:
        return [None for _ in shares]
    if at_least is not None and at_least > 0:
        dt = np.minimum(np.diff(t), np.diff(g) * 1000.0 / at_least)
        t = np.r_[0.0, np.cumsum(dt)]
    marks = np.asarray(shares, dtype=np.float64) * g[-1]
    tt = np.interp(marks, g, t)
    return [float(m * 1000.0 / x) if x > 0 else None for m, x in zip(marks, tt)]
