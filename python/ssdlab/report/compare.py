"""Comparison tables: per test (and spare area), every drive's metrics side by side with
the % change against the first drive, and warnings where the runs are not alike."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..figures.data import _f, _is_spread, slug, spare_label
from ..figures.model import ReportRun
from ..methodology import run_verdict, spare_matters
from ..methodology.settings import differing


@dataclass
class CompareTable:
    test: str
    spare_pct: float
    run_ids: list[int]
    labels: list[str]
    rows: list[tuple[str, list[float | None], list[float | None]]]  # metric, values, % vs first
    warnings: list[str] = field(default_factory=list)
    statuses: list[str] = field(default_factory=list)  # each drive's (labels' order)
    verdicts: dict[str, str] = field(default_factory=dict)  # label: why a complete run lacks figures

    @property
    def spare_text(self) -> str:
        """Spare area matters to consistency runs (and any run that restricted its LBAs)."""
        return spare_label(self.spare_pct) if self.spare_pct or spare_matters(self.test) else ""

    @property
    def key(self) -> str:
        return slug(f"{self.test}-{self.spare_text}")


def compare_tables(runs: list[ReportRun]) -> list[CompareTable]:
    """Per test (and spare area), every drive side by side with % change vs the first."""
    groups: dict[tuple[str, float], list[ReportRun]] = {}
    for r in runs:
        groups.setdefault((r.test, float(r.spare_pct)), []).append(r)
    tables = []
    for (test, spare), rs in groups.items():
        drives = [d for r in rs for d in r.drives]
        if not drives:
            continue
        flat = [_flatten(d.metrics) for d in drives]
        names: list[str] = []
        for m in flat:  # a spread (x_stdev) stays out: the figures show it as error bars
            names += [k for k in m if k not in names and not _is_spread(k, m)]
        rows = []
        for n in names:
            vals = [m.get(n) for m in flat]
            base = vals[0]
            pct = [None if (v is None or base in (None, 0)) else 100.0 * (v - base) / abs(base)
                   for v in vals]
            rows.append((n, vals, pct))
        warns = []
        beds = {str(r.tags.get("testbed", "")) for r in rs}
        if len(beds) > 1:
            warns.append("runs come from different testbeds: " + ", ".join(sorted(beds)))
        vers = {str(r.tags.get("methodology_version", "")) for r in rs}
        if len(vers) > 1:
            warns.append("runs use different methodology versions: " + ", ".join(sorted(vers)))
        warns += differing((r.run_id, r.test, r.tags.get("args") or {}) for r in rs)
        bad = [f"{d.label} ({d.status})" for d in drives if d.status != "complete"]
        if bad:
            warns.append("incomplete: " + ", ".join(bad))
        said = verdicts(test, rs)
        warns += [f"{lab}: {line}" for lab, line in said.items()]
        tables.append(CompareTable(test, spare, [r.run_id for r in rs],
                                   [d.label for d in drives], rows, warns, [d.status for d in drives], said))
    return tables


def verdicts(test: str, runs: list[ReportRun]) -> dict[str, str]:
    """Each complete drive's verdict on its run, by label: a figure it lacks is then
    explained, not left blank or read as a failed run."""
    return {d.label: line for r in runs for d in r.drives
            if (line := run_verdict(test, r.tags.get("args"), d.metrics, d.status))}


def _flatten(metrics: dict[str, Any]) -> dict[str, float]:
    """Scalar metrics as they are; a {key: number} metric (iops_by_gb) as name[key] rows."""
    out: dict[str, float] = {}
    for k, v in metrics.items():
        if isinstance(v, dict):
            for kk, vv in v.items():
                if (x := _f(vv)) is not None:
                    out[f"{k}[{kk}]"] = x
        elif (x := _f(v)) is not None:
            out[k] = x
    return out
