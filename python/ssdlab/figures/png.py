"""What every test's PNG figures share, drawn with matplotlib (Agg: no display needed) in a
plain publication style: the same figures and numbers as the HTML (both read data.py)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import matplotlib

matplotlib.use("Agg")
# matplotlib's own defaults, then STYLE where the figures are drawn: never a matplotlibrc
# it read on import from the working directory first (another user's, in /tmp, restyled
# the figures of whoever ran ssdlab there, root included, or broke their drawing)
matplotlib.rcdefaults()
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.ticker import FuncFormatter  # noqa: E402

from . import data as D  # noqa: E402
from .style import COLORS, COUNTER_COLOR, LINE_COLORS  # noqa: E402

if TYPE_CHECKING:
    from matplotlib.typing import RcKeyType

DPI = 200


WIDTH = 7.0  # inches: a two-column figure in a paper or a review page


STYLE: dict[RcKeyType, Any] = {  # keys checked against matplotlib's rcParams
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


def counter_axes(axes, counters: D.Counters | None, panels: list[D.Panel]) -> None:
    for ax, panel in zip(axes, panels):
        for key in panel.lines:
            vals = counters.lines.get(key) if counters is not None else None
            if counters is not None and vals is not None:
                ax.plot(counters.x, vals, color=LINE_COLORS.get(key, COUNTER_COLOR), lw=0.8,
                        ls="--" if key in D.DASHED else "-")
        ax.set_ylabel(panel.unit)
        if panel.zero:
            _from_zero(ax)
        ax.yaxis.set_major_formatter(_thousands)
        ax.locator_params(axis="y", nbins=3)
        ax.set_title(panel.title, fontsize=7.5, loc="left", pad=2, color="#444")


def _legend_below(fig, ax, ncols: int | None = None) -> None:
    """The legend under the plot, outside the axes: it never covers data. Long labels (a
    drive's full name) take fewer columns, and wrap when one alone is wider than the figure:
    a legend wider than the figure is cut off at both sides."""
    handles, labels = ax.get_legend_handles_labels()
    if not handles:
        return
    fig.set_dpi(DPI)  # measured as saved: hinted text at 200 dpi is wider than twice 100 dpi's
    room = 0.98 * fig.bbox.width
    for n in range(ncols or min(len(labels), 3), 0, -1):
        legend = fig.legend(handles, labels, loc="outside lower center", ncols=n, fontsize=7.5)
        if legend.get_window_extent(fig.canvas.get_renderer()).width <= room or n == 1:
            break
        legend.remove()
    width = legend.get_window_extent(fig.canvas.get_renderer()).width
    if width > room:  # one column and still too wide: wrap each label to the figure's width
        chars = max(20, int(max(map(len, labels)) * room / width) - 8)
        legend.remove()
        fig.legend(handles, [_wrap(x, chars) for x in labels], loc="outside lower center",
                   ncols=1, fontsize=7.5)


def _wrap(text: str, width: int = 95) -> str:
    import textwrap

    return "\n".join(textwrap.wrap(text, width))


def bars_png(g: D.QuickGroup, out_dir: Path) -> Path:
    n, k = len(g.metrics), max(len(g.series), 1)
    fig, ax = plt.subplots(figsize=(WIDTH, 1.5 + 0.22 * n * k + 0.15 * n), layout="constrained")
    h = 0.8 / k
    y = np.arange(n)
    for i, s in enumerate(g.series):
        yy = y - 0.4 + h * (i + 0.5)
        has_err = any(len(p) > 1 for p in s.points)  # single values: no whiskers to draw
        ax.barh(yy, s.value, height=h * 0.92, color=s.color or COLORS[i % len(COLORS)], alpha=0.85,
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
