"""Figures of the tests: the report's data model (model.py), the data and drawing every
test's figures share (data.py, html.py, png.py, log_axis.py, style.py), and each test's
own figures (fill.py, consistency.py, ...). A test names its figures function in its
methodology.Test; the report (report/) asks each test and draws what it gets."""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence


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


def lazy(module: str, attr: str = "figures", **build: Any) -> Callable[[Sequence[Any], FigureOptions], Any]:
    """A test's figures function, imported only when a report asks for it: drawing loads
    plotly and matplotlib, which would otherwise cost every `ssdlab` command about 2 s of
    start-up. With `build`, `attr` makes the figures function from those arguments."""

    def figures(runs: Sequence[Any], opts: FigureOptions) -> Any:
        found = getattr(importlib.import_module(f"{__name__}.{module}"), attr)
        return (found(**build) if build else found)(runs, opts)

    return figures
