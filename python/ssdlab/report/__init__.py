"""Reports: one self-contained HTML file (page.py) and one PNG per figure (pngs.py), drawn
from the plain data model (figures/model.py) by each test's own figures. The page and each
test's PNGs are independent units of work (executor.py): a review draws them on its worker
processes at once, anything else one after another in this process."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .. import safe_path
from . import previous
from ..figures.model import ReportDrive, ReportPhase, ReportRun
from .page import by_test, render
from .pngs import pngs_of_test
from .store_adapter import from_store

HTML_NAME = "report.html"


def build_runs_report(runs: list[ReportRun], out_dir: Path, y_max: float | None = None,
                      png: bool = True, title: str | None = None, executor: Any = None) -> Path:
    """Write report.html (and the PNGs) for already loaded runs; returns the HTML path.
    The page and each test's PNGs are drawn as units on `executor` (executor.py; None: in
    this process, one after another) and written here. Drawn in a private directory first
    and moved in by name, so a link another user put in `out_dir` is replaced, never
    written through (safe_path.staged)."""
    from ..executor import Executor, Unit
    from ..figures.style import color_drives

    color_drives(runs)
    # the page first: the longest unit (plotly's JSON of every run), then the PNGs
    units = [Unit(HTML_NAME, render, (runs, y_max, title), cost=len(runs) + 1.0)]
    if png:
        units += [Unit(test.name, pngs_of_test, (mine, y_max), cost=len(mine))
                  for test, mine in by_test(runs)]
    with previous.replacing(out_dir, f"the report directory {out_dir}") as stage:
        for done in (executor or Executor()).run(units):
            if done.error is not None:
                raise done.error
            if done.key == HTML_NAME:
                (stage / HTML_NAME).write_text(done.value, encoding="utf-8")
            else:
                for name, data in done.value:
                    (stage / name).write_bytes(data)
    return Path(safe_path.real(out_dir)) / HTML_NAME


def build_report(store: Any, run_ids: list[int], out_dir: Path,
                 y_max: float | None = None, executor: Any = None) -> Path:
    """Load `run_ids` from an ssdlab.store.Store and write the report into out_dir
    (`executor`: as build_runs_report)."""
    runs = from_store(store, list(run_ids))
    if not runs:
        raise ValueError(f"no runs to report: {list(run_ids)}")
    title = "ssdlab report: " + ", ".join(f"run {r.run_id} ({r.test})" for r in runs)
    return build_runs_report(runs, out_dir, y_max=y_max, title=title, executor=executor)


__all__ = ["build_report", "build_runs_report", "from_store", "ReportRun", "ReportDrive",
           "ReportPhase"]
