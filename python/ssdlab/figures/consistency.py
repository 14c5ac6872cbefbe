"""The consistency test's figures: per-second IOPS of the random-write phase, whole run on
a log axis with the simulator's counters beneath, and the window from WINDOW_START_S on log
and linear axes; in HTML one figure whose buttons switch drive and spare area."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import plotly.graph_objects as go
from matplotlib.ticker import FixedFormatter, FixedLocator, NullLocator
from plotly.subplots import make_subplots

from . import Drawn, FigureOptions
from . import data as D
from .data import Counters, _counters, _f, _io_phases, _series, spare_label, thin
from .html import _add_counter_panel, _base_layout, _counter_trace, _div, _l
from .log_axis import LogAxis, log_axis, panel_notes
from .model import ReportDrive, ReportPhase, ReportRun
from . import png as P
from .png import WIDTH, _from_zero, _thousands, counter_axes, plt
from .style import COLORS


def figures(runs: Sequence[ReportRun], opts: FigureOptions) -> list[Drawn]:
    combos = consistency_combos(list(runs))
    if not combos:
        return []

    def html() -> str:
        div, script = consistency_figure(combos)
        return ('<p class="meta">Buttons switch drive and spare area. Dotted: where steady '
                "state began (whole run) and the steady-state mean (windows). Beneath the "
                "whole run: the simulator's counters, or a real drive's temperature.</p>"
                + div + script)

    return [Drawn("consistency", html, lambda out: consistency_pngs(combos, out))]


WINDOW_START_S = 1400.0  # methodology.md: the consistency "window" views start here


@dataclass
class ConsistencyCombo:
    """One (drive, spare area) pair: per-second IOPS and, for simulated drives, counters."""

    run_id: int
    drive: str
    label: str
    spare_pct: float
    t: np.ndarray
    iops: np.ndarray
    window_start: float
    counters: Counters | None = None
    steady_iops: float | None = None  # the test's own figures, marked on the curves
    steady_start_s: float | None = None
    steady_reached: bool | None = None  # None: a run stored before the test said
    status: str = "complete"  # the drive's: a run cut short is marked as one
    color: str = COLORS[0]  # the drive's colour in its report

    @property
    def key(self) -> str:
        return f"{self.label} | {spare_label(self.spare_pct)}"

    @property
    def not_steady(self) -> str:
        """What the figures say instead of a steady figure ("" when there is one)."""
        if self.status not in ("complete", "") and len(self.t):  # no figures: it was cut short
            end = float(self.t[-1])
            got = f"still running, {end:g} s so far" if self.status == "running" else f"{self.status} after {end:g} s"
            return f"{got}, not a whole run"
        if self.steady_reached is not False or not len(self.t):
            return ""
        return f"steady state not reached in {float(self.t[-1]):g} s"


def _random_phase(d: ReportDrive) -> ReportPhase | None:
    """The random-write phase of a consistency run (not the preconditioning fill)."""
    cands = [p for p in _io_phases(d) if len(p.series.get("iops", ())) > 0]
    named = [p for p in cands if re.search(r"rand|random|steady|torture", p.name.lower())]
    if named:
        return named[-1]
    return cands[-1] if cands else None


def consistency_combos(runs: list[ReportRun]) -> list[ConsistencyCombo]:
    out = []
    for r in runs:
        for d in r.drives:
            p = _random_phase(d)
            if p is None:
                continue
            ser = _series(p)
            iops = ser["iops"]
            t = ser.get("t_s")
            if t is None or len(t) != len(iops):
                t = np.arange(1, len(iops) + 1, dtype=float)
            end = float(t[-1]) if len(t) else 0.0
            # a shortened run (--seconds) keeps the same proportions as 1400 of 2000 s
            w0 = WINDOW_START_S if end > WINDOW_START_S else round(0.7 * end)
            counters = _counters(ser, t)
            t, iops = thin(t, iops)
            out.append(ConsistencyCombo(r.run_id, d.drive, d.label, float(r.spare_pct), t,
                                        iops, w0, counters, _f(d.metrics.get("steady_iops")),
                                        _f(d.metrics.get("steady_start_s")),
                                        _reached(d.metrics.get("steady_reached")), d.status,
                                        d.color or COLORS[0]))
    return out


def _reached(v: Any) -> bool | None:
    return v if isinstance(v, bool) else None


# --- HTML ---------------------------------------------------------------------------------

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


def _axes(c: ConsistencyCombo) -> tuple[LogAxis, LogAxis]:
    """The whole-run and the window's log axes of a combination."""
    return log_axis([c.iops]), log_axis([c.iops[c.t >= c.window_start]])


def _zeros(t: np.ndarray, iops: np.ndarray, axis: LogAxis) -> dict:
    z = np.asarray(iops) == 0
    return {"x": _l(t[z]), "y": [axis.floor] * int(z.sum())}


def _combo_traces(c: ConsistencyCombo | None, panels: list[D.Panel]) -> list[dict]:
    """x/y for every trace of fig-consistency, in _trace_names order. A missing
    combination gives empty traces. On the log panels 0-IOPS seconds sit on the floor
    line (data.LogAxis); missing seconds stay gaps."""
    empty: dict[str, list[float]] = {"x": [], "y": []}
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


def _combo_layout(c: ConsistencyCombo | None, n: int) -> dict:
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


def _panel_titles(c: ConsistencyCombo | None, panels: list[D.Panel]) -> list[str]:
    w0 = c.window_start if c is not None else WINDOW_START_S
    iops = c.iops if c is not None else np.zeros(0)
    win = iops[c.t >= w0] if c is not None else iops

    def t(base: str, notes: str) -> str:
        return f"{base} ({notes})" if notes else base

    return ([t("Whole run, log scale", panel_notes(iops, "log"))] + [p.title for p in panels]
            + [t(f"From t = {w0:g} s, log scale", panel_notes(win, "log")),
               t(f"From t = {w0:g} s, linear scale", panel_notes(win, "linear"))])


def _title(c: ConsistencyCombo | None, label: str, spare: str) -> str:
    note = " (no run)" if c is None else f"; {c.not_steady}" if c.not_steady else ""
    return f"Performance consistency: {label}<br><sup>4 KiB random writes QD32, {spare}{note}</sup>"


def consistency_figure(combos: list[ConsistencyCombo]) -> tuple[str, str]:
    """One figure, three views plus counters, and two button rows (drive, spare area)
    switching all of them. Returns (figure html, data+script html)."""
    drives = list(dict.fromkeys(c.label for c in combos))
    spares = sorted({c.spare_pct for c in combos})
    by = {(drives.index(c.label), spares.index(c.spare_pct)): c for c in combos}
    hue = {drives.index(c.label): c.color for c in combos}  # a drive's, in every view of it
    panels = D.union_panels([c.counters for c in combos])  # rows if any combination has them
    first = combos[0]
    titles = _panel_titles(first, panels)
    n = len(titles)
    heights = [0.3] + [0.1] * len(panels) + [0.22, 0.22]
    fig = make_subplots(rows=n, cols=1, subplot_titles=titles, row_heights=heights,
                        vertical_spacing=0.065)
    fig.add_trace(go.Scatter(mode="lines", name="whole", showlegend=False,
                             line=dict(color=first.color, width=1)), row=1, col=1)
    for r, panel in enumerate(panels, start=2):
        _add_counter_panel(fig, None, panel, r)
        fig.update_xaxes(matches="x", row=r, col=1)
    for r, kind in ((n - 1, "window-log"), (n, "window-linear")):
        fig.add_trace(go.Scatter(mode="lines", name=kind, showlegend=False,
                                 line=dict(color=first.color, width=1)), row=r, col=1)
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
        # the IOPS lines, drawn in the shown drive's colour
        "iops_traces": [i for i, k in enumerate(_trace_names(panels)) if k in ("whole", "window-log", "window-linear")],
        "combos": {f"{d}|{s}": {"traces": _combo_traces(by.get((d, s)), panels),
                                "title": _title(by.get((d, s)), drives[d],
                                                D.spare_label(spares[s])),
                                "layout": _combo_layout(by.get((d, s)), n),
                                "panel_titles": _panel_titles(by.get((d, s)), panels),
                                "present": (d, s) in by,
                                "color": hue[d]}
                   for d in range(len(drives)) for s in range(len(spares))},
    }
    div = _div(fig, "fig-consistency", figure="consistency", drive=drives[0],
               spare=D.spare_label(spares[0]), **{"drive-index": "0", "spare-index": "0"})
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
    return Plotly.update(gd, {x: c.traces.map(t => t.x), y: c.traces.map(t => t.y)}, layout)
      .then(function () { return Plotly.restyle(gd, {'line.color': c.color}, payload.iops_traces); })
      .then(function () { mark(c); tag(); });
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


# --- PNG ----------------------------------------------------------------------------------

def _log_panel(ax, t: np.ndarray, iops: np.ndarray, axis: LogAxis, lw: float, color: str = COLORS[0]) -> None:
    """Per-second IOPS on `axis` (data.LogAxis): 0-IOPS seconds on the floor line, marked."""
    ax.plot(t, axis.plotted(iops), color=color, lw=lw)
    ax.set_yscale("log")
    ax.set_ylim(axis.lo, axis.hi)
    ax.yaxis.set_major_locator(FixedLocator(axis.ticks))
    ax.yaxis.set_major_formatter(FixedFormatter(axis.labels))
    ax.yaxis.set_minor_locator(NullLocator())
    if axis.floor:
        ax.axhline(axis.floor, color="#999", lw=0.6, ls="--", zorder=1)
        z = np.asarray(iops) == 0
        ax.plot(t[z], np.full(int(z.sum()), axis.floor), "|", color="#B3261E", ms=9, mew=1.4)


def _panel_title(base: str, iops: np.ndarray, scale: str, mark: str | None = None) -> str:
    """`mark` says what the panel's dotted line is: a PNG has no caption beside it (on a
    line of its own after other notes, so the title stays within the figure)."""
    notes = panel_notes(iops, scale)
    if mark and not notes:
        return f"{base} ({scale} scale; {mark})"
    title = f"{base} ({scale} scale{'; ' + notes if notes else ''})"
    return f"{title}\n{mark}" if mark else title


def consistency_pngs(combos: list[ConsistencyCombo], out_dir: Path) -> list[Path]:
    return [P._save(consistency_fig(c), out_dir, f"consistency-{D.slug(c.label)}-spare{c.spare_pct:g}")
            for c in combos]


def consistency_fig(c: ConsistencyCombo):
    """Whole run (log), the simulator's counters or a real drive's temperature beneath it,
    and the window from WINDOW_START_S on log and linear axes."""
    panels = c.counters.panels() if c.counters else []
    ratios = [3] + [1] * len(panels) + [2.4, 2.4]
    fig, axes = plt.subplots(len(ratios), 1, figsize=(WIDTH, 6.8 + 0.8 * len(panels)),
                             gridspec_kw={"height_ratios": ratios}, layout="constrained")
    axes = list(np.atleast_1d(axes))
    whole, counters, wlog, wlin = axes[0], axes[1:1 + len(panels)], axes[-2], axes[-1]
    _log_panel(whole, c.t, c.iops, log_axis([c.iops]), 0.6, c.color)
    whole.set_ylabel("IOPS")
    start = None if c.steady_start_s is None else f"dotted: steady state from {c.steady_start_s:g} s"
    whole.set_title(_panel_title("Whole run", c.iops, "log", start), fontsize=8.5)
    note = f"; {c.not_steady}" if c.not_steady else ""
    fig.suptitle(f"Performance consistency: {c.label}\n4 KiB random writes QD32, "
                 f"{D.spare_label(c.spare_pct)}{note}", fontsize=9.5)
    counter_axes(counters, c.counters, panels)
    for a in [whole, *counters]:
        a.set_xlim(0, float(c.t[-1]) if len(c.t) else None)
    for a in [whole, *counters][:-1]:  # the lowest of them carries the time labels
        a.tick_params(labelbottom=False)
    (counters[-1] if counters else whole).set_xlabel("seconds")
    w = c.t >= c.window_start
    _log_panel(wlog, c.t[w], c.iops[w], log_axis([c.iops[w]]), 0.7, c.color)
    wlin.plot(c.t[w], c.iops[w], color=c.color, lw=0.7)
    for ax, scale in ((wlog, "log"), (wlin, "linear")):
        # a run shorter than the window start (a quick --seconds run) still gets an axis
        ax.set(ylabel="IOPS", xlim=(c.window_start, max(float(c.t[-1]), c.window_start + 1)))
        mean = f"dotted: steady-state mean {c.steady_iops:,.0f} IOPS" if c.steady_iops else None
        ax.set_title(_panel_title(f"From t = {c.window_start:g} s", c.iops[w], scale, mean), fontsize=8.5)
    _from_zero(wlin)
    mark = {"color": "#222", "lw": 0.9, "ls": ":"}  # the test's own figures
    if c.steady_start_s is not None:
        whole.axvline(c.steady_start_s, **mark)
    if c.steady_iops:
        for ax in (wlog, wlin):
            ax.axhline(c.steady_iops, **mark)
    wlin.set_xlabel("seconds")
    wlin.yaxis.set_major_formatter(_thousands)
    fig.align_ylabels(axes)
    return fig
