"""One PNG per figure, for publication: each test draws its own (methodology.Test.figures);
this writes them all in the shared style. matplotlib is imported where they are drawn: a
process that hands the drawing to workers does not pay for it."""

from __future__ import annotations

import tempfile
from pathlib import Path

from ..figures import FigureOptions
from ..figures.model import ReportRun
from .page import by_test


def write_pngs(runs: list[ReportRun], out_dir: Path, y_max: float | None = None) -> list[Path]:
    from ..figures.png import STYLE, plt

    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    opts = FigureOptions(y_max=y_max)
    paths: list[Path] = []
    with plt.rc_context(STYLE):
        for test, mine in by_test(runs):
            for f in test.figures(mine, opts):
                paths += f.png(out_dir)
    return paths


def pngs_of_test(runs: list[ReportRun], y_max: float | None = None) -> list[tuple[str, bytes]]:
    """The PNGs of one test's runs as (file name, contents), drawn by
    `write_pngs` into a private temporary directory: a worker process (on another machine
    too) draws them, the report's own process writes them where the report goes."""
    with tempfile.TemporaryDirectory(prefix="ssdlab-png-") as tmp:
        return [(p.name, p.read_bytes()) for p in write_pngs(runs, Path(tmp), y_max)]


__all__ = ["pngs_of_test", "write_pngs"]
