"""What every test's HTML figures share: plotly figures as divs (plotly.js is inlined once
by the page), the common layout, counter panels, and horizontal bar groups."""

from __future__ import annotations

import functools
import html as _html

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio

from . import data as D
from .style import COLORS, COUNTER_COLOR, LINE_COLORS


CONFIG = {"displaylogo": False, "responsive": True,
          "toImageButtonOptions": {"format": "png", "scale": 2}}


FONT = dict(family="DejaVu Sans, Arial, sans-serif", size=13)


def _l(a) -> list:
    """numpy -> plain JSON list (NaN -> null): readable from the page as gd.data[i].y."""
    if a is None:
        return []
    a = np.asarray(a, dtype=float)
    return [None if not np.isfinite(v) else round(float(v), 4) for v in a]


TEMPLATE = "plotly_white"


@functools.cache
def _template() -> dict:
    """The template as a figure holds it (validated once, in plotly's order of keys)."""
    return go.Figure(layout=dict(template=TEMPLATE)).to_dict()["layout"]["template"]


def plotly_div(fig: go.Figure, div_id: str) -> str:
    """The figure as plotly's div, in the reports' template (plotly.js is inlined once by the
    page). The template goes in as plain JSON: plotly validates a template set on a figure
    anew each time (30 ms a figure, more than the figure itself), the same JSON out."""
    spec = fig.to_dict()
    spec["layout"]["template"] = _template()
    return pio.to_html(spec, full_html=False, include_plotlyjs=False, div_id=div_id,
                       config=CONFIG, validate=False)


def _div(fig: go.Figure, div_id: str, **attrs: str) -> str:
    body = plotly_div(fig, div_id)
    extra = " ".join(f'data-{k}="{_html.escape(str(v))}"' for k, v in attrs.items())
    return f'<div class="figure" id="wrap-{div_id}" {extra}>{body}</div>'


def _base_layout(fig: go.Figure, title: str, height: int) -> None:
    fig.update_layout(title=dict(text=title, x=0.01), height=height,
                      font=FONT, margin=dict(l=70, r=20, t=90, b=50), hovermode="x unified",
                      legend=dict(orientation="h", y=1.02, x=1, xanchor="right",
                                  yanchor="bottom"))


def _legend_below_plot(fig: go.Figure) -> None:
    """The legend under the x-axis title, outside the plot: it never covers data."""
    fig.update_layout(legend=dict(orientation="h", x=0, xanchor="left", yref="container",
                                  y=0.0, yanchor="bottom"),
                      margin=dict(b=110))


def _counter_trace(counters: D.Counters | None, key: str) -> dict:
    if counters is None or counters.lines.get(key) is None:
        return {"x": [], "y": []}
    return {"x": _l(counters.x), "y": _l(counters.lines[key])}


def _add_counter_panel(fig: go.Figure, counters: D.Counters | None, panel: D.Panel, row: int):
    for key in panel.lines:
        tr = _counter_trace(counters, key)
        fig.add_trace(go.Scatter(x=tr["x"], y=tr["y"], name=key, mode="lines", showlegend=False,
                                 line=dict(color=LINE_COLORS.get(key, COUNTER_COLOR), width=1.2,
                                           dash="dash" if key in D.DASHED else "solid")),
                      row=row, col=1)
    fig.update_yaxes(title_text=panel.unit, row=row, col=1, nticks=4,
                     rangemode="tozero" if panel.zero else "normal")


def bars_figure(g: D.QuickGroup) -> str:
    fig = go.Figure()
    for i, s in enumerate(g.series):
        col = s.color or COLORS[i % len(COLORS)]
        names = g.labels
        lo, hi = s.whiskers
        fig.add_trace(go.Bar(
            y=names, x=_l(s.value), name=s.label, orientation="h", offsetgroup=str(i),
            marker_color=col, opacity=0.85,
            error_x=dict(type="data", symmetric=False, array=_l(hi),
                         visible=any(len(p) > 1 for p in s.points),
                         arrayminus=_l(lo), color="#333", thickness=1.2, width=4)))
        ys = [m for m, pts in zip(names, s.points) if len(pts) > 1 for _ in pts]
        xs = [v for pts in s.points if len(pts) > 1 for v in pts]
        fig.add_trace(go.Scatter(y=ys, x=xs, mode="markers", orientation="h",
                                 offsetgroup=str(i), name=f"{s.label} runs", showlegend=False,
                                 marker=dict(color="#111", size=5, symbol="circle-open")))
    _base_layout(fig, g.heading, 200 + 34 * len(g.metrics) * max(len(g.series), 1))
    _legend_below_plot(fig)
    fig.update_layout(barmode="group", scattermode="group", hovermode="closest")
    fig.update_yaxes(autorange="reversed")
    fig.update_xaxes(title_text=g.unit, rangemode="tozero")
    return _div(fig, f"fig-{g.fig_key}", figure=g.test, unit=g.unit)
