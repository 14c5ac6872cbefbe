"""The trace test's figures: per state (empty / full), every drive side by side: the data
rate (MB/s) and the latencies (average, p99, p99.9; all, reads, writes), and the mean
latency over time. One chart compares the same trace on a simulated and a real drive (two
runs in one report)."""

from __future__ import annotations

import html
from functools import partial
from pathlib import Path
from typing import Sequence

import numpy as np
import plotly.graph_objects as go

from . import Drawn, FigureOptions
from .bars import drawn
from .data import QuickGroup, QuickSeries, _f
from .html import _base_layout, _div, _l, _legend_below_plot
from .model import ReportRun
from .style import COLORS


def no_png(out_dir: Path) -> list[Path]:
    return []  # the latency over time is an HTML figure only


def figures(runs: Sequence[ReportRun], opts: FigureOptions) -> list[Drawn]:
    runs = list(runs)
    out = [Drawn("trace-replayed", partial(replayed, runs), no_png)]
    out += [drawn(g) for g in trace_bars(runs)]
    if trace_phases(runs):
        out.append(Drawn("trace-latency", partial(trace_latency_figure, runs), no_png))
    return out


def replayed(runs: list[ReportRun]) -> str:
    """What each run replayed and how: the figures compare only runs of one trace, timed alike."""
    e = html.escape
    out = []
    for r in runs:
        args = ((r.tags.get("args") or {}).get("trace")) or {}
        m = next((d.metrics for d in r.drives if d.metrics.get("trace_format")), {})
        if not args.get("trace") and not m:
            continue
        what = [str(m["trace_format"])] if m.get("trace_format") else []
        if _f(m.get("trace_ios")) is not None:
            what.append(f"{_f(m['trace_ios']):,.0f} I/Os")
        if _f(m.get("trace_duration_s")):
            what.append(f"{_f(m['trace_duration_s']):.4g} s as recorded")
        how = [str(m["trace_mode"])] if m.get("trace_mode") else []
        if args.get("state"):
            how.append(f"state {args['state']}")
        if args.get("wrap"):
            how.append("offsets wrapped into the drive")
        out.append(f"<p class=\"meta\">Replayed by run {r.run_id}: <code>{e(str(args.get('trace', '?')))}</code>"
                   + (f" ({e(', '.join(what))})" if what else "")
                   + (f": {e('; '.join(how))}" if how else "") + ".</p>")
    return "".join(out)


RATES = ["data_rate_mbps", "busy_data_rate_mbps"]


LATENCIES = ["lat_mean_us", "lat_p99_us", "lat_p99_9_us", "read_lat_mean_us", "read_lat_p99_us",
             "read_lat_p99_9_us", "write_lat_mean_us", "write_lat_p99_us", "write_lat_p99_9_us"]


NAMES = {"data_rate_mbps": "data rate (whole replay)", "busy_data_rate_mbps": "data rate (busy time)",
         "lat_mean_us": "average", "lat_p99_us": "p99", "lat_p99_9_us": "p99.9",
         "read_lat_mean_us": "read average", "read_lat_p99_us": "read p99",
         "read_lat_p99_9_us": "read p99.9", "write_lat_mean_us": "write average",
         "write_lat_p99_us": "write p99", "write_lat_p99_9_us": "write p99.9"}


def trace_bars(runs: list[ReportRun]) -> list[QuickGroup]:
    drives = [d for r in runs for d in r.drives]
    out = []
    for state in ("empty", "full"):
        for unit, names, what in (("MB/s", RATES, "data rate"), ("µs", LATENCIES, "latency")):
            metrics = [m for m in names
                       if any(_f(d.metrics.get(f"{state}_{m}")) is not None for d in drives)]
            if not metrics:
                continue
            series = []
            for d in drives:
                v = np.array([_f(d.metrics.get(f"{state}_{m}")) for m in metrics], dtype=float)
                series.append(QuickSeries(d.shown, v, v, v, [[] for _ in metrics], d.color))
            out.append(QuickGroup(unit, f"{state}-{'rate' if unit == 'MB/s' else 'latency'}",
                                  metrics, series, test="trace",
                                  title=f"Trace replay, {state} drive: {what}",
                                  names=[NAMES[m] for m in metrics]))
    return out


def trace_phases(runs: list[ReportRun]):
    """(drive, replay phase) of every trace run."""
    return [(d, p) for r in runs for d in r.drives for p in d.phases
            if p.kind == "replay"]


DASHES = ["solid", "dash", "dot", "dashdot"]


def trace_latency_figure(runs: list[ReportRun]) -> str:
    """Latency over time of every trace replay (mean per interval), drive and state."""
    fig = go.Figure()
    i = 0
    seen: dict[int, int] = {}
    for d, p in trace_phases(runs):
        t, lat = p.series.get("t_s"), p.series.get("lat_mean_us")
        if t is None or lat is None or not len(t):
            continue
        n = seen.get(id(d), 0)  # a drive's replays (empty, full): its colour, dashed after the first
        seen[id(d)] = n + 1
        fig.add_trace(go.Scatter(x=_l(t), y=_l(lat), mode="lines",
                                 line=dict(color=d.color or COLORS[i % len(COLORS)], dash=DASHES[n % len(DASHES)]),
                                 name=f"{d.shown} {p.name.removeprefix('trace-')}"))
        i += 1
    if not i:
        return ""
    _base_layout(fig, "Trace replay: mean latency per interval", 380)
    _legend_below_plot(fig)
    fig.update_xaxes(title_text="s")
    fig.update_yaxes(title_text="µs", rangemode="tozero")
    return _div(fig, "fig-trace-latency", figure="trace", unit="us")
