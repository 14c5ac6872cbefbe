"""Figures of the tests: the report's data model (model.py), the data and drawing every
test's figures share (data.py, html.py, png.py, log_axis.py, style.py), and each test's
own figures (fill.py, consistency.py, ...). A test names its figures function in its
methodology.Test; the report (report/) asks each test and draws what it gets."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable


@dataclass(frozen=True)
class FigureOptions:
    """What the reader of a report chose for every figure."""

    y_max: float | None = None  # fill curves: the y-axis top (MB/s); None: above the highest peak


@dataclass
class Drawn:
    """A figure (methodology.test.Figure): its HTML fragment and its PNGs, drawn on demand."""

    key: str
    draw_html: Callable[[], str]
    draw_png: Callable[[Path], list[Path]]

    def html(self) -> str:
        return self.draw_html()

    def png(self, out_dir: Path) -> list[Path]:
        return self.draw_png(out_dir)
