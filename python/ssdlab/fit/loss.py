"""A trial's figures and its loss: every figure's error in units of its tolerance, r =
(simulated - published) / (published x tolerance) (for a range: 0 inside, outside 1 plus the
distance to the nearer end in tolerances, since a range's ends are strict), squared and capped
at CAP, averaged within each group of figures and summed over the groups (a group of 40
fill-curve points weighs as much as one of two read rates). A figure passes at |r| <= 1, as its
own check says."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from ..calibration import Ctx, Figure, RunKey
from .evidence import TWIN, Evidence

CAP = 400.0  # a figure's squared error counts at most this much (20 tolerances)


@dataclass
class Trial:
    number: int
    u: dict[str, float]  # the unit cube
    values: dict[str, float | None]  # figure name -> simulated
    loss: float
    scale: float = 1.0  # the trial drive's sizes over the drive's (1: full size)
    group_loss: dict[str, float] = field(default_factory=dict)
    error: str | None = None  # why the trial did not run (a profile the simulator refuses)


def residual(f: Figure, sim: float | None) -> float:
    """The figure's error in tolerances (0 inside a range); a missing value counts as CAP."""
    if sim is None or not math.isfinite(sim):
        return math.sqrt(CAP)
    tol = max(f.tol, 1e-6)
    if f.value is not None:
        if f.value == 0:
            return min(abs(sim), math.sqrt(CAP))
        return (sim - f.value) / (abs(f.value) * tol)
    # a range's ends are strict (Figure.check): just outside is a miss, not 0.1 tolerance
    if f.lo is not None and sim < f.lo:
        return (sim - f.lo) / (abs(f.lo) * tol) - 1.0 if f.lo else -math.sqrt(CAP)
    if f.hi is not None and sim > f.hi:
        return (sim - f.hi) / (abs(f.hi) * tol) + 1.0 if f.hi else min(1.0 + sim, math.sqrt(CAP))
    return 0.0


def measure_all(ev: Evidence, rundocs: dict[RunKey, dict[str, Any]]) -> dict[str, float | None]:
    c = Ctx(TWIN, {(TWIN, r): doc for r, doc in rundocs.items()})
    out: dict[str, float | None] = {}
    for f in ev.figures:
        try:
            v = f.measure(c)
        except (KeyError, ValueError, TypeError, IndexError, ZeroDivisionError):
            v = None
        out[f.name] = None if v is None or not math.isfinite(v) else float(v)
    return out


def loss_of(ev: Evidence, values: dict[str, float | None]) -> tuple[float, dict[str, float]]:
    per: dict[str, list[float]] = {}
    for f in ev.figures:
        r = residual(f, values.get(f.name))
        per.setdefault(ev.groups[f.name], []).append(min(r * r, CAP))
    groups = {g: sum(v) / len(v) for g, v in per.items()}
    return sum(groups.values()), groups
