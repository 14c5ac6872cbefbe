"""Steady state after the SNIA Solid State Storage Performance Test Specification (PTS).

PTS measures in *rounds* and calls a window of 5 consecutive rounds steady when
(1) the range of the round values is <= 20 % of their mean, and
(2) the excursion of the least-squares line across the window (slope x (rounds - 1))
    is <= 10 % of their mean.
Our tests record one sample per second, so a round is `round_s` consecutive seconds and
its value is the mean of those seconds (see `round_seconds` for the default length).
Steady state begins at the first second of the first steady window.

PTS applies the rule to a preconditioned drive. Our runs start from a fresh fill, so the
burst before garbage collection starts can be a flat plateau that passes the rule too.
A window therefore counts only if its level is within `MAX_RANGE` of the level of the
last window of the run, the band the drive settles in; given `not_before` (when GC can
have begun: gc_onset.py), only if it begins at or after that second; and only if the level
of the rounds from it to the end, which the figures average, moves by at most
`MAX_EXCURSION`: neither the line across them nor the means of their windows (a line
cannot see a hump the drive climbs and falls back from).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

WINDOW = 5
MAX_RANGE = 0.20
MAX_EXCURSION = 0.10


@dataclass(frozen=True)
class SteadyState:
    start_s: int | None  # sample index (seconds) where the first steady window begins
    round_s: int
    rounds: np.ndarray  # per-round means

    @property
    def reached(self) -> bool:
        return self.start_s is not None


def round_seconds(n_samples: int) -> int:
    """Default round length: 60 s (the PTS measurement window is about a minute) for
    runs of 20 minutes or more, shorter for short runs so that a run holds >= 20 rounds."""
    return int(max(1, min(60, n_samples // 20)))


def window_is_steady(rounds) -> bool:
    r = np.asarray(rounds, dtype=np.float64)
    mean = r.mean()
    if not np.isfinite(mean) or mean <= 0:
        return False
    x = np.arange(r.size, dtype=np.float64)
    slope = np.polyfit(x, r, 1)[0]
    return (r.max() - r.min() <= MAX_RANGE * mean
            and abs(slope) * (r.size - 1) <= MAX_EXCURSION * mean)


def _level_holds(rounds: np.ndarray) -> bool:
    """The figures are over every second from the start to the end: the line across those
    rounds moves by at most MAX_EXCURSION of their mean (a drive still recovering from GC's
    onset passes the rule window by window, on short rounds), and so do the means of their
    windows, max - min (a window on the rising edge of a hump passes the rule and the line
    across a hump is flat; a window's mean, unlike a round's, is not thrown by one noisy
    round)."""
    r = rounds[np.isfinite(rounds)]
    if r.size < 2:
        return True
    limit = MAX_EXCURSION * r.mean()
    slope = np.polyfit(np.arange(r.size, dtype=np.float64), r, 1)[0]
    means = np.convolve(r, np.full(WINDOW, 1 / WINDOW), mode="valid") if r.size >= WINDOW else r[:1]
    return abs(slope) * (r.size - 1) <= limit and means.max() - means.min() <= limit


def _round_means(rows: np.ndarray) -> np.ndarray:
    """Mean of each round over the seconds it has (a missing sample is NaN, not 0); a
    round with none is NaN and no window holding it is steady."""
    ok = np.isfinite(rows)
    k = ok.sum(axis=1)
    tot = np.where(ok, rows, 0.0).sum(axis=1)
    return np.where(k > 0, tot / np.maximum(k, 1), np.nan)


def steady_state(values, round_s: int | None = None, not_before: int | None = 0) -> SteadyState:
    """`not_before` None: the drive cannot have reached steady state (GC never began)."""
    v = np.asarray(values, dtype=np.float64)
    rs = round_s or round_seconds(v.size)
    n = v.size // rs
    rounds = _round_means(v[: n * rs].reshape(n, rs)) if n else np.empty(0)
    tail = rounds[-WINDOW:][np.isfinite(rounds[-WINDOW:])] if n >= WINDOW else np.empty(0)
    final = tail.mean() if tail.size else np.nan
    first = n if not_before is None else -(-not_before // rs)  # the first round from then
    for i in range(first, n - WINDOW + 1):
        w = rounds[i : i + WINDOW]
        if (window_is_steady(w) and abs(w.mean() - final) <= MAX_RANGE * final
                and _level_holds(rounds[i:])):
            return SteadyState(start_s=i * rs, round_s=rs, rounds=rounds)
    return SteadyState(start_s=None, round_s=rs, rounds=rounds)
