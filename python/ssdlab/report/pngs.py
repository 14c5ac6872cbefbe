"""One PNG per figure, for publication: each test draws its own (methodology.Test.figures);
this writes them all in the shared style."""

from __future__ import annotations

from pathlib import Path

from ..figures import FigureOptions
from ..figures.model import ReportRun
from ..figures.png import STYLE, plt
from .page import by_test


def write_pngs(runs: list[ReportRun], out_dir: Path, y_max: float | None = None) -> list[Path]:
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    opts = FigureOptions(y_max=y_max)
    paths: list[Path] = []
    with plt.rc_context(STYLE):
        for test, mine in by_test(runs):
            for f in test.figures(mine, opts):
                paths += f.png(out_dir)
    return paths
