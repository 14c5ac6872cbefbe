"""A stored run's settings: the options that shape its numbers (seconds, spare area, a
test's own options, --set, the seed), and where runs of one test differ in them, so a
comparison says so instead of passing a setting's effect off as the drive's."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from . import get

# args that name what was run or why, not how: the drives, a sweep's id and point, a review
NOT_SETTINGS = frozenset({"drives", "sweep", "point", "review"})
SHARED = ("spare", "repeat", "interval", "seconds")  # `run`'s options, read by some tests only


def settings(test: str, args: dict[str, Any]) -> dict[str, Any]:
    """The run's settings; a shared option its test does not read is left out (every run
    stores `repeat`, a fill never reads it)."""
    try:
        unread = set(get(test).unused(SHARED))
    except ValueError:  # a test of another version: every stored option counts
        unread = set()
    return {k: v for k, v in (args or {}).items()
            if k not in NOT_SETTINGS and f"--{k}" not in unread}


def _shown(v: Any) -> str:
    if v is None:
        return "default"
    if isinstance(v, list):  # --set: its overrides
        v = "; ".join(map(str, v)) or "none"
    if isinstance(v, float) and v.is_integer():
        v = int(v)
    text = v if isinstance(v, str) else json.dumps(v, default=str, separators=(",", " "))
    return text if len(text) <= 40 else text[:37] + "..."


def differing(runs: Iterable[tuple[int, str, dict[str, Any]]]) -> list[str]:
    """One line per setting in which runs of the same test differ, each value with its
    runs: "consistency runs differ in seconds: 120 (runs 5, 7), 300 (run 6)"."""
    by_test: dict[str, list[tuple[int, dict[str, Any]]]] = {}
    for run_id, test, args in runs:
        by_test.setdefault(test, []).append((run_id, settings(test, args)))
    lines = []
    for test, rs in by_test.items():
        for key in dict.fromkeys(k for _, s in rs for k in s):
            values: dict[str, list[int]] = {}
            for run_id, s in rs:
                values.setdefault(_shown(s.get(key)), []).append(run_id)
            if len(values) > 1:
                said = ", ".join(f"{v} (run{'s' if len(ids) > 1 else ''} {', '.join(map(str, ids))})"
                                 for v, ids in values.items())
                lines.append(f"{test} runs differ in {key}: {said}")
    return lines


__all__ = ["differing", "settings"]
