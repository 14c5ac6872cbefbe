"""The report's own data model: plain dataclasses of numpy arrays and floats.

The exporters (html.py, png.py) read only these, so they can be built and tested from
synthetic data without a store or a simulator; report/store_adapter.py is the one adapter
to the store.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np


@dataclass
class ReportPhase:
    """One phase as recorded: the columns of a PhaseResult (see targets/base.py)."""

    name: str
    series: dict[str, np.ndarray] = field(default_factory=dict)
    segments: dict[str, np.ndarray] = field(default_factory=dict)
    latency: dict[str, Any] = field(default_factory=dict)
    totals: dict[str, float] = field(default_factory=dict)
    kind: str = "io"

    @classmethod
    def from_result(cls, name: str, result: Any) -> "ReportPhase":
        """From a phase.PhaseResult (or anything with the same four attributes)."""
        phase = getattr(result, "phase", None)
        return cls(name=name or getattr(phase, "name", "") or "",
                   series=_arrays(result.series), segments=_arrays(result.segments),
                   latency=dict(result.latency or {}), totals=dict(result.totals or {}),
                   kind=getattr(phase, "kind", "io") or "io")


@dataclass
class ReportDrive:
    """One drive's part of a run. `metrics` are the test's scalar figures (a dict such as
    `iops_by_gb` may appear as a value); `repeats` holds per-repeat values of a metric
    (quick tests) so that the spread, and clusters, can be shown."""

    drive: str  # e.g. "sim:tlc-256" or "/dev/nvme0n1"
    label: str  # human name shown in legends, e.g. "TLC 256 GB"
    metrics: dict[str, Any] = field(default_factory=dict)
    phases: list[ReportPhase] = field(default_factory=list)
    repeats: dict[str, list[float]] = field(default_factory=dict)
    status: str = "complete"
    kind: str = "sim"  # "sim" | "block" | "file"
    # the drive's stored identity (model, firmware, serial, capacity, extra: what the target
    # knew: fio version, logical block, write cache, platform), for report headers
    identity: dict[str, Any] = field(default_factory=dict)
    color: str = ""  # the drive's colour in every figure of its report ("": by position)

    @property
    def shown(self) -> str:
        """The name figures show (titles, legends)."""
        return marked(self.label, self.status)


def marked(label: str, status: str) -> str:
    """A drive cut short (interrupted, stale, failed, still running) says so wherever it is
    named: its figures hold what was recorded, and must not pass for a whole run's."""
    return label if status in ("complete", "") else f"{label} ({status})"


@dataclass
class ReportRun:
    run_id: int
    test: str  # "fill", "consistency", "working-set", "quick", ...
    drives: list[ReportDrive] = field(default_factory=list)
    tags: dict[str, Any] = field(default_factory=dict)  # testbed, methodology_version ...
    spare_pct: float = 0.0  # extra spare area the test confined itself to (consistency)


def _arrays(cols: dict | None) -> dict[str, np.ndarray]:
    return {k: np.asarray(v, dtype=float) for k, v in (cols or {}).items()}
