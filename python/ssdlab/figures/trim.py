"""The TRIM test's figure: the clean sequential write pass under the pass after torture and
TRIM, per drive."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np
import plotly.graph_objects as go

from . import Drawn, FigureOptions
from .data import _phase_named
from .html import _base_layout, _div, _l, _legend_below_plot
from .model import ReportRun
from . import png as P
from .png import WIDTH, _from_zero, _legend_below, _thousands, plt
from .style import COLORS


def figures(runs: Sequence[ReportRun], opts: FigureOptions) -> list[Drawn]:
    curves = trim_curves(list(runs))
    if not curves:
        return []
    return [Drawn("trim", lambda: trim_figure(curves), lambda out: [trim_png(curves, out)])]


@dataclass
class TrimCurves:
    """TRIM validation: the clean sequential pass and the one after torture + TRIM."""

    label: str
    clean_gb: np.ndarray
    clean_mbps: np.ndarray
    after_gb: np.ndarray
    after_mbps: np.ndarray
    color: str = ""  # the drive's colour in its report ("": by position)


def trim_curves(runs: list[ReportRun]) -> list[TrimCurves]:
    out = []
    for r in runs:
        for d in r.drives:
            a, b = _phase_named(d, "clean"), _phase_named(d, "after_trim")
            if a is None or b is None or "mbps" not in a.segments or "mbps" not in b.segments:
                continue
            ga = a.segments.get("gb", np.arange(1.0, len(a.segments["mbps"]) + 1))
            gb = b.segments.get("gb", np.arange(1.0, len(b.segments["mbps"]) + 1))
            out.append(TrimCurves(d.shown, ga, a.segments["mbps"], gb, b.segments["mbps"], d.color))
    return out

def trim_figure(curves: list[TrimCurves]) -> str:
    """Per drive: the clean pass (thin, grey) under the pass after torture + TRIM."""
    fig = go.Figure()
    for i, c in enumerate(curves):
        col = c.color or COLORS[i % len(COLORS)]
        fig.add_trace(go.Scatter(x=_l(c.clean_gb), y=_l(c.clean_mbps), mode="lines",
                                 name=f"{c.label}: clean", legendgroup=c.label,
                                 line=dict(color=col, width=1, dash="dot")))
        fig.add_trace(go.Scatter(x=_l(c.after_gb), y=_l(c.after_mbps), mode="lines",
                                 name=f"{c.label}: after TRIM", legendgroup=c.label,
                                 line=dict(color=col, width=1.5)))
    _base_layout(fig, "TRIM validation: sequential write pass, clean vs after torture + TRIM",
                 500)
    _legend_below_plot(fig)
    fig.update_xaxes(title_text="GB written")
    fig.update_yaxes(title_text="MB/s", rangemode="tozero")
    return _div(fig, "fig-trim", figure="trim")

def trim_png(curves: list[TrimCurves], out_dir: Path) -> Path:
    fig, ax = plt.subplots(figsize=(WIDTH, 3.2), layout="constrained")
    for i, c in enumerate(curves):
        col = c.color or COLORS[i % len(COLORS)]
        ax.plot(c.clean_gb, c.clean_mbps, color=col, lw=0.8, ls=":", label=f"{c.label}: clean")
        ax.plot(c.after_gb, c.after_mbps, color=col, lw=1.1, label=f"{c.label}: after TRIM")
    ax.set(xlabel="GB written", ylabel="MB/s", xlim=(0, None),
           title="TRIM validation: sequential write pass, clean vs after torture + TRIM")
    _from_zero(ax)
    ax.yaxis.set_major_formatter(_thousands)
    _legend_below(fig, ax, ncols=2)
    return P._save(fig, out_dir, "trim")
