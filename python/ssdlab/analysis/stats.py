"""Summary statistics of a per-second series."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Summary:
    mean: float
    stdev: float
    p1_low: float  # 1st percentile: the level only the worst 1 % of samples fall below
    min: float


def summary(values) -> Summary:
    """Mean, population standard deviation, 1st percentile and minimum; NaNs ignored."""
    v = np.asarray(values, dtype=np.float64)
    v = v[np.isfinite(v)]
    if v.size == 0:
        raise ValueError("summary of an empty series")
    # method="lower" picks a real sample, so min <= p1_low <= max always holds exactly
    return Summary(mean=float(v.mean()), stdev=float(v.std()),
                   p1_low=float(np.percentile(v, 1, method="lower")), min=float(v.min()))
