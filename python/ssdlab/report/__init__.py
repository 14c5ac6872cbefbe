"""Reports: one self-contained HTML file (page.py) and one PNG per figure (pngs.py), drawn
from the plain data model (figures/model.py) by each test's own figures. Each test's
section of the page and its PNGs are independent units of work (drawing.py, executor.py):
a review draws them on its worker processes, each test's as soon as it is stored; anything
else one after another in this process."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .. import safe_path
from ..figures.model import ReportDrive, ReportPhase, ReportRun
from .drawing import Drawing
from .page import assemble
from .store_adapter import from_store

HTML_NAME = "report.html"


def build_runs_report(runs: list[ReportRun], out_dir: Path, y_max: float | None = None,
                      png: bool = True, title: str | None = None, executor: Any = None,
                      drawing: Drawing | None = None) -> Path:
    """Write report.html (and the PNGs) for already loaded runs; returns the HTML path.
    Each test's section of the page and its PNGs are drawn as units on `executor`
    (executor.py; None: in this process, one after another), except those `drawing`
    already holds for these runs (drawing.py: a review draws each test as it ends; its
    `y_max` and `png` are then the report's), and written here. Drawn in a private
    directory first and moved in by name, so a link another user put in `out_dir` is
    replaced, never written through (safe_path.staged)."""
    from ..executor import Executor

    drawing = drawing or Drawing(y_max, png)
    for done in (executor or Executor()).run(drawing.missing(runs)):
        drawing.take(done)
    html = assemble(drawing.sections(runs), runs, title)
    with safe_path.staged(out_dir, f"the report directory {out_dir}") as stage:
        (stage / HTML_NAME).write_text(html, encoding="utf-8")
        for name, data in drawing.pngs(runs):
            (stage / name).write_bytes(data)
    return Path(safe_path.real(out_dir)) / HTML_NAME


def build_report(store: Any, run_ids: list[int], out_dir: Path,
                 y_max: float | None = None, executor: Any = None,
                 drawing: Drawing | None = None) -> Path:
    """Load `run_ids` from an ssdlab.store.Store and write the report into out_dir
    (`executor`, `drawing`: as build_runs_report)."""
    runs = from_store(store, list(run_ids))
    if not runs:
        raise ValueError(f"no runs to report: {list(run_ids)}")
    title = "ssdlab report: " + ", ".join(f"run {r.run_id} ({r.test})" for r in runs)
    return build_runs_report(runs, out_dir, y_max=y_max, title=title, executor=executor,
                             drawing=drawing)


__all__ = ["Drawing", "build_report", "build_runs_report", "from_store", "ReportRun", "ReportDrive",
           "ReportPhase"]
