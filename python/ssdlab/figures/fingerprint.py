"""The fingerprint battery's figures, in four panels: the fill curve (MB/s against the share
of the area written), the QD1 4 KiB read and write latency histograms, the random-write
stretch, the burst after the idle pause and the stretch after trimming a quarter of the area
(IOPS against drive writes), and QD1 read latency
against the span read. Several drives (or a drive and its twin, `ssdlab fit`'s report)
are overlaid on the same axes."""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import plotly.graph_objects as go
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter
from plotly.subplots import make_subplots

from . import Drawn, FigureOptions
from . import png as P
from .html import _base_layout, _div, _l, _legend_below_plot
from .model import ReportPhase, ReportRun
from .png import WIDTH, _from_zero, _thousands, plt
from .style import COLORS

GB = 1e9
_plain = FuncFormatter(lambda v, _: f"{v:g}")


@dataclass
class Print:
    """What the four panels show of one run (or a twin's trial)."""

    label: str
    fill_share: np.ndarray  # share of the area written at each segment's end
    fill_mbps: np.ndarray
    hists: dict[str, tuple[np.ndarray, np.ndarray]]  # "read"/"write" -> (µs, share of I/Os)
    burst_dw: np.ndarray  # drive writes at each second's end: the stretch, the recovery, the trimmed stretch
    burst_iops: np.ndarray
    recovery_from: float  # drive writes where the recovery starts (after the pause)
    span_share: np.ndarray
    span_us: np.ndarray
    dashed: bool = False  # a twin's curves, over the evidence
    trimmed_from: float = float("nan")  # drive writes where the trimmed stretch starts


def print_of(label: str, phases: Sequence[ReportPhase], dashed: bool = False) -> Print | None:
    named = {p.name: p for p in phases}
    fill = named.get("fill")
    if fill is None or not len(fill.segments.get("mbps", [])):
        return None
    gb = np.asarray(fill.segments["gb"], dtype=float)
    area = gb[-1] * GB
    hists = {}
    for key, name in (("read", "qd1_read"), ("write", "qd1_write")):
        p = named.get(name)
        if p is not None and "edges_us" in p.latency and "counts" in p.latency:
            e = np.asarray(p.latency["edges_us"], dtype=float)
            c = np.asarray(p.latency["counts"], dtype=float)
            hists[key] = (e, c / c.sum() if c.sum() else c)
    xs, ys, start = [], [], 0.0
    recovery_from = trimmed_from = float("nan")
    for name in ("stretch", "recovery", "trimmed"):
        p = named.get(name)
        if p is None or not len(p.series.get("iops", [])):
            continue
        iops = np.asarray(p.series["iops"], dtype=float)
        t = np.asarray(p.series.get("t_s", np.arange(1, iops.size + 1)), dtype=float)
        dt = np.diff(np.r_[0.0, t])
        b = np.cumsum(np.asarray(p.series["host_write_bytes"], dtype=float)) \
            if "host_write_bytes" in p.series else np.cumsum(iops * dt * 4096)
        if name == "recovery":
            recovery_from = start
        elif name == "trimmed":
            trimmed_from = start
        xs.append(start + b / area)
        ys.append(iops)
        start = float(xs[-1][-1]) if xs[-1].size else start
    spans: list[tuple[float, float]] = sorted(
        (_share(n[3:]), float(p.latency["mean_us"])) for n, p in named.items()
        if n.startswith("ws_") and p.latency.get("mean_us") is not None)
    q = named.get("qd1_read")
    if q is not None and q.latency.get("mean_us") is not None:
        spans.append((1.0, float(q.latency["mean_us"])))
    return Print(label, gb / gb[-1], np.asarray(fill.segments["mbps"], dtype=float), hists,
                 np.concatenate(xs) if xs else np.empty(0), np.concatenate(ys) if ys else np.empty(0),
                 recovery_from, np.array([s for s, _ in spans]), np.array([u for _, u in spans]),
                 dashed, trimmed_from)


def _share(label: str) -> float:
    num, _, den = label.partition("/")
    return float(num) / float(den or 1)


def _share_label(x: float) -> str:
    return "1" if x >= 1 else f"1/{round(1 / x)}"


def prints(runs: Sequence[ReportRun]) -> list[Print]:
    out = []
    for r in runs:
        for d in r.drives:
            p = print_of(d.shown, d.phases)
            if p is not None:
                out.append(p)
    return out


def figures(runs: Sequence[ReportRun], opts: FigureOptions) -> list[Drawn]:
    ps = prints(runs)
    if not ps:
        return []
    return [Drawn("fingerprint", lambda: fingerprint_html(ps, "fingerprint"),
                  lambda out: [fingerprint_png(ps, out, "fingerprint")])]


TITLES = ("Fill: sequential write", "QD1 4 KiB latency", "Random writes: stretch, pause, burst, trimmed",
          "QD1 4 KiB read latency by span")


def fingerprint_html(ps: list[Print], key: str, title: str = "Fingerprint battery") -> str:
    fig = make_subplots(rows=2, cols=2, subplot_titles=TITLES, vertical_spacing=0.16,
                        horizontal_spacing=0.1)
    for i, p in enumerate(ps):
        col = COLORS[i % len(COLORS)]
        line = dict(color=col, dash="dash" if p.dashed else "solid")
        fig.add_trace(go.Scatter(x=_l(p.fill_share), y=_l(p.fill_mbps), name=p.label, line=line,
                                 legendgroup=p.label), row=1, col=1)
        for kind, dash in (("read", None), ("write", "dot")):
            if kind in p.hists:
                e, c = p.hists[kind]
                fig.add_trace(go.Scatter(x=_l(e), y=_l(c), name=f"{p.label} {kind}", mode="lines+markers",
                                         line=dict(color=col, dash=dash or line["dash"]), legendgroup=p.label,
                                         showlegend=False), row=1, col=2)
        fig.add_trace(go.Scatter(x=_l(p.burst_dw), y=_l(p.burst_iops), name=p.label, line=line,
                                 legendgroup=p.label, showlegend=False), row=2, col=1)
        fig.add_trace(go.Scatter(x=_l(p.span_share), y=_l(p.span_us), name=p.label, mode="lines+markers",
                                 line=line, legendgroup=p.label, showlegend=False), row=2, col=2)
    fig.update_xaxes(title_text="share of the area written", row=1, col=1)
    fig.update_yaxes(title_text="MB/s", rangemode="tozero", row=1, col=1)
    fig.update_xaxes(title_text="µs (reads; dotted: writes)", type="log", row=1, col=2)
    fig.update_yaxes(title_text="share of I/Os", row=1, col=2)
    fig.update_xaxes(title_text="drive writes", row=2, col=1)
    fig.update_yaxes(title_text="IOPS", rangemode="tozero", row=2, col=1)
    fig.update_xaxes(title_text="span read (share of the area)", type="log", row=2, col=2)
    fig.update_yaxes(title_text="mean µs", rangemode="tozero", row=2, col=2)
    _base_layout(fig, title, 820)
    _legend_below_plot(fig)
    return _div(fig, f"fig-{key}", figure=key)


def latency_ticks(ax: Any) -> None:
    """Plain numbers on a log latency axis (not 2 x 10^1): at 1, 2 and 5 of each decade where
    the axis spans two decades or less, else at each decade (a tail of 20 ms over 5 us reads
    have four, whose 1-2-5 labels run into each other in a half-width panel)."""
    lo, hi = ax.get_xlim()
    wide = lo > 0 and hi > lo and math.log10(hi / lo) > 2
    ax.xaxis.set_major_locator(LogLocator(subs=(1.0,) if wide else (1.0, 2.0, 5.0)))
    ax.xaxis.set_major_formatter(_plain)
    ax.xaxis.set_minor_formatter(NullFormatter())


def fingerprint_png(ps: list[Print], out_dir: Path, stem: str, title: str = "Fingerprint battery") -> Path:
    fig, grid = plt.subplots(2, 2, figsize=(WIDTH, 5.6), layout="constrained")
    (fill, hist), (burst, span) = grid
    for i, p in enumerate(ps):
        col = COLORS[i % len(COLORS)]
        ls = "--" if p.dashed else "-"
        fill.plot(p.fill_share, p.fill_mbps, ls, color=col, label=p.label)
        for kind, alpha in (("read", 1.0), ("write", 0.45)):
            if kind in p.hists:  # one stem per ~3 % bucket: page types and waits are spikes
                e, c = p.hists[kind]
                hist.vlines(e, 0, c, color=col, alpha=alpha, lw=1.6, linestyles=ls)
        burst.plot(p.burst_dw, p.burst_iops, ls, color=col, lw=0.7)
        for x in (p.recovery_from, p.trimmed_from):
            if np.isfinite(x):
                burst.axvline(x, color=col, lw=0.6, ls=":")
        span.plot(p.span_share, p.span_us, ls, color=col, marker="o", ms=3)
    fill.set(xlabel="share of the area written", ylabel="MB/s", title=TITLES[0])
    hist.set(xscale="log", xlabel="µs (reads; pale: writes)", ylabel="share of I/Os", title=TITLES[1])
    burst.set(xlabel="drive writes (dotted: the pause, the trim)", ylabel="IOPS", title=TITLES[2])
    span.set(xscale="log", xlabel="span read (share of the area)", ylabel="mean µs", title=TITLES[3])
    for ax in (fill, burst, span):
        _from_zero(ax)
        ax.yaxis.set_major_formatter(_thousands)
    # plain numbers on the log axes (not 2 x 10^1); the spans by their share of the area
    latency_ticks(hist)
    shares = sorted({float(x) for p in ps for x in p.span_share})
    if shares:
        step = max(1, len(shares) // 6)
        span.set_xticks(shares[::-step][::-1], [_share_label(x) for x in shares[::-step][::-1]])
        span.xaxis.set_minor_formatter(NullFormatter())
    fig.suptitle(title, fontsize=10)
    # fewer columns, or wrapped: names cut short ran off the figure and lost their --set
    P._legend_below(fig, fill, ncols=min(3, len(ps)))
    return P._save(fig, out_dir, stem)
