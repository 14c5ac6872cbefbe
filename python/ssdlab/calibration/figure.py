"""A calibration figure: a drive, the value or range a source gives, the test that measures it
on the simulated drive and how the number is read; and the context a measure reads from."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np

TOLERANCE = 0.15

# A run: (test, spare %, seconds or None, repeat, testbed). The testbed is the profile
# overrides (key=value) that stand for the host the source measured on: () is the review's,
# whose practical link limit some profiles carry as fitted values (docs/profiles.md).
RunKey = tuple[str, float, float | None, int, tuple[str, ...]]
FILL: RunKey = ("fill", 0.0, None, 1, ())
CONS0: RunKey = ("consistency", 0.0, None, 1, ())
CONS25: RunKey = ("consistency", 25.0, None, 1, ())
IDLE: RunKey = ("idle", 0.0, None, 1, ())  # 30 min idle, as the review
QUICK: RunKey = ("quick", 0.0, 1.0, 1, ())  # one run, 1 s per test: a read plateau is flat
WSET: RunKey = ("working-set", 0.0, None, 1, ())  # filled and settled; QD1 reads last (read QoS)
LOWQD: RunKey = ("low-qd-write", 0.0, None, 1, ())  # 3 min of 4 KiB QD3 random writes over 8 GB, as the review
TRIM60: RunKey = ("trim", 0.0, 3600.0, 1, ())  # 60 min of random writes before the TRIM, as the review


def on_testbed(run: RunKey, testbed: tuple[str, ...]) -> RunKey:
    """`run` on another host: the profile overrides that describe it."""
    return (*run[:4], tuple(testbed))  # type: ignore[return-value]


def testbed_flags(run: RunKey) -> str:
    """The run's host as `ssdlab run` options ("" for the review's)."""
    return " ".join(f"--set {o}" for o in run[4])


@dataclass(frozen=True)
class Figure:
    drive: str
    name: str
    run: RunKey
    measure: Callable[["Ctx"], float | None]
    value: float | None = None  # published value (pass within +-tol)
    lo: float | None = None  # or a published range [lo, hi] (either end may be open)
    hi: float | None = None
    unit: str = "MB/s"
    how: str = ""  # how the simulated value is read
    source: str = ""  # the published statement
    needs: tuple[tuple[str, RunKey], ...] = ()  # other (drive, run) the measure reads
    xfail: str | None = None  # why the current simulator cannot reach it (kept failing)
    tol: float = TOLERANCE  # relative tolerance around `value`
    kind: str = "published"  # published (methodology.md), spec sheet, latency, behaviour
    node: dict | None = None  # what the figure reads, as its figures file gives it (figures_file.py)

    def published(self) -> str:
        if self.value is not None:
            return f"{fmt(self.value)}"
        if self.lo is not None and self.hi is not None:
            return f"{fmt(self.lo)}..{fmt(self.hi)}"
        if self.lo is not None:
            return f">= {fmt(self.lo)}"
        return f"<= {fmt(self.hi)}"

    def published_numbers(self) -> dict[str, float | str | None]:
        """What published() shows, as numbers: the value, or the range's ends (None where
        open), and the unit."""
        return {"value": self.value, "lo": self.lo, "hi": self.hi, "unit": self.unit}

    def passing(self) -> tuple[float, float]:
        """The values `check` passes: the value +- its tolerance, or the range."""
        if self.value is not None:
            return self.value - abs(self.value) * self.tol, self.value + abs(self.value) * self.tol
        return -math.inf if self.lo is None else self.lo, math.inf if self.hi is None else self.hi

    def check(self, sim: float | None) -> tuple[bool, float | None]:
        """(pass, error): error is (sim - published) / published for a value; for a range
        0 inside, else the distance to the nearest bound relative to that bound."""
        if sim is None or not math.isfinite(sim):
            return False, None
        if self.value is not None:
            if self.value == 0:
                return sim == 0, None
            err = (sim - self.value) / abs(self.value)
            return abs(err) <= self.tol + 1e-12, err
        if self.lo is not None and sim < self.lo:
            return False, (sim - self.lo) / abs(self.lo) if self.lo else None
        if self.hi is not None and sim > self.hi:
            return False, (sim - self.hi) / abs(self.hi) if self.hi else None
        return True, 0.0


def fmt(v: float | None) -> str:
    if v is None:
        return "-"
    if abs(v) >= 100:
        return f"{v:.0f}"
    if abs(v) >= 10:
        return f"{v:.1f}"
    return f"{v:.3g}"


# ---- measurements ---------------------------------------------------------------------------
class Ctx:
    """What a measure reads: the metrics and fill segments of every run, by (drive, run)."""

    def __init__(self, drive: str, runs: dict[tuple[str, RunKey], dict]):
        self.drive, self.runs = drive, runs

    def m(self, run: RunKey, key: str, drive: str | None = None) -> float | None:
        v = self.runs[(drive or self.drive, run)]["metrics"].get(key)
        return None if v is None else float(v)

    def seg(self, drive: str | None = None, run: RunKey = FILL) -> tuple[np.ndarray, np.ndarray]:
        """Per-GB segments of the run's last pass (the fill; trim: the pass after TRIM)."""
        s = self.runs[(drive or self.drive, run)]["segments"]
        return np.asarray(s["gb"], dtype=float), np.asarray(s["mbps"], dtype=float)

    def capacity_gb(self, drive: str | None = None) -> float:
        return self.runs[(drive or self.drive, FILL)]["capacity"] / 1e9

    def phases(self, run: RunKey, drive: str | None = None) -> dict[str, dict]:
        """Per I/O phase of a run: max_latency_ms, zero_seconds."""
        return self.runs[(drive or self.drive, run)]["phases"]
