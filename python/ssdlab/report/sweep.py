"""The sweep report: sweep.html (self-contained, plotly inlined like report.html), one PNG
per metric, and the grid as grid.csv (and grid.parquet when pyarrow is installed:
`pip install 'ssdlab[parquet]'`). Element ids: table-sensitivity, table-grid,
fig-sweep-<metric> (main effects: a line per swept parameter), fig-sweep-<metric>-heat
(the two parameters that move the metric most)."""

from __future__ import annotations

import csv
import html as _html
import math
from pathlib import Path
from typing import Any

import plotly.graph_objects as go
from plotly.offline import get_plotlyjs
from plotly.subplots import make_subplots

from . import previous, sweep_data as S
from .. import safe_path
from ..store_export import csv_text
from ..figures.data import metric_title
from ..figures.html import FONT, _div
from ..figures.style import COLORS, ink_on
from .page import CSS

HTML_NAME = "sweep.html"


def _num(v: Any) -> str:
    if v is None or isinstance(v, float) and not math.isfinite(v):
        return "-"
    if isinstance(v, float):
        return f"{v:.4g}" if abs(v) < 1e4 else f"{v:,.0f}"
    return str(v)


def axis_title(p: str) -> str:
    """A swept parameter's axis title: the spare area's values are % of the LBAs."""
    return "spare (%)" if p == "spare" else p


def _x(t: S.SweepTable, p: str) -> list:
    return [str(v) for v in t.axes[p]]  # categories: every grid value gets its own tick


def lines_figure(t: S.SweepTable, metric: str) -> go.Figure:
    swept = t.swept
    fig = make_subplots(rows=1, cols=len(swept), shared_yaxes=True,
                        subplot_titles=[axis_title(p) for p in swept], horizontal_spacing=0.04)
    for i, p in enumerate(swept):
        y = S.main_effect(t, metric, p)
        fig.add_trace(go.Scatter(x=_x(t, p), y=[None if not math.isfinite(v) else v for v in y],
                                 mode="lines+markers", name=p, showlegend=False,
                                 line=dict(color=COLORS[i % len(COLORS)], width=2)),
                      row=1, col=i + 1)
        fig.update_xaxes(type="category", title_text=axis_title(p), row=1, col=i + 1)
    note = " (mean over the other parameters)" if len(swept) > 1 else ""
    fig.update_layout(title=dict(text=f"{metric}{note}", x=0.01), height=360,
                      font=FONT, margin=dict(l=70, r=20, t=80, b=60))
    fig.update_yaxes(title_text=metric_title(metric), row=1, col=1)
    return fig


def heat_figure(t: S.SweepTable, metric: str, p: str, q: str) -> go.Figure:
    z = S.two_way(t, metric, p, q)
    fig = go.Figure(go.Heatmap(
        x=_x(t, p), y=_x(t, q), z=[[None if not math.isfinite(v) else v for v in row] for row in z],
        colorscale="Viridis", colorbar=dict(title=metric),
        text=[[_num(v) for v in row] for row in z], texttemplate="%{text}"))
    others = [x for x in t.swept if x not in (p, q)]
    note = f" (mean over {', '.join(others)})" if others else ""
    fig.update_layout(title=dict(text=f"{metric}: {q} against {p}{note}", x=0.01), height=380,
                      font=FONT, margin=dict(l=90, r=20, t=80, b=60))
    fig.update_xaxes(type="category", title_text=axis_title(p))
    fig.update_yaxes(type="category", title_text=axis_title(q))
    return fig


def _pct(v: float | None) -> str:
    return "-" if v is None else f"{v:.1f} %"


def sensitivity_table(t: S.SweepTable, sens: list[dict]) -> str:
    e = _html.escape
    head = "".join(f"<th>{e(p)}</th>" for p in t.swept)
    rows = []
    for s in sens:
        cells = "".join(
            f'<td class="num{" better" if p == s["top"] else ""}">{_pct(s["swing_pct"][p])}</td>'
            for p in t.swept)
        rows.append(f"<tr><td>{e(s['metric'])}</td><td class=\"num\">{_num(s['mean'])}</td>{cells}"
                    f"<td>{e(s['top'] or '-')}</td></tr>")
    return ('<table class="compare" id="table-sensitivity"><thead><tr><th>metric</th><th>mean</th>'
            f"{head}<th>moved most by</th></tr></thead><tbody>{''.join(rows)}</tbody></table>")


def grid_table(t: S.SweepTable) -> str:
    e = _html.escape
    cols = ["run_id", "status", *t.axes, *t.metrics]
    head = "".join(f"<th>{e(c)}</th>" for c in cols)
    body = "".join("<tr>" + "".join(f'<td class="num">{e(_num(r.get(c)))}</td>' for c in cols)
                   + "</tr>" for r in t.rows)
    return (f'<table class="compare runs" id="table-grid"><thead><tr>{head}</tr></thead>'
            f"<tbody>{body}</tbody></table>")


def render(t: S.SweepTable) -> str:
    e = _html.escape
    sens = S.sensitivity(t)
    done = len(t.complete())
    parts = [f'<p class="meta">{e(t.test)}: {len(t.rows)} points, {done} complete. Parameters: '
             + "; ".join(f"{e(p)} = {', '.join(e(str(v)) for v in vals)}" for p, vals in t.axes.items())
             + '. Data: <a href="grid.csv">grid.csv</a>.</p>']
    if gone := S.missing(t):  # the means below leave them out: say so, and how
        parts.append(f'<p class="warn">⚠ {gone} of {gone + done} points have no result: each '
                     "parameter's means are over the combinations of the other parameters that "
                     "have a result at every one of its values (none: no line).</p>")
    if t.swept and t.metrics:
        parts.append('<section id="sec-sensitivity"><h2>Sensitivity</h2><p class="meta">Swing: '
                     "the largest minus the smallest mean of the metric across a parameter's "
                     "values (averaged over the other parameters), as % of the metric's mean.</p>"
                     f"{sensitivity_table(t, sens)}</section>")
        figs = []
        for m in t.metrics:
            figs.append(_div(lines_figure(t, m), f"fig-sweep-{m}"))
            pair = S.most_sensitive_pair(t, m, sens)
            if pair:
                figs.append(_div(heat_figure(t, m, *pair), f"fig-sweep-{m}-heat"))
        parts.append(f'<section id="sec-metrics"><h2>Metrics against the parameters</h2>{"".join(figs)}</section>')
    parts.append(f'<section id="sec-grid"><h2>Grid</h2>{grid_table(t)}</section>')
    title = f"ssdlab sweep {t.sweep_id}"
    return ("<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>{e(title)}</title><style>{CSS}</style>"
            f"<script>{get_plotlyjs()}</script></head><body><h1>{e(title)}</h1>"
            + "".join(parts) + "</body></html>")


def write_csv(t: S.SweepTable, path: Path) -> Path:
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=S.columns(t))
        w.writeheader()
        w.writerows({k: csv_text(v) for k, v in r.items()} for r in S.records(t))
    return path


def write_parquet(t: S.SweepTable, path: Path) -> Path | None:
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        return None
    recs = S.records(t)
    cols = {c: [r[c] for r in recs] for c in S.columns(t)}
    for c, v in cols.items():  # a parameter mixing numbers and names is stored as text
        if len({type(x) for x in v if x is not None} - {int, float}) and any(
                isinstance(x, (int, float)) for x in v):
            cols[c] = [None if x is None else str(x) for x in v]
    pq.write_table(pa.table(cols), path)
    return path


def png_figure(t: S.SweepTable, m: str, sens: list[dict]) -> Any:
    """One metric's PNG: a main-effect panel per swept parameter, all on one y scale (side
    by side, their slopes are read against each other), and the heat map of the two that
    move it most. None when nothing is swept."""
    import numpy as np

    from ..figures.png import WIDTH, plt

    pair = S.most_sensitive_pair(t, m, sens)
    n = len(t.swept) + (1 if pair else 0)
    if not n:
        return None
    fig, axes = plt.subplots(1, n, figsize=(WIDTH, 2.6), layout="constrained", squeeze=False)
    for i, p in enumerate(t.swept):
        ax = axes[0][i]
        if i:
            ax.sharey(axes[0][0])
        ax.plot(_x(t, p), S.main_effect(t, m, p), marker="o", color=COLORS[i % len(COLORS)])
        ax.set_xlabel(axis_title(p))
        ax.set_ylabel(metric_title(m) if i == 0 else "")  # with its unit
    if pair:
        ax = axes[0][-1]
        z = S.two_way(t, m, *pair)
        im = ax.imshow(z, origin="lower", aspect="auto", cmap="viridis")
        ax.set_xticks(range(len(t.axes[pair[0]])), _x(t, pair[0]))
        ax.set_yticks(range(len(t.axes[pair[1]])), _x(t, pair[1]))
        ax.set_xlabel(axis_title(pair[0]))
        ax.set_ylabel(axis_title(pair[1]))
        ax.grid(False)
        fig.colorbar(im, ax=ax, shrink=0.8)
        for (yi, xi), v in np.ndenumerate(z):
            if math.isfinite(v):
                ax.text(xi, yi, _num(float(v)), ha="center", va="center", fontsize=6,
                        color=ink_on(im.cmap(im.norm(v))))
    # a panel's point is a mean over the other parameters' values: the PNG, published on
    # its own, says so as the page does
    fig.suptitle(m + (" (mean over the other parameters)" if len(t.swept) > 1 else ""))
    return fig


def write_pngs(t: S.SweepTable, out: Path) -> list[Path]:
    from ..figures.png import DPI, STYLE, plt

    paths = []
    sens = S.sensitivity(t)
    with plt.rc_context(STYLE):
        for m in t.metrics:
            fig = png_figure(t, m, sens)
            if fig is None:
                continue
            path = out / f"sweep-{m}.png"
            fig.savefig(path, dpi=DPI)
            plt.close(fig)
            paths.append(path)
    return paths


def build_sweep_report(store: Any, sweep_id: str, out_dir: Path, png: bool = True) -> Path:
    """Write sweep.html, grid.csv (grid.parquet with pyarrow) and the PNGs; returns the HTML."""
    t = S.from_store(store, sweep_id)
    with previous.replacing(out_dir, f"the report directory {out_dir}") as out:  # as build_runs_report
        write_csv(t, out / "grid.csv")
        write_parquet(t, out / "grid.parquet")
        if png:
            write_pngs(t, out)
        (out / HTML_NAME).write_text(render(t), encoding="utf-8")
    return Path(safe_path.real(out_dir)) / HTML_NAME
