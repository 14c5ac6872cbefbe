"""A drive's run that ended with no metrics (cut short before its first figure, or failed)
says so in one line where its metrics would be, instead of an empty table (`results show`,
the report's comparison)."""

from __future__ import annotations

from typing import Any

_WHY = {"interrupted": "interrupted before any result",
        "stale": "stopped before any result (its process is gone)",
        "failed": "failed before any result"}


def has_result(metrics: dict[str, Any] | None) -> bool:
    """Any figure at all (quick's `repeats` alone, an empty list of runs, is none)."""
    return any(k != "repeats" for k in metrics or {})


def no_result(status: str) -> str:
    """The line for a drive with no metrics, by its status."""
    return _WHY.get(status, "no result")
