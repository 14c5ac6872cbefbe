"""The working-set test's figure: 4 KiB random-read IOPS at QD32 (and p99 latency) against the
size of the region read, every drive on one chart."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np
from plotly.subplots import make_subplots
import plotly.graph_objects as go

from . import Drawn, FigureOptions
from .data import _num_map
from .html import _base_layout, _div, _l, _legend_below_plot
from .model import ReportRun
from . import png as P
from .png import WIDTH, _from_zero, _legend_below, _thousands, plt
from .style import COLORS


def figures(runs: Sequence[ReportRun], opts: FigureOptions) -> list[Drawn]:
    sets = working_sets(list(runs))
    if not sets:
        return []
    return [Drawn("working-set", lambda: working_set_figure(sets),
                  lambda out: [working_set_png(sets, out)])]


@dataclass
class WorkingSet:
    label: str
    gb: np.ndarray
    iops: np.ndarray
    lat_p99_us: np.ndarray | None = None
    color: str = ""  # the drive's colour in its report ("": by position)


def working_sets(runs: list[ReportRun]) -> list[WorkingSet]:
    out = []
    for r in runs:
        for d in r.drives:
            iops = _num_map(d.metrics.get("iops_by_gb"))
            if not iops:
                continue
            gb = np.array(sorted(iops))
            lat = _num_map(d.metrics.get("lat_p99_us_by_gb"))
            p99 = np.array([lat.get(g, np.nan) for g in gb]) if lat else None
            out.append(WorkingSet(d.shown, gb, np.array([iops[g] for g in gb]), p99, d.color))
    return out

def working_set_figure(sets: list[WorkingSet]) -> str:
    has_lat = any(s.lat_p99_us is not None for s in sets)
    rows = 2 if has_lat else 1
    fig = make_subplots(rows=rows, cols=1, shared_xaxes=True, vertical_spacing=0.08,
                        subplot_titles=["4 KiB random read IOPS, QD32"] + (
                            ["99th percentile latency"] if has_lat else []))
    ticks = sorted({float(g) for s in sets for g in s.gb})
    for i, s in enumerate(sets):
        col = s.color or COLORS[i % len(COLORS)]
        fig.add_trace(go.Scatter(x=_l(s.gb), y=_l(s.iops), name=s.label, mode="lines+markers",
                                 line=dict(color=col)), row=1, col=1)
        if has_lat and s.lat_p99_us is not None:
            fig.add_trace(go.Scatter(x=_l(s.gb), y=_l(s.lat_p99_us), name=s.label,
                                     mode="lines+markers", showlegend=False,
                                     line=dict(color=col, dash="dot")), row=2, col=1)
    fig.update_xaxes(type="log", tickvals=ticks, ticktext=[f"{t:g}" for t in ticks])
    fig.update_xaxes(title_text="working set (GB)", row=rows, col=1)
    fig.update_yaxes(title_text="IOPS", rangemode="tozero", row=1, col=1)
    if has_lat:
        fig.update_yaxes(title_text="µs", rangemode="tozero", row=2, col=1)
    _base_layout(fig, "Working-set size: 4 KiB random reads at QD32", 460 + 260 * (rows - 1))
    _legend_below_plot(fig)
    return _div(fig, "fig-working-set", figure="working-set")

def working_set_png(sets: list[WorkingSet], out_dir: Path) -> Path:
    has_lat = any(s.lat_p99_us is not None for s in sets)
    fig, grid = plt.subplots(2 if has_lat else 1, 1, figsize=(WIDTH, 5.0 if has_lat else 3.0),
                             sharex=True, squeeze=False, layout="constrained")
    axes = list(grid[:, 0])
    for i, s in enumerate(sets):
        col = s.color or COLORS[i % len(COLORS)]
        axes[0].plot(s.gb, s.iops, "o-", color=col, ms=3.5, label=s.label)
        if has_lat and s.lat_p99_us is not None:
            axes[1].plot(s.gb, s.lat_p99_us, "o--", color=col, ms=3.5)
    ticks = sorted({float(g) for s in sets for g in s.gb})
    axes[0].set(xscale="log", ylabel="IOPS", title="Working-set size: 4 KiB random reads at QD32")
    _from_zero(axes[0])
    _legend_below(fig, axes[0])
    axes[0].yaxis.set_major_formatter(_thousands)
    if has_lat:
        axes[1].set(ylabel="99th pct latency (µs)")
        _from_zero(axes[1])
    axes[-1].set_xticks(ticks, [f"{t:g}" for t in ticks])
    axes[-1].minorticks_off()
    axes[-1].set_xlabel("working set (GB)")
    return P._save(fig, out_dir, "working-set")
