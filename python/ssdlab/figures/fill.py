"""The fill test's figures: write speed per GB written, every drive on one y scale, with
the simulator's counters (or a real drive's temperature) beneath each curve."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ..analysis.segments import completed
from . import FigureOptions, Drawn
from . import data as D
from . import html as H
from . import png as P
from .data import GB, Counters, _counters, _io_phases, _series
from .model import ReportDrive, ReportPhase, ReportRun, marked
from .png import plt
from .style import COLORS


def figures(runs: Sequence[ReportRun], opts: FigureOptions) -> list[Drawn]:
    curves = fill_curves(list(runs))
    if not curves:
        return []
    y_top = fill_y_max(curves, opts.y_max)

    def html() -> str:
        return (f'<p class="meta">One y scale for all drives; beneath each curve, the '
                f"simulator's write amplification, SLC cache and free blocks, or a real drive's "
                f'temperature. <label>y-axis top (MB/s): <input type="number" id="fill-ymax" '
                f'min="1" step="100" value="{y_top:g}"></label></p>'
                + "".join(fill_figures(curves, y_top)) + f"<script>{YMAX_JS}</script>")

    return [Drawn("fill", html, lambda out: fill_pngs(curves, y_top, out))]


@dataclass
class FillCurve:
    run_id: int
    drive: str
    label: str
    gb: np.ndarray
    mbps: np.ndarray
    counters: Counters | None = None
    metrics: dict[str, Any] = field(default_factory=dict)
    status: str = "complete"
    color: str = ""  # the drive's colour in its report ("": by position)

    @property
    def shown(self) -> str:
        return marked(self.label, self.status)


def _fill_phase(d: ReportDrive) -> ReportPhase | None:
    """The whole-drive write: the phase with the most per-GB segments."""
    cands = [p for p in _io_phases(d) if len(p.segments.get("mbps", ())) > 0]
    named = [p for p in cands if "fill" in p.name.lower()]
    return max(named or cands, key=lambda p: len(p.segments["mbps"]), default=None)


def fill_curves(runs: list[ReportRun]) -> list[FillCurve]:
    out = []
    for r in runs:
        for d in r.drives:
            p = _fill_phase(d)
            if p is None:
                continue
            gb, mbps, seg_t = p.segments.get("gb"), p.segments["mbps"], p.segments.get("t_s")
            if gb is None or len(gb) != len(mbps):
                gb = np.arange(1, len(mbps) + 1, dtype=float)
            elif seg_t is not None and len(seg_t) == len(gb):
                # to the pass's end, its last, partial segment too
                gb, mbps, seg_t = completed(gb, mbps, seg_t, p.totals.get("write_bytes"),
                                            p.totals.get("duration_s"))
            counters = None
            s = _series(p)
            if "host_write_bytes" in s:  # counters are per second: put them on GB written
                counters = _counters(s, np.cumsum(s["host_write_bytes"]) / GB)
            elif "t_s" in s and seg_t is not None and len(seg_t) == len(gb):
                # seconds -> GB written, from (0 s, 0 GB) through each segment's end
                counters = _counters(s, np.interp(s["t_s"], np.r_[0.0, seg_t], np.r_[0.0, gb]))
            out.append(FillCurve(r.run_id, d.drive, d.label, gb, mbps, counters, d.metrics, d.status, d.color))
    return out


def fill_y_max(curves: list[FillCurve], y_max: float | None) -> float:
    """One y scale for every compared drive: the user's, else just above the highest peak."""
    if y_max:
        return float(y_max)
    peaks = [float(np.nanmax(c.mbps)) for c in curves if len(c.mbps)]
    top = max(peaks, default=100.0)
    step = 100.0 if top <= 2000 else 500.0
    return float(np.ceil(top * 1.05 / step) * step)


# --- HTML ---------------------------------------------------------------------------------

def fill_figures(curves: list[FillCurve], y_top: float) -> list[str]:
    out = []
    if len(curves) > 1:
        fig = go.Figure()
        for i, c in enumerate(curves):
            fig.add_trace(go.Scatter(x=H._l(c.gb), y=H._l(c.mbps), name=c.shown, mode="lines",
                                     line=dict(color=c.color or COLORS[i % len(COLORS)], width=1.5)))
        H._base_layout(fig, "Whole-drive fill: write speed per GB written", 500)
        H._legend_below_plot(fig)
        fig.update_xaxes(title_text="GB written")
        fig.update_yaxes(title_text="MB/s", range=[0, y_top])
        out.append(H._div(fig, "fig-fill-overlay", figure="fill-overlay"))
    for i, c in enumerate(curves):
        panels = c.counters.panels() if c.counters else []
        rows = 1 + len(panels)
        fig = make_subplots(rows=rows, cols=1, shared_xaxes=True, vertical_spacing=0.06,
                            row_heights=[0.55] + [0.45 / max(len(panels), 1)] * len(panels),
                            subplot_titles=[""] + [p.title for p in panels])
        fig.add_trace(go.Scatter(x=H._l(c.gb), y=H._l(c.mbps), name=c.shown, mode="lines",
                                 showlegend=False,  # one drive: the title names it
                                 line=dict(color=c.color or COLORS[i % len(COLORS)], width=1.5)), row=1, col=1)
        fig.update_yaxes(title_text="MB/s", range=[0, y_top], row=1, col=1)
        for r, panel in enumerate(panels, start=2):
            H._add_counter_panel(fig, c.counters, panel, r)
        fig.update_xaxes(title_text="GB written", row=rows, col=1)
        H._base_layout(fig, f"Whole-drive fill: {c.shown}", 420 + 150 * len(panels))
        out.append(H._div(fig, f"fig-fill-{i}", figure="fill", drive=c.drive, label=c.label,
                        run=str(c.run_id)))
    return out


# The same y scale for every fill curve, changed in one place by the reader.
YMAX_JS = r"""
(function () {
  const input = document.getElementById('fill-ymax');
  input.addEventListener('change', function () {
    const v = parseFloat(input.value);
    if (!(v > 0)) return;
    document.querySelectorAll('#sec-fill .js-plotly-plot').forEach(function (gd) {
      Plotly.relayout(gd, {'yaxis.range': [0, v]});
    });
  });
})();
"""


# --- PNG ----------------------------------------------------------------------------------

def fill_pngs(curves: list[FillCurve], y_top: float, out_dir: Path) -> list[Path]:
    out = []
    if len(curves) > 1:
        fig, ax = plt.subplots(figsize=(P.WIDTH, 3.2), layout="constrained")
        for i, c in enumerate(curves):
            ax.plot(c.gb, c.mbps, color=c.color or COLORS[i % len(COLORS)], label=c.shown)
        ax.set(xlabel="GB written", ylabel="MB/s", ylim=(0, y_top), xlim=(0, None),
               title="Whole-drive fill: write speed per GB written")
        P._legend_below(fig, ax)
        ax.yaxis.set_major_formatter(P._thousands)
        out.append(P._save(fig, out_dir, "fill-overlay"))
    for i, c in enumerate(curves):
        panels = c.counters.panels() if c.counters else []
        fig, axes = P._stack(len(panels))
        ax = axes[0]
        ax.plot(c.gb, c.mbps, color=c.color or COLORS[i % len(COLORS)])
        ax.set(ylabel="MB/s", ylim=(0, y_top), title=f"Whole-drive fill: {c.shown}")
        ax.yaxis.set_major_formatter(P._thousands)
        P.counter_axes(axes[1:], c.counters, panels)
        for a in axes:
            a.set_xlim(0, float(c.gb[-1]) if len(c.gb) else None)
        for a in axes[:-1]:
            a.tick_params(labelbottom=False)
        axes[-1].set_xlabel("GB written")
        fig.align_ylabels(axes)
        out.append(P._save(fig, out_dir, f"fill-{i + 1}-{D.slug(c.label)}"))
    return out
