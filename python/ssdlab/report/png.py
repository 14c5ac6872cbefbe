"""One PNG per figure, drawn with matplotlib (Agg: no display needed) in a plain
publication style; the same figures and numbers as the HTML report (both read data.py)."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.ticker import FixedFormatter, FixedLocator, FuncFormatter, NullLocator  # noqa: E402

from . import data as D  # noqa: E402
from .log_axis import LogAxis, log_axis, panel_notes  # noqa: E402
from .model import ReportRun  # noqa: E402
from .style import COLORS, COUNTER_COLOR, LINE_COLORS  # noqa: E402
from .trace import trace_bars  # noqa: E402

DPI = 200
WIDTH = 7.0  # inches: a two-column figure in a paper or a review page
STYLE = {
    "font.family": "DejaVu Sans", "font.size": 8.5, "axes.titlesize": 9.5,
    "axes.labelsize": 8.5, "axes.spines.top": False, "axes.spines.right": False,
    "axes.grid": True, "axes.axisbelow": True, "grid.color": "#e6e6e6", "grid.linewidth": 0.6,
    "legend.frameon": False,
    "lines.linewidth": 1.0,  # layout="constrained" fits labels; bbox "tight" would redraw
}
_thousands = FuncFormatter(lambda v, _: f"{v:,.0f}" if abs(v) >= 1000 or v == int(v) else f"{v:g}")


def _from_zero(ax) -> None:
    """A y axis from 0 with headroom over the data: autoscaling a flat line (a DRAM drive's
    working-set IOPS, a WAF of 1) leaves it on the top edge, where it reads as clipped."""
    ys = [np.asarray(ln.get_ydata(), dtype=float) for ln in ax.get_lines()]
    top = max((float(np.nanmax(y)) for y in ys if y.size and np.isfinite(y).any()), default=0.0)
    ax.set_ylim(0, max(ax.get_ylim()[1], 1.08 * top) or 1.0)


def _save(fig, out_dir: Path, name: str) -> Path:
    path = out_dir / f"{name}.png"
    fig.savefig(path, dpi=DPI)
    plt.close(fig)
    return path


def _stack(n_counters: int, main_rows: int = 1, height: float = 3.0):
    """Main panel(s) on top, the simulator's counters as short panels beneath."""
    ratios = [3] * main_rows + [1] * n_counters
    fig, axes = plt.subplots(len(ratios), 1, figsize=(WIDTH, height + 0.9 * n_counters),
                             gridspec_kw={"height_ratios": ratios}, squeeze=False,
                             layout="constrained")
    return fig, list(axes[:, 0])


def _counters(axes, counters: D.Counters | None, panels: list[D.Panel]) -> None:
    for ax, panel in zip(axes, panels):
        for key in panel.lines:
            vals = counters.lines.get(key) if counters is not None else None
            if vals is not None:
                ax.plot(counters.x, vals, color=LINE_COLORS.get(key, COUNTER_COLOR), lw=0.8,
                        ls="--" if key in D.DASHED else "-")
        ax.set_ylabel(panel.unit)
        if panel.zero:
            _from_zero(ax)
        ax.yaxis.set_major_formatter(_thousands)
        ax.locator_params(axis="y", nbins=3)
        ax.set_title(panel.title, fontsize=7.5, loc="left", pad=2, color="#444")


def _legend_below(fig, ax, ncols: int | None = None) -> None:
    """The legend under the plot, outside the axes: it never covers data."""
    handles, labels = ax.get_legend_handles_labels()
    if handles:
        fig.legend(handles, labels, loc="outside lower center",
                   ncols=ncols or min(len(labels), 3), fontsize=7.5)


def fill_pngs(curves: list[D.FillCurve], y_top: float, out_dir: Path) -> list[Path]:
    out = []
    if len(curves) > 1:
        fig, ax = plt.subplots(figsize=(WIDTH, 3.2), layout="constrained")
        for i, c in enumerate(curves):
            ax.plot(c.gb, c.mbps, color=COLORS[i % len(COLORS)], label=c.label)
        ax.set(xlabel="GB written", ylabel="MB/s", ylim=(0, y_top), xlim=(0, None),
               title="Whole-drive fill: write speed per GB written")
        _legend_below(fig, ax)
        ax.yaxis.set_major_formatter(_thousands)
        out.append(_save(fig, out_dir, "fill-overlay"))
    for i, c in enumerate(curves):
        panels = c.counters.panels() if c.counters else []
        fig, axes = _stack(len(panels))
        ax = axes[0]
        ax.plot(c.gb, c.mbps, color=COLORS[i % len(COLORS)])
        ax.set(ylabel="MB/s", ylim=(0, y_top), title=f"Whole-drive fill: {c.label}")
        ax.yaxis.set_major_formatter(_thousands)
        _counters(axes[1:], c.counters, panels)
        for a in axes:
            a.set_xlim(0, float(c.gb[-1]) if len(c.gb) else None)
        for a in axes[:-1]:
            a.tick_params(labelbottom=False)
        axes[-1].set_xlabel("GB written")
        fig.align_ylabels(axes)
        out.append(_save(fig, out_dir, f"fill-{i + 1}-{D.slug(c.label)}"))
    return out


def _log_panel(ax, t: np.ndarray, iops: np.ndarray, axis: LogAxis, lw: float) -> None:
    """Per-second IOPS on `axis` (data.LogAxis): 0-IOPS seconds on the floor line, marked."""
    ax.plot(t, axis.plotted(iops), color=COLORS[0], lw=lw)
    ax.set_yscale("log")
    ax.set_ylim(axis.lo, axis.hi)
    ax.yaxis.set_major_locator(FixedLocator(axis.ticks))
    ax.yaxis.set_major_formatter(FixedFormatter(axis.labels))
    ax.yaxis.set_minor_locator(NullLocator())
    if axis.floor:
        ax.axhline(axis.floor, color="#999", lw=0.6, ls="--", zorder=1)
        z = np.asarray(iops) == 0
        ax.plot(t[z], np.full(int(z.sum()), axis.floor), "|", color="#B3261E", ms=9, mew=1.4)


def _panel_title(base: str, iops: np.ndarray, scale: str) -> str:
    notes = panel_notes(iops, scale)
    return f"{base} ({scale} scale{'; ' + notes if notes else ''})"


def consistency_pngs(combos: list[D.ConsistencyCombo], out_dir: Path) -> list[Path]:
    return [_save(consistency_fig(c), out_dir, f"consistency-{D.slug(c.label)}-spare{c.spare_pct:g}")
            for c in combos]


def consistency_fig(c: D.ConsistencyCombo):
    """Whole run (log), the simulator's counters or a real drive's temperature beneath it,
    and the window from WINDOW_START_S on log and linear axes."""
    panels = c.counters.panels() if c.counters else []
    ratios = [3] + [1] * len(panels) + [2.4, 2.4]
    fig, axes = plt.subplots(len(ratios), 1, figsize=(WIDTH, 6.8 + 0.8 * len(panels)),
                             gridspec_kw={"height_ratios": ratios}, layout="constrained")
    axes = list(np.atleast_1d(axes))
    whole, counters, wlog, wlin = axes[0], axes[1:1 + len(panels)], axes[-2], axes[-1]
    _log_panel(whole, c.t, c.iops, log_axis([c.iops]), 0.6)
    whole.set_ylabel("IOPS")
    whole.set_title(_panel_title("Whole run", c.iops, "log"), fontsize=8.5)
    fig.suptitle(f"Performance consistency: {c.label}\n4 KiB random writes QD32, "
                 f"{D.spare_label(c.spare_pct)}", fontsize=9.5)
    _counters(counters, c.counters, panels)
    for a in [whole, *counters]:
        a.set_xlim(0, float(c.t[-1]) if len(c.t) else None)
    for a in [whole, *counters][:-1]:  # the lowest of them carries the time labels
        a.tick_params(labelbottom=False)
    (counters[-1] if counters else whole).set_xlabel("seconds")
    w = c.t >= c.window_start
    _log_panel(wlog, c.t[w], c.iops[w], log_axis([c.iops[w]]), 0.7)
    wlin.plot(c.t[w], c.iops[w], color=COLORS[0], lw=0.7)
    for ax, scale in ((wlog, "log"), (wlin, "linear")):
        # a run shorter than the window start (a quick --seconds run) still gets an axis
        ax.set(ylabel="IOPS", xlim=(c.window_start, max(float(c.t[-1]), c.window_start + 1)))
        ax.set_title(_panel_title(f"From t = {c.window_start:g} s", c.iops[w], scale), fontsize=8.5)
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


def working_set_png(sets: list[D.WorkingSet], out_dir: Path) -> Path:
    has_lat = any(s.lat_p99_us is not None for s in sets)
    fig, axes = plt.subplots(2 if has_lat else 1, 1, figsize=(WIDTH, 5.0 if has_lat else 3.0),
                             sharex=True, squeeze=False, layout="constrained")
    axes = list(axes[:, 0])
    for i, s in enumerate(sets):
        col = COLORS[i % len(COLORS)]
        axes[0].plot(s.gb, s.iops, "o-", color=col, ms=3.5, label=s.label)
        if has_lat and s.lat_p99_us is not None:
            axes[1].plot(s.gb, s.lat_p99_us, "o--", color=col, ms=3.5)
    ticks = sorted({float(g) for s in sets for g in s.gb})
    axes[0].set(xscale="log", ylabel="IOPS", title="Working-set size: 4 KiB random reads")
    _from_zero(axes[0])
    _legend_below(fig, axes[0])
    axes[0].yaxis.set_major_formatter(_thousands)
    if has_lat:
        axes[1].set(ylabel="99th pct latency (µs)")
        _from_zero(axes[1])
    axes[-1].set_xticks(ticks, [f"{t:g}" for t in ticks])
    axes[-1].minorticks_off()
    axes[-1].set_xlabel("working set (GB)")
    return _save(fig, out_dir, "working-set")


def _wrap(text: str, width: int = 95) -> str:
    import textwrap

    return "\n".join(textwrap.wrap(text, width))


def quick_png(g: D.QuickGroup, out_dir: Path) -> Path:
    n, k = len(g.metrics), max(len(g.series), 1)
    fig, ax = plt.subplots(figsize=(WIDTH, 1.5 + 0.22 * n * k + 0.15 * n), layout="constrained")
    h = 0.8 / k
    y = np.arange(n)
    for i, s in enumerate(g.series):
        yy = y - 0.4 + h * (i + 0.5)
        has_err = any(len(p) > 1 for p in s.points)  # single values: no whiskers to draw
        ax.barh(yy, s.value, height=h * 0.92, color=COLORS[i % len(COLORS)], alpha=0.85,
                label=s.label, xerr=s.whiskers if has_err else None, capsize=2,
                error_kw={"elinewidth": 0.8, "ecolor": "#333"})
        for j, pts in enumerate(s.points):  # every run, so clusters stay visible
            if len(pts) > 1:
                ax.plot(pts, [yy[j]] * len(pts), "o", mfc="none", mec="#111", ms=3, mew=0.7)
    ax.set_yticks(y, g.labels)
    ax.invert_yaxis()
    ax.grid(axis="y", visible=False)
    ax.set(xlabel=g.unit)
    # over the whole figure, not the axes: long bar labels push the axes right
    fig.suptitle(g.heading + (f"\n{_wrap(g.note)}" if g.note else ""), fontsize=8.5 if g.note else 9.5)
    ax.set_xlim(left=0)
    ax.xaxis.set_major_formatter(_thousands)
    _legend_below(fig, ax)
    return _save(fig, out_dir, g.fig_key)


def trim_png(curves: list[D.TrimCurves], out_dir: Path) -> Path:
    fig, ax = plt.subplots(figsize=(WIDTH, 3.2), layout="constrained")
    for i, c in enumerate(curves):
        col = COLORS[i % len(COLORS)]
        ax.plot(c.clean_gb, c.clean_mbps, color=col, lw=0.8, ls=":", label=f"{c.label}: clean")
        ax.plot(c.after_gb, c.after_mbps, color=col, lw=1.1, label=f"{c.label}: after TRIM")
    ax.set(xlabel="GB written", ylabel="MB/s", xlim=(0, None),
           title="TRIM validation: sequential write pass, clean vs after torture + TRIM")
    _from_zero(ax)
    ax.yaxis.set_major_formatter(_thousands)
    _legend_below(fig, ax, ncols=2)
    return _save(fig, out_dir, "trim")


def write_pngs(runs: list[ReportRun], out_dir: Path, y_max: float | None = None) -> list[Path]:
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    paths: list[Path] = []
    with plt.rc_context(STYLE):
        curves = D.fill_curves(runs)
        if curves:
            paths += fill_pngs(curves, D.fill_y_max(curves, y_max), out_dir)
        paths += consistency_pngs(D.consistency_combos(runs), out_dir)
        sets = D.working_sets(runs)
        if sets:
            paths.append(working_set_png(sets, out_dir))
        paths += [quick_png(g, out_dir) for g in D.quick_groups(runs)]
        trims = D.trim_curves(runs)
        if trims:
            paths.append(trim_png(trims, out_dir))
        paths += [quick_png(g, out_dir) for g in D.scalar_bars(runs)]
        paths += [quick_png(g, out_dir) for g in trace_bars(runs)]
    from .test_figures import figures_by_test

    for _name, figs in figures_by_test(runs):
        for f in figs:
            paths += f.png(out_dir)
    return paths
