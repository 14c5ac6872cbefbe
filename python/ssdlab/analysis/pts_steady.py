"""The steady-state rule of the SNIA Solid State Storage Performance Test Specification
(PTS 2.0.2, definition 2.1.24), applied to one value per round of each of a test's
tracking variables (the IOPS test has three: 4 KiB 0/100, 64 KiB 65/35 and 1024 KiB
100/0 IOPS).

A measurement window is 5 consecutive rounds, x-4 to x. A tracking variable y is steady
in it when
- Range(y): the data excursion, max - min of its 5 values, is no more than 20 % of their
  average, and
- Slope(y): max - min of the best linear (least-squares) fit through the 5 (round, value)
  points, which is |slope| x (5 - 1) rounds, is within 10 % of their average.
A test is steady in a window when every one of its tracking variables is steady in that
same window. The check runs after every round from round 5 on; the first steady window
ends the test and its last round x is the round where steady state was reached. A test
runs at most 25 rounds; without a steady window by then, rounds 21-25 are reported as the
measurement window, steady state NOT ACHIEVED.

`settle` applies the rule to a time series (one value per minute, XSR's access groups):
there a slow ramp can pass the rule minute by minute, so a settled window must also sit
at the series' final level.

Pure functions: round values in, verdicts out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
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
        # the last rounds of a run cut to fewer than WINDOW (--rounds) are no measurement
        # window, however flat
        return len(self.values) >= WINDOW and self.data_ok and self.slope_ok

    def fit(self, rounds: Sequence[float]) -> np.ndarray:
        """The least-squares line at the given round numbers (for the plot)."""
        return self.intercept + self.slope * np.asarray(rounds, dtype=np.float64)

    def as_dict(self) -> dict:
        return {"first_round": self.first_round, "last_round": self.last_round,
                "values": list(self.values), "average": self.average, "data_excursion": self.data_excursion,
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


@dataclass(frozen=True)
class Joint:
    """The steady-state outcome of a test with several tracking variables: steady in a
    window only when every variable is steady in that same window."""

    reached: bool
    round: int | None  # x: the last round of the first window where all were steady
    rounds: int  # rounds run
    windows: dict[str, Window]  # each variable's measurement window (rounds x-4..x)

    @property
    def first_round(self) -> int | None:
        w = next(iter(self.windows.values()), None)
        return None if w is None else w.first_round

    @property
    def last_round(self) -> int | None:
        w = next(iter(self.windows.values()), None)
        return None if w is None else w.last_round

    @property
    def failing(self) -> list[str]:
        """The variables not steady in the reported window."""
        return [k for k, w in self.windows.items() if not w.steady]


def _rounds(tracks: Mapping[str, Sequence[float]], max_rounds: int) -> dict[str, list[float]]:
    if not tracks:
        raise ValueError("the steady-state rule needs at least one tracking variable")
    n = min(min(len(v) for v in tracks.values()), max_rounds)
    return {k: [float(x) for x in v][:n] for k, v in tracks.items()}


def _windows(vals: dict[str, list[float]], last: int) -> dict[str, Window]:
    return {k: window(v[last - WINDOW:last] if last >= WINDOW else v[:last], last)
            for k, v in vals.items()}


def joint(tracks: Mapping[str, Sequence[float]], max_rounds: int = MAX_ROUNDS) -> Joint:
    """The rounds of every tracking variable scanned in order, as the test runs them: the
    first window steady for all decides; otherwise the last window is reported."""
    vals = _rounds(tracks, max_rounds)
    n = len(next(iter(vals.values())))
    for last in range(WINDOW, n + 1):
        ws = _windows(vals, last)
        if all(w.steady for w in ws.values()):
            return Joint(True, last, n, ws)
    return Joint(False, None, n, _windows(vals, n) if n >= 2 else {})


def is_steady_all(tracks: Mapping[str, Sequence[float]]) -> bool:
    """True when the last WINDOW rounds are steady for every tracking variable."""
    vals = _rounds(tracks, 10**9)
    n = len(next(iter(vals.values())))
    return n >= WINDOW and all(w.steady for w in _windows(vals, n).values())


@dataclass(frozen=True)
class Settle:
    """When a per-minute series settled: the first 5-minute window that is steady by the
    rule and whose average lies within +-10 % (half the allowed data excursion) of the
    series' final level, the average of its last 5 minutes, which must be steady too."""

    final: Window | None  # the last 5 minutes (None: fewer than 5)
    window: Window | None  # the first settled window (None: never settled)

    @property
    def reached(self) -> bool:
        return self.window is not None

    @property
    def minute(self) -> int | None:
        """The minute steady state was reached: the settled window's last minute."""
        return None if self.window is None else self.window.last_round


def settle(values: Sequence[float] | np.ndarray) -> Settle:
    y = np.asarray(values, dtype=np.float64)
    if y.size < WINDOW:
        return Settle(None, None)
    final = window(y[-WINDOW:], int(y.size))
    if not final.steady:
        return Settle(final, None)
    band = MAX_DATA_EXCURSION / 2 * final.average
    for last in range(WINDOW, y.size + 1):
        w = window(y[last - WINDOW:last], last)
        if w.steady and abs(w.average - final.average) <= band:
            return Settle(final, w)
    return Settle(final, None)  # unreachable: the final window qualifies


__all__ = ["MAX_DATA_EXCURSION", "MAX_ROUNDS", "MAX_SLOPE_EXCURSION", "WINDOW", "Joint", "Settle",
           "Verdict", "Window", "is_steady", "is_steady_all", "joint", "settle", "verdict",
           "window"]
