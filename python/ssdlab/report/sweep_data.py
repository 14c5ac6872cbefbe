"""A sweep as a table (one row per grid point: its parameters and metrics) and what the
sweep report draws from it: each metric's mean against each swept parameter (a main
effect: averaged over the other parameters), two-parameter means for heat maps, and the
sensitivity table (how far each parameter moves each metric). Pure functions of the table."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np


@dataclass
class SweepTable:
    sweep_id: str
    test: str
    axes: dict[str, list[Any]]  # parameter -> its values, in plotting order
    rows: list[dict[str, Any]]  # run_id, status, one key per parameter, one per metric
    metrics: list[str] = field(default_factory=list)  # numeric metrics, first seen first

    @property
    def swept(self) -> list[str]:
        return [k for k, v in self.axes.items() if len(v) > 1]

    def complete(self) -> list[dict]:
        return [r for r in self.rows if r["status"] == "complete"]


def as_value(v: Any) -> Any:
    """A parameter value as the grid gave it: numbers as numbers ("8" -> 8), text as text."""
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return int(v) if float(v).is_integer() else float(v)
    try:
        x = float(v)
    except (TypeError, ValueError):
        return v
    return int(x) if x.is_integer() and math.isfinite(x) else x


def _order(values: list[Any]) -> list[Any]:
    uniq = list(dict.fromkeys(values))
    if all(isinstance(v, (int, float)) for v in uniq):
        return sorted(uniq)
    return uniq


def stored_runs(store: Any, sweep_id: str) -> list[dict]:
    """The sweep's runs, oldest first; one line when the store has none (a mistyped id)."""
    from ..sweep import sweep_runs

    runs = sweep_runs(store, sweep_id)
    if not runs:
        raise ValueError(f"no sweep {sweep_id} in {store.path} (see `ssdlab results list`)")
    return runs


def from_store(store: Any, sweep_id: str) -> SweepTable:
    """The latest run of every point of the sweep (a complete one when there is one)."""
    from ..sweep import point_key

    runs = stored_runs(store, sweep_id)
    best: dict[str, dict] = {}
    for r in runs:  # oldest first: a later run replaces an earlier one unless that one completed
        k = point_key(r["point"])
        if k not in best or best[k]["status"] != "complete":
            best[k] = r
    rows, names, test = [], [], ""
    for r in best.values():
        run = store.run(r["id"])
        test = run["test"]
        metrics = run["drives"][0]["metrics"] if run["drives"] else {}
        row = {"run_id": r["id"], "status": run["status"]}
        row.update({k: as_value(v) for k, v in r["point"].items()})
        for m, v in metrics.items():
            if isinstance(v, (int, float)) and not isinstance(v, bool):
                row[m] = float(v)
                if m not in names:
                    names.append(m)
        rows.append(row)
    params = list(dict.fromkeys(k for r in best.values() for k in r["point"]))
    axes = {p: _order([row[p] for row in rows if p in row]) for p in params}
    return SweepTable(sweep_id, test, axes, rows, names)


def _mean(values: list[float | None]) -> float:
    """The mean of the finite values (NaN when none is)."""
    vals = [v for v in values if v is not None and math.isfinite(v)]
    return float(np.mean(vals)) if vals else math.nan


def main_effect(t: SweepTable, metric: str, param: str) -> list[float]:
    """The metric's mean at each value of `param`, over every other parameter: over the
    combinations of the others that have a result at every value of `param`, so a point
    with none (failed, interrupted) leaves no value's mean over other settings than the
    next's (NaN everywhere when no combination is whole)."""
    others = [k for k in t.axes if k != param]
    at: dict[tuple, dict[Any, float]] = {}
    for r in t.complete():
        v = r.get(metric)
        if v is not None and math.isfinite(v):
            at.setdefault(tuple(r.get(k) for k in others), {})[r.get(param)] = v
    whole = [c for c in at.values() if all(v in c for v in t.axes[param])]
    return [_mean([c[v] for c in whole]) for v in t.axes[param]]


def missing(t: SweepTable) -> int:
    """Points of the grid with no complete run (failed, interrupted, never run)."""
    return math.prod(len(v) for v in t.axes.values()) - len(t.complete())


def two_way(t: SweepTable, metric: str, p: str, q: str) -> np.ndarray:
    """Mean of the metric for each (value of q, value of p): rows q, columns p."""
    done = t.complete()
    return np.array([[_mean([r.get(metric) for r in done if r.get(p) == a and r.get(q) == b])
                      for a in t.axes[p]] for b in t.axes[q]], dtype=float)


def sensitivity(t: SweepTable) -> list[dict]:
    """Per metric, each swept parameter's swing: (largest - smallest main-effect mean) over
    the metric's mean, in %; `top` names the parameter that moves it most."""
    out = []
    done = t.complete()
    for m in t.metrics:
        overall = _mean([r.get(m) for r in done])
        swing: dict[str, float | None] = {}
        for p in t.swept:
            eff = [v for v in main_effect(t, m, p) if math.isfinite(v)]
            if len(eff) < 2 or not math.isfinite(overall) or overall == 0:
                swing[p] = None
            else:
                swing[p] = 100.0 * (max(eff) - min(eff)) / abs(overall)
        known = {p: s for p, s in swing.items() if s is not None}
        out.append({"metric": m, "mean": overall, "swing_pct": swing,
                    "top": max(known, key=lambda p: known[p]) if known else None})
    return out


def most_sensitive_pair(t: SweepTable, metric: str, sens: list[dict]) -> tuple[str, str] | None:
    """The two swept parameters that move `metric` most (the heat map's axes)."""
    if len(t.swept) < 2:
        return None
    row = next((s for s in sens if s["metric"] == metric), None)
    order = sorted(t.swept, key=lambda p: -((row or {}).get("swing_pct", {}).get(p) or 0.0))
    a, b = order[0], order[1]
    return (a, b) if t.swept.index(a) < t.swept.index(b) else (b, a)


def columns(t: SweepTable) -> list[str]:
    return ["sweep", "run_id", "status", *t.axes, *t.metrics]


def records(t: SweepTable) -> list[dict]:
    return [{"sweep": t.sweep_id, **{c: r.get(c) for c in columns(t)[1:]}} for r in t.rows]
