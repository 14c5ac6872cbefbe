"""The self-contained HTML report: plotly figures with plotly.js inlined, so the file works
offline and can be mailed around. Element ids (stable, for people and browser tests):
  fig-fill-overlay, fig-fill-<i>, fig-consistency, fig-working-set, fig-quick-<unit>,
  fig-trim, fig-idle, fig-copy, table-compare-<test>[-<spare>], runs; the consistency
  switches are plotly updatemenus whose button <g> elements get ids
  fig-consistency-<drive|spare>-btn-<i> once drawn (docs/reports.md).
"""

from __future__ import annotations

import html as _html
import json
from pathlib import Path

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio
from plotly.offline import get_plotlyjs
from plotly.subplots import make_subplots

from . import data as D
from .trace import trace_bars, trace_phases
from .log_axis import LogAxis, log_axis, panel_notes
from .model import ReportRun
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


def _div(fig: go.Figure, div_id: str, **attrs: str) -> str:
    body = pio.to_html(fig, full_html=False, include_plotlyjs=False, div_id=div_id,
                       config=CONFIG)
    extra = " ".join(f'data-{k}="{_html.escape(str(v))}"' for k, v in attrs.items())
    return f'<div class="figure" id="wrap-{div_id}" {extra}>{body}</div>'


def _base_layout(fig: go.Figure, title: str, height: int) -> None:
    fig.update_layout(title=dict(text=title, x=0.01), height=height, template="plotly_white",
                      font=FONT, margin=dict(l=70, r=20, t=90, b=50), hovermode="x unified",
                      legend=dict(orientation="h", y=1.02, x=1, xanchor="right",
                                  yanchor="bottom"))


def _legend_below_plot(fig: go.Figure) -> None:
    """The legend under the x-axis title, outside the plot: it never covers data."""
    fig.update_layout(legend=dict(orientation="h", x=0, xanchor="left", yref="container",
                                  y=0.0, yanchor="bottom"),
                      margin=dict(b=110))


def _counter_trace(counters: D.Counters | None, key: str) -> dict:
    vals = counters.lines.get(key) if counters is not None else None
    return {"x": _l(counters.x) if vals is not None else [], "y": _l(vals)}


def _add_counter_panel(fig: go.Figure, counters: D.Counters | None, panel: D.Panel, row: int):
    for key in panel.lines:
        tr = _counter_trace(counters, key)
        fig.add_trace(go.Scatter(x=tr["x"], y=tr["y"], name=key, mode="lines", showlegend=False,
                                 line=dict(color=LINE_COLORS.get(key, COUNTER_COLOR), width=1.2,
                                           dash="dash" if key in D.DASHED else "solid")),
                      row=row, col=1)
    fig.update_yaxes(title_text=panel.unit, row=row, col=1, nticks=4,
                     rangemode="tozero" if panel.zero else "normal")


# --- fill ---------------------------------------------------------------------------------

def fill_figures(curves: list[D.FillCurve], y_top: float) -> list[str]:
    out = []
    if len(curves) > 1:
        fig = go.Figure()
        for i, c in enumerate(curves):
            fig.add_trace(go.Scatter(x=_l(c.gb), y=_l(c.mbps), name=c.label, mode="lines",
                                     line=dict(color=COLORS[i % len(COLORS)], width=1.5)))
        _base_layout(fig, "Whole-drive fill: write speed per GB written", 500)
        _legend_below_plot(fig)
        fig.update_xaxes(title_text="GB written")
        fig.update_yaxes(title_text="MB/s", range=[0, y_top])
        out.append(_div(fig, "fig-fill-overlay", figure="fill-overlay"))
    for i, c in enumerate(curves):
        panels = c.counters.panels() if c.counters else []
        rows = 1 + len(panels)
        fig = make_subplots(rows=rows, cols=1, shared_xaxes=True, vertical_spacing=0.06,
                            row_heights=[0.55] + [0.45 / max(len(panels), 1)] * len(panels),
                            subplot_titles=[""] + [p.title for p in panels])
        fig.add_trace(go.Scatter(x=_l(c.gb), y=_l(c.mbps), name=c.label, mode="lines",
                                 showlegend=False,  # one drive: the title names it
                                 line=dict(color=COLORS[i % len(COLORS)], width=1.5)), row=1, col=1)
        fig.update_yaxes(title_text="MB/s", range=[0, y_top], row=1, col=1)
        for r, panel in enumerate(panels, start=2):
            _add_counter_panel(fig, c.counters, panel, r)
        fig.update_xaxes(title_text="GB written", row=rows, col=1)
        _base_layout(fig, f"Whole-drive fill: {c.label}", 420 + 150 * len(panels))
        out.append(_div(fig, f"fig-fill-{i}", figure="fill", drive=c.drive, label=c.label,
                        run=c.run_id))
    return out


# --- consistency --------------------------------------------------------------------------

def _short(label: str, n: int = 40) -> str:
    """Button text: long model names would push the row off the figure (full name in the
    button's data-value and in the title)."""
    return label if len(label) <= n else label[: n - 1] + "…"


MARKERS = ["steady-start", "steady-mean-log", "steady-mean-linear"]
ZEROS = ["zeros-whole", "zeros-log"]  # 0-IOPS seconds, on the log panels' floor line


def _trace_names(panels: list[D.Panel]) -> list[str]:
    """fig-consistency's traces in order (the switch replaces x/y of each by position)."""
    return (["whole"] + [k for p in panels for k in p.lines] + ["window-log", "window-linear"]
            + MARKERS + ZEROS)


def _axes(c: D.ConsistencyCombo) -> tuple[LogAxis, LogAxis]:
    """The whole-run and the window's log axes of a combination."""
    return log_axis([c.iops]), log_axis([c.iops[c.t >= c.window_start]])


def _zeros(t: np.ndarray, iops: np.ndarray, axis: LogAxis) -> dict:
    z = np.asarray(iops) == 0
    return {"x": _l(t[z]), "y": [axis.floor] * int(z.sum())}


def _combo_traces(c: D.ConsistencyCombo | None, panels: list[D.Panel]) -> list[dict]:
    """x/y for every trace of fig-consistency, in _trace_names order. A missing
    combination gives empty traces. On the log panels 0-IOPS seconds sit on the floor
    line (data.LogAxis); missing seconds stay gaps."""
    empty = {"x": [], "y": []}
    if c is None:
        return [empty for _ in _trace_names(panels)]
    whole, window = _axes(c)
    w = c.t >= c.window_start
    tr = [{"x": _l(c.t), "y": _l(whole.plotted(c.iops))}]
    tr += [_counter_trace(c.counters, k) for p in panels for k in p.lines]
    tr += [{"x": _l(c.t[w]), "y": _l(window.plotted(c.iops[w]))},
           {"x": _l(c.t[w]), "y": _l(c.iops[w])}]
    ok = c.iops[np.isfinite(c.iops) & (c.iops > 0)]
    if c.steady_start_s is not None and ok.size:
        tr.append({"x": [c.steady_start_s] * 2, "y": _l([whole.floor or ok.min(), ok.max()])})
    else:
        tr.append(empty)
    if c.steady_iops and len(c.t):
        tr += [{"x": [c.window_start, float(c.t[-1])], "y": [round(c.steady_iops, 1)] * 2}] * 2
    else:
        tr += [empty, empty]
    tr += [_zeros(c.t, c.iops, whole), _zeros(c.t[w], c.iops[w], window)]
    return tr


def _combo_layout(c: D.ConsistencyCombo | None, n: int) -> dict:
    """Per combination: the log panels' ranges and ticks (rows 1 and n - 1)."""
    if c is None:
        return {}
    out: dict = {}
    for row, axis in zip((1, n - 1), _axes(c)):
        key = "yaxis" if row == 1 else f"yaxis{row}"
        out[f"{key}.range"] = [float(np.log10(axis.lo)), float(np.log10(axis.hi))]
        out[f"{key}.tickvals"] = axis.ticks
        out[f"{key}.ticktext"] = axis.labels
    return out


def _panel_titles(c: D.ConsistencyCombo | None, panels: list[D.Panel]) -> list[str]:
    w0 = c.window_start if c is not None else D.WINDOW_START_S
    iops = c.iops if c is not None else np.zeros(0)
    win = iops[c.t >= w0] if c is not None else iops

    def t(base: str, notes: str) -> str:
        return f"{base} ({notes})" if notes else base

    return ([t("Whole run, log scale", panel_notes(iops, "log"))] + [p.title for p in panels]
            + [t(f"From t = {w0:g} s, log scale", panel_notes(win, "log")),
               t(f"From t = {w0:g} s, linear scale", panel_notes(win, "linear"))])


def _title(c: D.ConsistencyCombo | None, label: str, spare: str) -> str:
    return (f"Performance consistency: {label}<br><sup>4 KiB random writes QD32, {spare}"
            + ("" if c is not None else " (no run)") + "</sup>")


def consistency_figure(combos: list[D.ConsistencyCombo]) -> tuple[str, str]:
    """One figure, three views plus counters, and two button rows (drive, spare area)
    switching all of them. Returns (figure html, data+script html)."""
    drives = list(dict.fromkeys(c.label for c in combos))
    spares = sorted({c.spare_pct for c in combos})
    by = {(drives.index(c.label), spares.index(c.spare_pct)): c for c in combos}
    panels = D.union_panels([c.counters for c in combos])  # rows if any combination has them
    first = combos[0]
    titles = _panel_titles(first, panels)
    n = len(titles)
    heights = [0.3] + [0.1] * len(panels) + [0.22, 0.22]
    fig = make_subplots(rows=n, cols=1, subplot_titles=titles, row_heights=heights,
                        vertical_spacing=0.065)
    fig.add_trace(go.Scatter(mode="lines", name="whole", showlegend=False,
                             line=dict(color=COLORS[0], width=1)), row=1, col=1)
    for r, panel in enumerate(panels, start=2):
        _add_counter_panel(fig, None, panel, r)
        fig.update_xaxes(matches="x", row=r, col=1)
    for r, kind in ((n - 1, "window-log"), (n, "window-linear")):
        fig.add_trace(go.Scatter(mode="lines", name=kind, showlegend=False,
                                 line=dict(color=COLORS[0], width=1)), row=r, col=1)
    # the test's own figures: where steady state began, and its mean over the window
    mark = dict(color="#222", width=1.2, dash="dot")
    fig.add_trace(go.Scatter(mode="lines", name="steady state from", line=mark,
                             showlegend=False), row=1, col=1)
    for r in (n - 1, n):
        fig.add_trace(go.Scatter(mode="lines", name="steady-state mean", line=mark,
                                 showlegend=False), row=r, col=1)
    for r, name in ((1, "zeros-whole"), (n - 1, "zeros-log")):
        fig.add_trace(go.Scatter(mode="markers", name="0 IOPS", showlegend=False,
                                 marker=dict(symbol="line-ns-open", size=9, color="#B3261E",
                                             line=dict(width=1.6))), row=r, col=1)
    for trace, tr in zip(fig.data, _combo_traces(first, panels)):
        trace.x, trace.y = tr["x"], tr["y"]
    fig.update_yaxes(type="log", title_text="IOPS", row=1, col=1)
    for r in range(1, 1 + len(panels)):  # counters share the run's time axis: label it once
        fig.update_xaxes(showticklabels=False, row=r, col=1)
    fig.update_yaxes(type="log", title_text="IOPS", row=n - 1, col=1)
    fig.update_yaxes(title_text="IOPS", rangemode="tozero", row=n, col=1)
    fig.update_xaxes(title_text="seconds", row=n, col=1)
    fig.update_layout(_combo_layout(first, n))

    def buttons(labels, menu):
        return [dict(label=lab, method="skip", args=[{"menu": menu, "index": i}])
                for i, lab in enumerate(labels)]

    # two rows of buttons between the title and the plot: drives, then spare areas
    height, top, bottom = 900 + 110 * len(panels), 190, 50
    row_y = [1.0 + px / (height - top - bottom) for px in (78, 38)]
    fig.update_layout(updatemenus=[
        dict(type="buttons", direction="right", x=0.1, xanchor="left", y=y, yanchor="bottom",
             active=0, showactive=True, buttons=buttons([_short(v) for v in values], menu),
             pad=dict(r=4, t=2))
        for y, menu, values in ((row_y[0], "drive", drives),
                                (row_y[1], "spare", [D.spare_label(s) for s in spares]))
    ], annotations=list(fig.layout.annotations) + [
        dict(text=text, x=0.0, xref="paper", xanchor="left", y=y, yref="paper",
             yanchor="bottom", yshift=8, showarrow=False)
        for y, text in zip(row_y, ("Drive:", "Spare area:"))])
    _base_layout(fig, _title(first, first.label, D.spare_label(first.spare_pct)), height)
    fig.update_layout(hovermode="closest", margin=dict(t=top, b=bottom),
                      title=dict(y=1.0, yref="container", yanchor="top", pad=dict(t=16)))
    payload = {
        "drives": drives, "spares": [D.spare_label(s) for s in spares],
        "traces": _trace_names(panels),
        "combos": {f"{d}|{s}": {"traces": _combo_traces(by.get((d, s)), panels),
                                "title": _title(by.get((d, s)), drives[d],
                                                D.spare_label(spares[s])),
                                "layout": _combo_layout(by.get((d, s)), n),
                                "panel_titles": _panel_titles(by.get((d, s)), panels),
                                "present": (d, s) in by}
                   for d in range(len(drives)) for s in range(len(spares))},
    }
    div = _div(fig, "fig-consistency", figure="consistency", drive=drives[0],
               spare=D.spare_label(spares[0]), **{"drive-index": 0, "spare-index": 0})
    blob = json.dumps(payload, allow_nan=False).replace("</", "<\\/")  # cannot end the tag
    script = (f'<script type="application/json" id="data-consistency">{blob}</script>'
              f"<script>{SWITCH_JS}</script>")
    return div, script


# Two independent button rows need shared state, which updatemenus alone cannot keep: the
# buttons are method "skip" and this handler applies the (drive, spare) pair with one update.
SWITCH_JS = r"""
(function () {
  const gd = document.getElementById('fig-consistency');
  const payload = JSON.parse(document.getElementById('data-consistency').textContent);
  const menus = ['drive', 'spare'];
  const values = [payload.drives, payload.spares];
  const state = [0, 0];
  function tag() {
    gd.querySelectorAll('g.updatemenu-button').forEach(function (b) {
      const d = b.__data__ || {};
      const a = (d.args && d.args[0]) || {};
      if (a.menu === undefined) return;
      b.id = 'fig-consistency-' + a.menu + '-btn-' + a.index;
      b.setAttribute('data-menu', a.menu);
      b.setAttribute('data-index', a.index);
      b.setAttribute('data-value', values[menus.indexOf(a.menu)][a.index]);
      b.setAttribute('data-active', state[menus.indexOf(a.menu)] === a.index ? '1' : '0');
    });
  }
  function mark(c) {  // the current selection, readable from the page
    gd.dataset.driveIndex = state[0]; gd.dataset.spareIndex = state[1];
    gd.dataset.drive = payload.drives[state[0]]; gd.dataset.spare = payload.spares[state[1]];
    gd.dataset.present = c.present ? '1' : '0';
  }
  function show() {
    const c = payload.combos[state[0] + '|' + state[1]];
    const layout = Object.assign({'title.text': c.title}, c.layout);
    c.panel_titles.forEach(function (t, i) { layout['annotations[' + i + '].text'] = t; });
    // marked once drawn, so whoever waits on the data attributes sees the new data
    return Plotly.update(gd, {x: c.traces.map(t => t.x), y: c.traces.map(t => t.y)},
                         layout).then(function () { mark(c); tag(); });
  }
  gd.on('plotly_buttonclicked', function (e) {
    const a = (e.button.args && e.button.args[0]) || {};
    const m = menus.indexOf(a.menu);
    if (m < 0) return;
    state[m] = a.index;
    show();
  });
  gd.on('plotly_afterplot', tag);
  mark(payload.combos['0|0']);
  tag();
  window.ssdlabConsistency = {state: state, show: show};
})();
"""


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


# --- working set, quick -------------------------------------------------------------------

def working_set_figure(sets: list[D.WorkingSet]) -> str:
    has_lat = any(s.lat_p99_us is not None for s in sets)
    rows = 2 if has_lat else 1
    fig = make_subplots(rows=rows, cols=1, shared_xaxes=True, vertical_spacing=0.08,
                        subplot_titles=["4 KiB random read IOPS"] + (
                            ["99th percentile latency"] if has_lat else []))
    ticks = sorted({float(g) for s in sets for g in s.gb})
    for i, s in enumerate(sets):
        col = COLORS[i % len(COLORS)]
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
    _base_layout(fig, "Working-set size: random reads", 460 + 260 * (rows - 1))
    _legend_below_plot(fig)
    return _div(fig, "fig-working-set", figure="working-set")


def quick_figure(g: D.QuickGroup) -> str:
    fig = go.Figure()
    for i, s in enumerate(g.series):
        col = COLORS[i % len(COLORS)]
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


def trace_latency_figure(runs: list[D.ReportRun]) -> str:
    """Latency over time of every trace replay (mean per interval), drive and state."""
    fig = go.Figure()
    i = 0
    for d, p in trace_phases(runs):
        t, lat = p.series.get("t_s"), p.series.get("lat_mean_us")
        if t is None or lat is None or not len(t):
            continue
        fig.add_trace(go.Scatter(x=_l(t), y=_l(lat), mode="lines", line=dict(color=COLORS[i % len(COLORS)]),
                                 name=f"{d.label} {p.name.removeprefix('trace-')}"))
        i += 1
    if not i:
        return ""
    _base_layout(fig, "Trace replay: mean latency per interval", 380)
    _legend_below_plot(fig)
    fig.update_xaxes(title_text="s")
    fig.update_yaxes(title_text="µs", rangemode="tozero")
    return _div(fig, "fig-trace-latency", figure="trace", unit="us")


def trim_figure(curves: list[D.TrimCurves]) -> str:
    """Per drive: the clean pass (thin, grey) under the pass after torture + TRIM."""
    fig = go.Figure()
    for i, c in enumerate(curves):
        col = COLORS[i % len(COLORS)]
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


# --- table, page --------------------------------------------------------------------------

def _better(p: float | None, lower_is_better: bool) -> str:
    if p is None or abs(p) < 0.05:
        return ""
    return "better" if (p < 0) == lower_is_better else "worse"


def compare_table(t: D.CompareTable) -> str:
    e = _html.escape
    head = "<th>Metric</th>" + "".join(f"<th>{e(lab)}</th>" for lab in t.labels) + "".join(
        f"<th>{e(lab)}<br><small>vs {e(t.labels[0])}</small></th>" for lab in t.labels[1:])
    body = []
    for name, vals, pct in t.rows:
        cells = "".join(f'<td class="num">{D.fmt(v)}</td>' for v in vals)
        low = D.lower_is_better(name)  # colour says better/worse, not up/down
        cells += "".join(
            f'<td class="num {_better(p, low)}">{D.fmt(p, pct=True)}</td>' for p in pct[1:])
        body.append(f'<tr data-metric="{e(name)}"><th scope="row">{e(D.metric_title(name))}'
                    f"</th>{cells}</tr>")
    warn = "".join(f'<p class="warn">⚠ {e(w)}</p>' for w in t.warnings)
    runs = ", ".join(str(r) for r in t.run_ids)
    spare = f" — {t.spare_text}" if t.spare_text else ""
    return (f'<div class="table-wrap"><h3>{e(t.test)}{e(spare)} '
            f'<small>(run {e(runs)})</small></h3>{warn}'
            f'<table class="compare" id="table-compare-{t.key}" data-test="{e(t.test)}">'
            f"<thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table></div>")


def runs_table(runs: list[ReportRun]) -> str:
    """Where the numbers come from: comparisons are only fair between matching tags."""
    e = _html.escape
    rows = []
    for r in runs:
        t = r.tags
        drives = ", ".join(f"{d.label}" + ("" if d.status == "complete" else f" ({d.status})")
                           for d in r.drives)
        spare = D.spare_label(r.spare_pct) if r.spare_pct or r.test == "consistency" else ""
        cells = [str(r.run_id), r.test, drives, spare, t.get("status", ""), t.get("testbed", ""),
                 t.get("methodology_version", ""), t.get("tool_version", ""),
                 t.get("engine_version", ""),
                 str(t.get("created", "")).replace("T", " ").replace("+00:00", " UTC")]
        rows.append(f'<tr data-run="{r.run_id}">' + "".join(
            f"<td>{e(str(c or ''))}</td>" for c in cells) + "</tr>")
    head = "".join(f"<th>{h}</th>" for h in (
        "Run", "Test", "Drives", "Spare area", "Status", "Testbed", "Methodology", "ssdlab",
        "Engine", "Started"))
    return (f'<table class="compare runs" id="runs"><thead><tr>{head}</tr></thead>'
            f"<tbody>{''.join(rows)}</tbody></table>")


CSS = """
body{font-family:'DejaVu Sans',Arial,sans-serif;margin:24px auto;max-width:1200px;color:#222}
h1{font-size:1.6em;margin-bottom:0}
h2{border-bottom:1px solid #ccc;padding-bottom:4px;margin-top:2em}
.meta{color:#555;font-size:.9em} .figure{margin:12px 0 28px}
table.compare{border-collapse:collapse;font-size:.9em;margin:8px 0 20px}
table.compare th,table.compare td{border-bottom:1px solid #e3e3e3;padding:4px 10px;text-align:left}
table.compare td.num{text-align:right;font-variant-numeric:tabular-nums}
table.runs{font-size:.8em;color:#444} td.better{color:#1a7f37} td.worse{color:#b3261e} .warn{color:#9a6700}
"""


def render(runs: list[ReportRun], y_max: float | None = None, title: str | None = None) -> str:
    e = _html.escape
    parts: list[str] = []
    scripts: list[str] = []
    curves = D.fill_curves(runs)
    if curves:
        y_top = D.fill_y_max(curves, y_max)
        parts.append(f'<section id="sec-fill"><h2>Whole-drive fill</h2><p class="meta">'
                     f"One y scale for all drives; beneath each curve, the simulator's write "
                     f"amplification, SLC cache and free blocks, or a real drive's temperature. "
                     f'<label>y-axis top (MB/s): <input type="number" id="fill-ymax" min="1" '
                     f'step="100" value="{y_top:g}"></label></p>'
                     f"{''.join(fill_figures(curves, y_top))}</section>")
        scripts.append(f"<script>{YMAX_JS}</script>")
    combos = D.consistency_combos(runs)
    if combos:
        div, script = consistency_figure(combos)
        parts.append('<section id="sec-consistency"><h2>Performance consistency</h2>'
                     '<p class="meta">Buttons switch drive and spare area. Dotted: where steady '
                     "state began (whole run) and the steady-state mean (windows). Beneath the "
                     "whole run: the simulator's counters, or a real drive's temperature.</p>"
                     f"{div}</section>")
        scripts.append(script)
    sets = D.working_sets(runs)
    if sets:
        parts.append(f'<section id="sec-working-set"><h2>Working-set size</h2>'
                     f"{working_set_figure(sets)}</section>")
    groups = D.quick_groups(runs)
    if groups:
        parts.append('<section id="sec-quick"><h2>Quick synthetic tests</h2>'
                     f'<p class="meta" id="note-quick">{e(D.NOTES["quick"])}.</p>'
                     + "".join(quick_figure(g) for g in groups) + "</section>")
    trims = D.trim_curves(runs)
    if trims:
        parts.append(f'<section id="sec-trim"><h2>TRIM validation</h2>{trim_figure(trims)}'
                     "</section>")
    for g in D.scalar_bars(runs):
        note = f'<p class="meta" id="note-{g.test}">{e(g.note)}</p>' if g.note else ""
        parts.append(f'<section id="sec-{g.test}"><h2>{e(g.heading.split(":")[0])}</h2>'
                     f"{note}{quick_figure(g)}</section>")
    bars = trace_bars(runs)
    if bars:
        parts.append('<section id="sec-trace"><h2>Trace replay</h2>'
                     + "".join(quick_figure(g) for g in bars) + trace_latency_figure(runs)
                     + "</section>")
    parts += test_sections(runs)
    tables = D.compare_tables(runs)
    if tables:
        parts.append('<section id="sec-compare"><h2>Comparison</h2>'
                     + "".join(compare_table(t) for t in tables) + "</section>")
    title = title or "ssdlab report"
    return (
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
        f"<title>{e(title)}</title><style>{CSS}</style>"
        f"<script>window.PlotlyConfig = {{MathJaxConfig: 'local'}};</script>"
        f"<script>{get_plotlyjs()}</script></head><body>"
        f"<h1>{e(title)}</h1>{runs_table(runs)}"
        + "".join(parts) + "".join(scripts) + "</body></html>")


def test_sections(runs: list[ReportRun]) -> list[str]:
    """One section per test that draws its own figures (methodology Test.figures)."""
    from .test_figures import figures_by_test

    e = _html.escape
    return [f'<section id="sec-{e(name)}"><h2>{e(name)}</h2>' + "".join(f.html() for f in figs)
            + "</section>" for name, figs in figures_by_test(runs)]


def write_html(runs: list[ReportRun], path: Path, y_max: float | None = None,
               title: str | None = None) -> Path:
    path = Path(path)
    path.write_text(render(runs, y_max, title), encoding="utf-8")
    return path
