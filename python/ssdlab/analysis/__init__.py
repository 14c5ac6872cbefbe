"""Pure functions that turn recorded series into the figures reviews report."""

from .compare import comparison_table, flatten_metrics, pct_change
from .slc import FillShape, fill_shape, rate_mbps
from .stats import Summary, summary
from .steady import SteadyState, round_seconds, steady_state

__all__ = [
    "FillShape", "Summary", "SteadyState", "comparison_table", "fill_shape", "flatten_metrics",
    "pct_change", "rate_mbps", "round_seconds", "steady_state", "summary",
]
