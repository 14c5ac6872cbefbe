"""Log axes for per-second IOPS, shared by both exporters: a range that shows the data,
labelled ticks, and a floor line for the seconds at 0 IOPS that a log axis cannot place."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class LogAxis:
    """A log IOPS axis that shows its data: the range covers every positive second (and
    at least `MIN_DECADES`, so a steady band is read against its scale rather than
    stretched to fill the panel), ticks are labelled, and seconds at 0 IOPS, which a log
    axis cannot place, sit on a floor line below the data whose tick reads "0". Missing
    seconds (NaN) stay gaps."""

    lo: float  # axis range
    hi: float
    ticks: list[float]
    labels: list[str]
    floor: float | None = None  # where 0-IOPS seconds are drawn; None: the data has none

    def plotted(self, iops: np.ndarray) -> np.ndarray:
        """The values to draw: 0 on the floor, NaN kept."""
        v = np.asarray(iops, dtype=float)
        return np.where(v == 0, self.floor if self.floor else np.nan, v)


MIN_DECADES = 1.0
FLOOR_GAP = 2.5  # the floor sits this factor below the axis' lowest data level


def log_axis(arrays: list[np.ndarray]) -> LogAxis:
    vals = np.concatenate([np.asarray(a, dtype=float).ravel() for a in arrays] or [np.ones(1)])
    vals = vals[np.isfinite(vals)]
    pos = vals[vals > 0]
    zeros = bool((vals == 0).any())
    if not pos.size:
        pos = np.ones(1)
    lo, hi = float(pos.min()), float(pos.max())
    span = 10.0 ** MIN_DECADES
    if hi / lo < span:  # widen around the (geometric) middle of the data
        mid = np.sqrt(lo * hi)
        lo, hi = mid / np.sqrt(span), mid * np.sqrt(span)
    lo, hi = lo / 1.15, hi * 1.15
    decades = np.log10(hi / lo)
    steps = (1, 2, 5) if decades > 1.3 else (1, 1.5, 2, 3, 5, 7)
    e0, e1 = int(np.floor(np.log10(lo))), int(np.ceil(np.log10(hi)))
    ticks = [m * 10.0 ** e for e in range(e0, e1 + 1) for m in steps if lo <= m * 10.0 ** e <= hi]
    labels = [si(v) for v in ticks]
    floor = None
    if zeros:
        floor = lo / FLOOR_GAP
        ticks, labels = [floor] + ticks, ["0"] + labels
        lo = floor / 1.4
    return LogAxis(lo, hi, ticks, labels, floor)


def panel_notes(iops: np.ndarray, scale: str) -> str:
    """What a per-second IOPS panel's title says about it: where its 0-IOPS seconds are
    (log panels) and that gaps are missing samples."""
    v = np.asarray(iops, dtype=float)
    notes = []
    if scale == "log" and (v == 0).any():
        notes.append("0-IOPS seconds on the bottom line")
    if np.isnan(v).any():
        notes.append("gaps: missing samples")
    return "; ".join(notes)


def si(v: float) -> str:
    """2000 -> 2k, 1.5e6 -> 1.5M."""
    for div, suf in ((1e6, "M"), (1e3, "k")):
        if v >= div:
            return f"{v / div:g}{suf}"
    return f"{v:g}"
