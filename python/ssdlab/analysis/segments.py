"""A write's per-segment series (cumulative GB at each segment's end, that segment's MB/s,
seconds at its end) completed to the end of the write.

A write that is not a whole number of segments (a 250.06 GB area in 1 GB segments) ends
with a partial one. The simulator's and fio's series end with it; runs stored by builds whose
simulator recorded whole segments only do not, so the curve and every rate read from them
would stop short of the end. The phase's totals (bytes written, duration) still hold it: the
last segment is what lies between the series' end and theirs, at its own speed over its own
size (a series that already ends there is left as it is).
"""

from __future__ import annotations

import numpy as np

TAIL_MIN_BYTES = 4096  # less than one block past the series' end: rounding, not a segment


def completed(gb, mbps, t_s, write_bytes: float | None, duration_s: float | None
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """`gb`, `mbps`, `t_s` with the write's last, partial segment appended when the totals
    (`write_bytes`, `duration_s` of the whole write) go past the series' end."""
    g = np.asarray(gb, dtype=np.float64)
    v = np.asarray(mbps, dtype=np.float64)
    t = np.asarray(t_s, dtype=np.float64)
    if write_bytes is None or duration_s is None or not (g.size == v.size == t.size):
        return g, v, t
    g0, t0 = (float(g[-1]), float(t[-1])) if g.size else (0.0, 0.0)
    rest_gb, dt = float(write_bytes) / 1e9 - g0, float(duration_s) - t0
    if rest_gb * 1e9 < TAIL_MIN_BYTES or not dt > 0:
        return g, v, t
    return (np.r_[g, g0 + rest_gb], np.r_[v, rest_gb * 1000.0 / dt], np.r_[t, float(duration_s)])


def sizes_gb(gb) -> np.ndarray:
    """Each segment's own size (GB) from the cumulative GB at the segments' ends."""
    g = np.asarray(gb, dtype=np.float64)
    return np.diff(np.r_[0.0, g])


def partial_tail(gb) -> bool:
    """The last segment is shorter than the others (a write's last, partial segment)."""
    d = sizes_gb(gb)
    return bool(d.size >= 2 and d[-1] < 0.999 * float(np.median(d[:-1])))


def rate_last(gb, t_s, span_gb: float) -> float:
    """MB/s over the last `span_gb` GB of a write, as bytes over time (the time where it
    starts interpolated within its segment: with a last, partial segment the segments' ends
    no longer fall on it)."""
    g = np.r_[0.0, np.asarray(gb, dtype=np.float64)]
    t = np.r_[0.0, np.asarray(t_s, dtype=np.float64)]
    start = max(0.0, g[-1] - span_gb)
    dt = t[-1] - float(np.interp(start, g, t))
    return float((g[-1] - start) * 1000.0 / dt) if dt > 0 else float("nan")
