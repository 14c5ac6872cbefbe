"""The steady-state rule of the SNIA Solid State Storage Performance Test Specification
(PTS 2.0.2), applied to one value per round of a test (its tracking variable: e.g. the
4 KiB random-write IOPS of each IOPS round).

A measurement window is 5 consecutive rounds. It is steady when
- the data excursion, max - min of the 5 values, is at most 20 % of their average, and
- the slope excursion, how far the least-squares line through the 5 (round, value) points
  rises or falls across the window (|slope| x (5 - 1) rounds), is at most 10 % of their
  average.
The check runs after every round from round 5 on; the first steady window ends the test
and its last round is the round where steady state was reached. A test runs at most 25
rounds; without a steady window by then, the last 5 rounds are reported as the
measurement window, marked not steady.

Pure functions: round values in, verdicts out.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

WINDOW = 5  # rounds in a measurement window
MAX_ROUNDS = 25
MAX_DATA_EXCURSION = 0.20  # of the window average
MAX_SLOPE_EXCURSION = 0.10  # of the window average


@dataclass(frozen=True)
class Window:
    """The verdict on one measurement window (rounds numbered from 1)."""

    first_round: int
    last_round: int
    values: tuple[float, ...]
    average: float
    data_excursion: float  # max - min
    slope: float  # least-squares slope per round
    intercept: float  # the line's value at round 0 (y = intercept + slope x round)
    slope_excursion: float  # |slope| x (rounds in the window - 1)

    @property
    def data_ok(self) -> bool:
        return self.average > 0 and self.data_excursion <= MAX_DATA_EXCURSION * self.average

    @property
    def slope_ok(self) -> bool:
        return self.average > 0 and self.slope_excursion <= MAX_SLOPE_EXCURSION * self.average

    @property
    def steady(self) -> bool:
        return self.data_ok and self.slope_ok

    def fit(self, rounds: Sequence[float]) -> np.ndarray:
        """The least-squares line at the given round numbers (for the plot)."""
        return self.intercept + self.slope * np.asarray(rounds, dtype=np.float64)

    def as_dict(self) -> dict:
        return {"first_round": self.first_round, "last_round": self.last_round,
                "average": self.average, "data_excursion": self.data_excursion,
                "data_excursion_limit": MAX_DATA_EXCURSION * self.average,
                "slope": self.slope, "intercept": self.intercept,
                "slope_excursion": self.slope_excursion,
                "slope_excursion_limit": MAX_SLOPE_EXCURSION * self.average,
                "steady": self.steady}


def window(values: Sequence[float] | np.ndarray, last_round: int | None = None) -> Window:
    """The verdict on `values` (the window's rounds in order) ending at round `last_round`
    (default: len(values), the window starting at round 1)."""
    y = np.asarray(values, dtype=np.float64)
    if y.size < 2:
        raise ValueError(f"a measurement window needs at least 2 rounds, got {y.size}")
    last = int(last_round if last_round is not None else y.size)
    x = np.arange(last - y.size + 1, last + 1, dtype=np.float64)
    finite = bool(np.isfinite(y).all())
    slope, intercept = np.polyfit(x, y, 1) if finite else (np.nan, np.nan)
    avg = float(y.mean()) if finite else float("nan")
    return Window(first_round=int(x[0]), last_round=last, values=tuple(float(v) for v in y),
                  average=avg, data_excursion=float(y.max() - y.min()) if finite else float("nan"),
                  slope=float(slope), intercept=float(intercept),
                  slope_excursion=float(abs(slope) * (y.size - 1)))


def is_steady(rounds_so_far: Sequence[float]) -> bool:
    """True when the last WINDOW rounds form a steady window (the check after each round)."""
    return len(rounds_so_far) >= WINDOW and window(rounds_so_far[-WINDOW:], len(rounds_so_far)).steady


@dataclass(frozen=True)
class Verdict:
    """The steady-state outcome of a test's rounds."""

    reached: bool
    round: int | None  # the round where steady state was reached (last of the window)
    rounds: int  # rounds run
    window: Window | None  # the measurement window (the last 5 rounds when never steady)

    def as_dict(self) -> dict:
        return {"steady_reached": self.reached, "steady_round": self.round,
                "rounds": self.rounds,
                "window": self.window.as_dict() if self.window is not None else None}


def verdict(values: Sequence[float], max_rounds: int = MAX_ROUNDS) -> Verdict:
    """Scan the rounds in order the way a test runs them: the first steady window (from
    round WINDOW on, at most max_rounds) decides; otherwise the last window is reported."""
    vals = [float(v) for v in values][:max_rounds]
    for last in range(WINDOW, len(vals) + 1):
        w = window(vals[last - WINDOW:last], last)
        if w.steady:
            return Verdict(True, last, len(vals), w)
    last_w = window(vals[-WINDOW:], len(vals)) if len(vals) >= 2 else None
    return Verdict(False, None, len(vals), last_w)


__all__ = ["MAX_DATA_EXCURSION", "MAX_ROUNDS", "MAX_SLOPE_EXCURSION", "WINDOW", "Verdict",
           "Window", "is_steady", "verdict", "window"]
