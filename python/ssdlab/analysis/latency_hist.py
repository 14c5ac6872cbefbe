"""Percentiles from a stored latency histogram: within the bucket that holds the rank,
linearly interpolated, and never outside the observed minimum and maximum.

A stored histogram is its non-empty buckets: `edges_us` (one value per bucket) and
`counts`. What the value of a bucket means depends on who counted (the phase's latency
dict says so in `hist_edges`):
- "upper" (the simulator): the bucket's upper bound; exact 1 ns buckets below 64 ns, then
  32 buckets per power of two, so a bucket ending at u spans u - 2**(floor(log2(u - 1)) - 5).
- "fio" (fio's json+ bins): fio's value of the bucket, the middle of it; exact 1 ns buckets
  below 128 ns, then 64 per power of two (FIO_IO_U_PLAT_BITS = 6).
Taking a bucket's upper bound as the percentile puts the five nines above the maximum
whenever the slowest I/O sits low in its bucket; interpolating within the bucket, clipped
to [min, max], cannot.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..fioformat.plat import PLAT_BITS as FIO_PLAT_BITS  # fio: 2**6 buckets per power of two

LAYOUTS = ("upper", "fio")
SIM_SUB_BITS = 5  # the simulator: 2**5 buckets per power of two


def bucket_bounds(edges_us: Sequence[float] | np.ndarray, layout: str = "upper"
                  ) -> tuple[np.ndarray, np.ndarray]:
    """Each stored bucket's [lower, upper) bound in µs."""
    if layout not in LAYOUTS:
        raise ValueError(f"histogram layout '{layout}': one of {', '.join(LAYOUTS)}")
    ns = np.rint(np.asarray(edges_us, dtype=np.float64) * 1e3)
    if layout == "upper":
        e = np.floor(np.log2(np.maximum(ns - 1, 1)))
        width = np.where(ns <= 64, 1.0, np.exp2(np.maximum(e - SIM_SUB_BITS, 0)))
        lo, hi = ns - width, ns
    else:
        e = np.floor(np.log2(np.maximum(ns, 1)))
        width = np.where(ns < 2 << FIO_PLAT_BITS, 1.0, np.exp2(np.maximum(e - FIO_PLAT_BITS, 0)))
        lo = np.where(ns < 2 << FIO_PLAT_BITS, ns, ns - width / 2)
        hi = lo + width
    return lo / 1e3, hi / 1e3


def quantile(edges_us: Sequence[float] | np.ndarray, counts: Sequence[float] | np.ndarray,
             q: float, layout: str = "upper", min_us: float | None = None,
             max_us: float | None = None) -> float | None:
    """The q-quantile (0 < q <= 1) in µs, or None for an empty histogram. `min_us` and
    `max_us` are the observed extremes: the buckets holding them end there."""
    if not 0 < q <= 1:
        raise ValueError(f"quantile {q}: must be above 0 and at most 1")
    c = np.asarray(counts, dtype=np.float64)
    if c.size == 0 or c.sum() <= 0:
        return None
    if np.asarray(edges_us).size != c.size:
        raise ValueError(f"histogram of {np.asarray(edges_us).size} edges and {c.size} counts")
    order = np.argsort(np.asarray(edges_us, dtype=np.float64), kind="stable")
    lo, hi = bucket_bounds(np.asarray(edges_us, dtype=np.float64)[order], layout)
    c = c[order]
    if max_us is not None and np.isfinite(max_us):
        hi = np.minimum(hi, max_us)
    if min_us is not None and np.isfinite(min_us):
        lo = np.maximum(lo, min_us)
    lo = np.minimum(lo, hi)
    cum = np.cumsum(c)
    rank = q * cum[-1]
    i = int(min(np.searchsorted(cum, rank, side="left"), c.size - 1))
    while c[i] <= 0 and i + 1 < c.size:  # a zero-count bucket cannot hold the rank
        i += 1
    before = cum[i] - c[i]
    frac = min(max((rank - before) / c[i], 0.0), 1.0)
    v = float(lo[i] + frac * (hi[i] - lo[i]))
    if max_us is not None and np.isfinite(max_us):
        v = min(v, float(max_us))
    if min_us is not None and np.isfinite(min_us):
        v = max(v, float(min_us))
    return v


def layout_of(latency: dict) -> str:
    """The layout a phase's latency dict declares (stored before it did: the simulator's)."""
    v = str(latency.get("hist_edges") or "upper")
    return v if v in LAYOUTS else "upper"


def percentile(latency: dict, pct: float) -> float | None:
    """`pct` % (e.g. 99.999) of a phase's response times from its histogram (`edges_us`,
    `counts`), clipped to its observed min_us / max_us; None without a histogram."""
    edges, counts = latency.get("edges_us"), latency.get("counts")
    if edges is None or counts is None or np.asarray(counts).size == 0:
        return None

    def num(k: str) -> float | None:
        v = latency.get(k)
        try:
            return float(v) if v is not None else None
        except (TypeError, ValueError):
            return None

    return quantile(edges, counts, pct / 100.0, layout_of(latency), num("min_us"), num("max_us"))



def merge(latencies: Sequence[dict]) -> dict:
    """One histogram of several phases' (the I/Os of all of them): counts of equal edges
    added, min_us / max_us the extremes, the layout the first declares (all must agree)."""
    have = [x for x in latencies if x.get("edges_us") is not None and x.get("counts") is not None]
    if not have:
        return {}
    layouts = {layout_of(x) for x in have}
    if len(layouts) > 1:
        raise ValueError(f"histograms of different layouts: {', '.join(sorted(layouts))}")
    edges = np.concatenate([np.asarray(x["edges_us"], dtype=np.float64) for x in have])
    counts = np.concatenate([np.asarray(x["counts"], dtype=np.float64) for x in have])
    keys, inv = np.unique(np.rint(edges * 1e3), return_inverse=True)
    merged = np.zeros(keys.size)
    np.add.at(merged, inv, counts)

    def ext(k: str, f) -> float | None:
        vals = [float(x[k]) for x in have if x.get(k) is not None and np.isfinite(float(x[k]))]
        return f(vals) if vals else None

    return {"edges_us": keys / 1e3, "counts": merged, "hist_edges": layouts.pop(),
            "min_us": ext("min_us", min), "max_us": ext("max_us", max)}


__all__ = ["LAYOUTS", "bucket_bounds", "layout_of", "merge", "percentile", "quantile"]
