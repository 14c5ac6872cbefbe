"""The end of --minutes as a hard stop: a trial (or any run of the fit) still going when the
fit's time ends is stopped where it is, at its drive's next simulated second (the simulator
hands each second's row to a listener, which raises OutOfTime), and dropped; one not begun
by then does not begin. The stages' own shares of the time decide what begins (a round that
would end past its share is not begun); this is what bounds what they could not foresee (a
machine whose load doubles a trial's time, a first batch that takes longer than the whole
budget).

The stop is a wall-clock time (time.time()) in the worker: a pool's workers and a Ray
cluster's machines share it (a cluster's clocks are kept in step by NTP), while
time.monotonic() is one machine's."""

from __future__ import annotations

import math
import time
from typing import Any, Callable


class OutOfTime(Exception):
    """A run stopped at the fit's end (`began`: stopped part way; else it never began)."""

    def __init__(self, began: bool = True):
        super().__init__(began)
        self.began = began

    def __str__(self) -> str:
        return "stopped at the end of --minutes" if self.began else "not begun: --minutes had ended"


def wall(until: float) -> float | None:
    """`until` (a time.monotonic()) as a time.time() for the workers; None without a bound."""
    if until == math.inf:
        return None
    return time.time() + (until - time.monotonic())


def check(stop_at: float | None, began: bool = True) -> None:
    """OutOfTime once `stop_at` (a time.time()) has passed."""
    if stop_at is not None and time.time() >= stop_at:
        raise OutOfTime(began)


def watch(stop_at: float | None) -> Callable[[int, Any], Callable[[Any], None]] | None:
    """A walk_phases `on_start` that stops a run at `stop_at`: before each phase and at each
    simulated second of it (None without a stop: the simulator then calls no listener)."""
    if stop_at is None:
        return None

    def on_sample(_row: Any) -> None:
        check(stop_at)

    def on_start(_seq: int, _phase: Any) -> Callable[[Any], None]:
        check(stop_at)
        return on_sample

    return on_start
