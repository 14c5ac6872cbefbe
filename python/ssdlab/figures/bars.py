"""Bars of a test's single-valued MB/s metrics (the idle test's sequential passes, the copy
test's transfers): one group, every drive side by side."""

from __future__ import annotations

import html
from functools import partial
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from . import Drawn, FigureOptions
from .data import QuickGroup, QuickSeries, _f, generic_title
from .html import bars_figure
from .model import ReportRun
from .png import bars_png


def _html(g: QuickGroup, meta: str) -> str:
    return meta + bars_figure(g)


def _png(g: QuickGroup, out_dir: Path) -> list[Path]:
    return [bars_png(g, out_dir)]


def drawn(g: QuickGroup, meta: str = "") -> Drawn:
    """A group of bars as a figure, `meta` (a note) above it in HTML."""
    return Drawn(g.fig_key, partial(_html, g, meta), partial(_png, g))


def scalar_bars(runs: Sequence[ReportRun], test: str, title: str, metrics: list[str],
                names: dict[str, str] | None = None, note: str = "") -> list[QuickGroup]:
    drives = [d for r in runs for d in r.drives]
    present = [m for m in metrics if any(_f(d.metrics.get(m)) is not None for d in drives)]
    if not present:
        return []
    series = []
    for d in drives:
        v = np.array([_f(d.metrics.get(m)) if _f(d.metrics.get(m)) is not None else np.nan
                      for m in present])
        series.append(QuickSeries(d.shown, v, v, v, [[] for _ in present], d.color))
    return [QuickGroup("MB/s", "", present, series, test=test, title=title, note=note,
                       names=[(names or {}).get(m) or generic_title(m).replace(" (MB/s)", "")
                              for m in present])]


def scalar_figures(test: str, title: str, metrics: list[str], names: dict[str, str] | None = None,
                   note: str = "") -> Callable[[Sequence[ReportRun], FigureOptions], list[Drawn]]:
    """The figures function of a test shown as one group of bars."""

    def figures(runs: Sequence[ReportRun], opts: FigureOptions) -> list[Drawn]:
        meta = f'<p class="meta" id="note-{test}">{html.escape(note)}</p>' if note else ""
        return [drawn(g, meta) for g in scalar_bars(runs, test, title, metrics, names, note)]

    return figures
