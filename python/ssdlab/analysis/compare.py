"""Comparison and capacity-scaling tables: the same metric side by side, with the %
change of each column against the first."""

from __future__ import annotations

import math
from typing import Any


def pct_change(base: float | None, value: float | None) -> float | None:
    if base is None or value is None or not math.isfinite(base) or not math.isfinite(value):
        return None
    if base == 0:
        return None
    return (value - base) / abs(base) * 100.0


def flatten_metrics(metrics: dict[str, Any]) -> dict[str, float | None]:
    """Numbers stay, objects such as iops_by_gb become iops_by_gb[8] ...; other values drop."""
    out: dict[str, float | None] = {}
    for name, value in metrics.items():
        if isinstance(value, bool):
            continue
        if isinstance(value, (int, float)) or value is None:
            out[name] = None if value is None else float(value)
        elif isinstance(value, dict):
            for k, v in value.items():
                if isinstance(v, (int, float)) and not isinstance(v, bool):
                    out[f"{name}[{k}]"] = float(v)
    return out


def comparison_table(columns: list[tuple[str, dict[str, Any]]]) -> list[dict[str, Any]]:
    """`columns`: (label, metrics) per drive or run. One row per metric name (in first
    appearance order): {"metric", "values": [...], "pct": [...]} where pct[i] is the change
    of values[i] against values[0] (None for the first column)."""
    flat = [(label, flatten_metrics(m)) for label, m in columns]
    names: list[str] = []
    for _, m in flat:
        names += [n for n in m if n not in names]
    rows = []
    for name in names:
        values = [m.get(name) for _, m in flat]
        pct = [None] + [pct_change(values[0], v) for v in values[1:]]
        rows.append({"metric": name, "values": values, "pct": pct})
    return rows
