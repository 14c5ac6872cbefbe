"""Reports: one self-contained HTML file (page.py) and one PNG per figure (pngs.py), drawn
from the plain data model (figures/model.py) by each test's own figures."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .. import safe_path
from ..figures.model import ReportDrive, ReportPhase, ReportRun
from .page import write_html
from .pngs import write_pngs
from .store_adapter import from_store

HTML_NAME = "report.html"


def build_runs_report(runs: list[ReportRun], out_dir: Path, y_max: float | None = None,
                      png: bool = True, title: str | None = None) -> Path:
    """Write report.html (and the PNGs) for already loaded runs; returns the HTML path.
    Drawn in a private directory first and moved in by name, so a link another user put
    in `out_dir` is replaced, never written through (safe_path.staged)."""
    with safe_path.staged(out_dir, f"the report directory {out_dir}") as stage:
        write_html(runs, stage / HTML_NAME, y_max=y_max, title=title)
        if png:
            write_pngs(runs, stage, y_max=y_max)
    return Path(safe_path.real(out_dir)) / HTML_NAME


def build_report(store: Any, run_ids: list[int], out_dir: Path,
                 y_max: float | None = None) -> Path:
    """Load `run_ids` from an ssdlab.store.Store and write the report into out_dir."""
    runs = from_store(store, list(run_ids))
    if not runs:
        raise ValueError(f"no runs to report: {list(run_ids)}")
    title = "ssdlab report: " + ", ".join(f"run {r.run_id} ({r.test})" for r in runs)
    return build_runs_report(runs, out_dir, y_max=y_max, title=title)


__all__ = ["build_report", "build_runs_report", "from_store", "ReportRun", "ReportDrive",
           "ReportPhase"]
