"""The shape of a whole-drive fill curve (MB/s per GB written): SLC cache size, peak,
post-cache speed and recovery peaks.

- peak: the sustained burst rate, the fastest segment after the first (the first only
  when it is the whole cache, the drop right after it). The drive's write buffer (DRAM or
  SRAM, 0.5-8 MiB in the profiles) starts the write empty and takes its first bytes at the
  link's speed, ahead of the NAND: only the first segment is measured with that head start,
  every later one with the buffer full, taking in what the NAND drains. On short segments
  the head start is most of the difference (sim:tlc-256 over 0.8 GB in 24 MB segments:
  1952, then 1633-1646 MB/s); a cache of two segments or more is measured without it in
  its second.
- a write's last, partial segment (see segments.py) is on the curve and in the rates read
  as bytes over time, but not in the shape: a fraction of a segment is no point of the
  curve's shape (a few MB at the end would vote like a whole GB).
- the cache is the fast region the fill starts with. A fill starts fast when its first
  segment runs at least `START` x the fastest. The first *sustained drop* is then the first
  segment i where, against `DROP` x the mean speed of the segments before it (relative to
  the cached level, so a drive that falls from 2100 to 1600 MB/s has a cache too):
  the `SUSTAIN` segments from i all run below it, the median of every segment from i to
  the end runs below it (the speed stays down, recovery peaks aside), and those segments
  span at least `MIN_SPAN` of the fill. A cache that runs out leaves most of the fill
  behind it (an SLC cache takes two to four times its size in native blocks, so it is
  under half the drive; the simulated profiles' are 2-17 %), while a slowdown in the
  last few segments cannot be told from a stall at the end. A drop right after the first
  segment must also fall below `START` x that segment: one segment alone cannot tell a
  cache from the write buffer's head start, which makes a short first segment faster
  (sim:tlc-256 over 0.8 GB in 25 MB segments: 1936, then 1630-1645 MB/s). And the drop is
  a step: the median of the `SUSTAIN` segments from i runs below `DROP` x the median of the
  (up to) `SUSTAIN` segments before it; a speed that declines evenly crosses the level
  somewhere with no knee there (500 falling to 300 MB/s over 256 GB read as a 166 GB
  cache). The SLC cache estimate is the GB written before the drop. A fill that does not start fast, or never drops that way,
  shows no cache (None): a valid answer.
- a recovery peak is a rise, after the drop, from below to at least halfway between the
  post-cache median and the peak.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .segments import partial_tail

START = 0.75
DROP = 0.85
SUSTAIN = 3
MIN_SPAN = 0.10  # share of the fill's segments the drop must leave behind it
RECOVERY = 0.5


@dataclass(frozen=True)
class FillShape:
    peak_mbps: float
    drop_index: int | None  # first segment of the sustained drop
    slc_cache_gb: float | None
    recovery_peaks: int


def first_sustained_drop(mbps: np.ndarray) -> int | None:
    n = mbps.size
    span = max(SUSTAIN, int(np.ceil(MIN_SPAN * n)))
    before = np.cumsum(mbps)[:-1] / np.arange(1, n)  # mean of segments 0..i-1
    for i in range(1, n - span + 1):
        level = DROP * before[i - 1]
        if i == 1:  # a head start, unlike a one-segment cache, is shallow
            level = min(level, START * mbps[0])
        if (mbps[i : i + SUSTAIN] < level).all() and np.median(mbps[i:]) < level and is_step(mbps, i):
            return i
    return None


def is_step(mbps: np.ndarray, i: int) -> bool:
    """The speed falls at i: the segments from i run well below those just before it."""
    before = np.median(mbps[max(0, i - SUSTAIN) : i])
    return bool(np.median(mbps[i : i + SUSTAIN]) < DROP * before)


def count_recoveries(mbps: np.ndarray, start: int, peak: float) -> int:
    after = mbps[start:]
    if after.size < 2:
        return 0
    level = np.median(after) + RECOVERY * (peak - np.median(after))
    above = after >= level
    return int(np.count_nonzero(above[1:] & ~above[:-1]))


def sustained_peak(mbps: np.ndarray, drop: int | None) -> float:
    """The fastest segment after the first (the first: the buffer's head start), unless the
    first is the whole cache (the drop right after it) or the only segment."""
    return float(mbps[0] if mbps.size == 1 or drop == 1 else mbps[1:].max())


def fill_shape(gb, mbps) -> FillShape:
    """`gb`: cumulative GB at each segment end; `mbps`: that segment's speed."""
    gb = np.asarray(gb, dtype=np.float64)
    v = np.asarray(mbps, dtype=np.float64)
    if v.size == 0:
        raise ValueError("fill curve has no segments")
    if partial_tail(gb):
        gb, v = gb[:-1], v[:-1]
    drop = first_sustained_drop(v) if v[0] >= START * float(v.max()) else None
    peak = sustained_peak(v, drop)
    if drop is None:
        return FillShape(peak, None, None, 0)
    return FillShape(peak, drop, float(gb[drop - 1]), count_recoveries(v, drop, peak))


def rate_mbps(gb, t_s, start: int = 0) -> float:
    """Average MB/s over segments start.. end, as bytes over time (not a mean of speeds)."""
    gb = np.asarray(gb, dtype=np.float64)
    t = np.asarray(t_s, dtype=np.float64)
    g0, t0 = (gb[start - 1], t[start - 1]) if start > 0 else (0.0, 0.0)
    dt = t[-1] - t0
    return float((gb[-1] - g0) * 1000.0 / dt) if dt > 0 else float("nan")
