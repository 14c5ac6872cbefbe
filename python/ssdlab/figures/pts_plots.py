"""The figure kinds of the PTS report pages: line (or marker, or bar) plots, tables and a
3D bar chart of a matrix, each as HTML (plotly, or a plain table) and as a PNG
(matplotlib). They hold plain numbers and name their axes; methodology/pts/ fills them
from the runs."""

from __future__ import annotations

import html as _html
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

FONT = dict(family="DejaVu Sans, Arial, sans-serif", size=13)
CONFIG = {"displaylogo": False, "responsive": True,
          "toImageButtonOptions": {"format": "png", "scale": 2}}
DASH = {"dash": "--", "dot": ":"}
TABLE_CHARS = 120  # a table PNG's row, in characters: longer cells wrap
# a colour per line, and more of them than a plot has (DIRTH: 7 thread counts, the ceiling
# and 3 points): the libraries' 10-colour cycles gave the 11th line the 1st one's colour
LINE_COLORS = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000",
               "#882255", "#44AA99", "#999933", "#AA4499", "#332288", "#888888", "#661100",
               "#6699CC", "#117733"]


def line_color(i: int) -> str:
    return LINE_COLORS[i % len(LINE_COLORS)]


def _num(v) -> float:
    try:
        f = float(v)
    except (TypeError, ValueError):
        return math.nan
    return f


def _json_list(a) -> list:
    return [None if not math.isfinite(_num(v)) else round(_num(v), 4) for v in a]


def _pyplot():
    from .png import plt  # Agg, matplotlib's own defaults (no matplotlibrc of the working directory)

    return plt


def _title(fig, ax, text: str, size: float) -> None:
    """The axes' title, each line wrapped where it would run off the figure as saved (a
    window's verdict, "... NOT steady", comes last on a long line)."""
    import textwrap

    from .png import DPI

    t = ax.set_title(text, fontsize=size)
    fig.set_dpi(DPI)
    # the axes where the saved figure has them (its layout, without drawing it: the save
    # draws it), and the title's extent there
    renderer = fig.canvas.get_renderer()
    if (engine := fig.get_layout_engine()) is not None:
        engine.execute(fig)
    box, page = t.get_window_extent(renderer), fig.bbox
    if box.x0 >= page.x0 and box.x1 <= page.x1:
        return
    lines = text.split("\n")
    chars = max(20, int(max(map(len, lines)) * 0.9 * page.width / box.width))
    t.set_text("\n".join(textwrap.fill(line, chars) for line in lines))


def _save(fig, out_dir: Path, key: str) -> list[Path]:
    path = Path(out_dir) / f"{key}.png"
    fig.savefig(path)
    _pyplot().close(fig)
    return [path]


@dataclass
class Line:
    name: str
    x: Sequence[float]
    y: Sequence[float | None]
    mode: str = "lines+markers"  # plotly mode; "lines" for a fit or a limit, "markers"
    # for points that must not be joined, "bars" for a histogram
    dash: str | None = None  # "dash", "dot" for guides


@dataclass
class Plot:
    key: str
    title: str
    xlabel: str
    ylabel: str
    lines: list[Line] = field(default_factory=list)
    log_x: bool = False
    log_base: int = 10  # the PNG's log x axis
    log_y: bool = False
    y_from_zero: bool = True
    caption: str = ""
    # ticks at these x values, named (block sizes, queue depths); None: the library's
    xticks: Sequence[float] | None = None
    xticklabels: Sequence[str] | None = None

    def html(self) -> str:
        import plotly.graph_objects as go

        from .html import plotly_div

        fig = go.Figure()
        for i, ln in enumerate(self.lines):
            if ln.mode == "bars":
                fig.add_trace(go.Bar(x=_json_list(ln.x), y=_json_list(ln.y), name=ln.name,
                                     marker_color=line_color(i)))
                continue
            fig.add_trace(go.Scatter(x=_json_list(ln.x), y=_json_list(ln.y), name=ln.name,
                                     mode=ln.mode, marker=dict(color=line_color(i)),
                                     line=dict(color=line_color(i), dash=ln.dash)))
        fig.update_layout(title=self.title.replace("\n", "<br>"), font=FONT, height=460,
                          xaxis_title=self.xlabel,
                          yaxis_title=self.ylabel, legend=dict(orientation="h", y=-0.22),
                          bargap=0.05)
        if self.log_x:
            fig.update_xaxes(type="log")
        if self.log_y:
            fig.update_yaxes(type="log")
        elif self.y_from_zero:
            fig.update_yaxes(rangemode="tozero")
        if self.xticks is not None:
            fig.update_xaxes(tickvals=list(self.xticks),
                             ticktext=list(self.xticklabels or [f"{v:g}" for v in self.xticks]))
        div = plotly_div(fig, self.key)  # the reports' template
        cap = f'<p class="meta">{_html.escape(self.caption)}</p>' if self.caption else ""
        return div + cap

    def png(self, out_dir: Path) -> list[Path]:
        plt = _pyplot()
        fig, ax = plt.subplots(figsize=(7, 4.2), dpi=200, layout="constrained")
        for i, ln in enumerate(self.lines):
            x = np.asarray([_num(v) for v in ln.x], dtype=float)
            y = np.asarray([_num(v) for v in ln.y], dtype=float)
            if ln.mode == "bars":
                w = np.diff(x).min() * 0.9 if x.size > 1 else 1.0
                ax.bar(x, y, width=w, label=ln.name, alpha=0.8, color=line_color(i))
                continue
            joined = "lines" in ln.mode
            ax.plot(x, y, color=line_color(i), linestyle=DASH.get(ln.dash or "", "-") if joined else "none",
                    marker="o" if "markers" in ln.mode else None,
                    markersize=3 if joined else 2.5, label=ln.name, linewidth=1.2)
        if self.log_x:
            from matplotlib.ticker import FuncFormatter

            ax.set_xscale("log", base=self.log_base)
            ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))  # 10, not 10^1
        if self.log_y:
            ax.set_yscale("log")
        if self.xticks is not None:
            ax.set_xticks(list(self.xticks))
            ax.set_xticklabels(list(self.xticklabels or [f"{v:g}" for v in self.xticks]))
            ax.minorticks_off()
        elif self.xlabel == "round":
            from matplotlib.ticker import MaxNLocator

            ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        if self.y_from_zero and not self.log_y:
            ax.set_ylim(bottom=0)
        if not self.log_y:  # 30,000 IOPS, not 30000
            from matplotlib.ticker import FuncFormatter

            ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: tick(v)))
        ax.set_xlabel(self.xlabel)
        ax.set_ylabel(self.ylabel)
        ax.grid(True, alpha=0.3)
        if len(self.lines) > 1:  # under the plot, never over its data (one line: the axes name it)
            from .png import _legend_below

            _legend_below(fig, ax)
        _title(fig, ax, self.title, 10)
        return _save(fig, out_dir, self.key)


def tick(v: float) -> str:
    """A linear axis' tick label: thousands separated, whole numbers without decimals."""
    r = round(v)
    return f"{int(r):,}" if abs(v - r) <= 1e-9 * max(1.0, abs(v)) else f"{v:,g}"


def _number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _decimals(f: float) -> int:
    """The decimals fmt gives a number that is not whole: 1 from 10 up, else 3 significant
    digits (at most 3 decimals)."""
    if abs(f) >= 10:
        return 1
    return min(3, max(1, 2 - math.floor(math.log10(abs(f))))) if f else 1


def _fixed(d: int) -> Callable[[Any], str]:
    """Numbers with `d` decimals (anything else as fmt gives it)."""
    return lambda v: f"{float(v):,.{d}f}" if _number(v) and math.isfinite(float(v)) else fmt(v)


def column_formats(rows: Sequence[Sequence]) -> list[Callable[[Any], str]]:
    """Each column's formatter: a column of numbers (missing values aside) has one format,
    whole numbers if they all are, else the decimals fmt gives its largest (1 and 10.04
    read "1.0" and "10.0", not "1" and "10.0"); a column that holds text too formats each
    value its own way (a report header's values)."""
    out: list[Callable[[Any], str]] = []
    for col in zip(*rows) if rows else ():
        nums = [float(v) for v in col if _number(v) and math.isfinite(float(v))]
        text = [v for v in col if v is not None and not _number(v)]
        if text or not nums or all(f.is_integer() and abs(f) < 1e12 for f in nums):
            out.append(fmt)
            continue
        out.append(_fixed(_decimals(max(nums, key=abs))))
    return out


def numeric_columns(rows: Sequence[Sequence]) -> list[bool]:
    """Which columns hold numbers only (missing values aside): shown aligned right."""
    return [any(_number(v) for v in col) and all(v is None or _number(v) for v in col)
            for col in (zip(*rows) if rows else ())]


def fmt(v) -> str:
    if v is None or isinstance(v, bool):
        return "-" if v is None else ("yes" if v else "no")
    if isinstance(v, (int, float)):
        f = float(v)
        if not math.isfinite(f):
            return "-"
        if f.is_integer() and abs(f) < 1e12:
            return f"{int(f):,}"
        return f"{f:,.1f}" if abs(f) >= 10 else f"{f:.3g}"
    if isinstance(v, (list, tuple)):
        return ", ".join(fmt(x) for x in v)
    return str(v)


def _header_width(text: str, lines: int = 3) -> int:
    """The narrowest width (characters) that wraps a column's name into at most `lines`."""
    import textwrap

    w = max(map(len, text.split()), default=1)
    while len(textwrap.wrap(text, w)) > lines:
        w += 1
    return w


@dataclass
class Table:
    key: str
    title: str
    columns: list[str]
    rows: list[list]
    caption: str = ""

    def cells(self) -> list[list[str]]:
        """The rows as shown, one format per column (column_formats)."""
        fs = column_formats(self.rows)
        return [[f(v) for f, v in zip(fs, r)] for r in self.rows]

    def html(self) -> str:
        e = _html.escape
        # a column of numbers aligned right (table.compare td.num)
        num = [' class="num"' if n else "" for n in numeric_columns(self.rows) or [False] * len(self.columns)]
        head = "".join(f"<th>{e(c)}</th>" for c in self.columns)
        body = "".join("<tr>" + "".join(f"<td{n}>{e(v)}</td>" for v, n in zip(r, num)) + "</tr>"
                       for r in self.cells())
        cap = f'<p class="meta">{e(self.caption)}</p>' if self.caption else ""
        return (f'<table id="{e(self.key)}" class="compare pts"><caption>{e(self.title).replace(chr(10), ", ")}</caption>'
                f"<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>{cap}")

    def png(self, out_dir: Path) -> list[Path]:
        import textwrap

        plt = _pyplot()
        cells = self.cells() or [["-"] * len(self.columns)]
        # a header may take three lines (its words unbroken): a column is as wide as its
        # values, not as its name on one line ("block size (KiB)" over "1024")
        natural = [max(_header_width(str(c)), *(len(r[i]) for r in cells)) for i, c in enumerate(self.columns)]
        num = numeric_columns(self.rows)
        if any(num):
            # the columns of numbers share one width, their names on one line where the row
            # still fits: a matrix's headers alike ("R/W 0/100" wrapped beside "R/W 5/95" not)
            even = max(max(natural[i], len(str(c))) for i, c in enumerate(self.columns) if num[i])
            if sum(even if n else w for n, w in zip(num, natural)) <= TABLE_CHARS:
                natural = [even if n else w for n, w in zip(num, natural)]
        cap = max(natural)  # the widest columns wrap so that a row fits TABLE_CHARS
        while sum(min(w, cap) for w in natural) > TABLE_CHARS and cap > 8:
            cap -= 1
        widths = [min(w, cap) + 2 for w in natural]
        wrap = [[textwrap.fill(c, min(w, cap)) or c for c, w in zip(r, natural)] for r in cells]
        head = [textwrap.fill(str(c), min(w, cap)) for c, w in zip(self.columns, natural)]
        lines = [max(x.count("\n") + 1 for x in r) for r in [head, *wrap]]
        line_in = 0.16
        fig, ax = plt.subplots(figsize=(9, 0.9 + line_in * (sum(lines) + len(lines))), dpi=200)
        ax.axis("off")
        t = ax.table(cellText=wrap, colLabels=head, loc="upper center", cellLoc="left",
                     colWidths=[w / sum(widths) for w in widths])
        t.auto_set_font_size(False)
        t.set_fontsize(7)
        unit = 1.0 / (sum(lines) + len(lines))
        for (row, col), cell in t.get_celld().items():
            cell.set_height(unit * (lines[row] + 1))
            cell.PAD = 0.02
            if row and num and num[col]:  # numbers aligned right, as on the page (headers centred)
                cell.get_text().set_horizontalalignment("right")
        _title(fig, ax, self.title, 9)
        fig.tight_layout()
        return _save(fig, out_dir, self.key)


@dataclass
class Matrix3D:
    """A matrix over two categorical axes as 3D bars, in SNIA's orientation: `x_labels`
    (block sizes, small to large) left to right, `y_labels` front to back (R/W mix, the
    first, 0/100, in front), the value up."""

    key: str
    title: str
    x_labels: list[str]  # columns, e.g. block sizes in KiB
    y_labels: list[str]  # rows, front to back, e.g. R/W mixes
    z: list[list[float | None]]  # [row][column]; None: no value (a gap, a flat bar)
    zlabel: str = "IOPS"
    xlabel: str = "block size (KiB)"
    ylabel: str = "R/W mix (% read / % write)"

    def _z(self) -> np.ndarray:
        z = np.array([[_num(v) for v in r] for r in self.z], dtype=float)
        return np.where(np.isfinite(z), z, 0.0)

    def html(self) -> str:
        import plotly.graph_objects as go
        import plotly.io as pio

        z = self._z()
        ny, nx = z.shape
        colors = ["#440154", "#3b528b", "#21918c", "#5ec962", "#fde725", "#f89540", "#cc4778"]
        fig = go.Figure()
        w = 0.35  # half a bar's width: bars stand apart on the integer grid
        for j in range(ny):
            xs: list[float] = []
            ys: list[float] = []
            zs: list[float] = []
            ii: list[int] = []
            jj: list[int] = []
            kk: list[int] = []
            for i in range(nx):
                base = len(xs)
                for dz in (0.0, z[j, i]):
                    for dx, dy in ((-w, -w), (w, -w), (w, w), (-w, w)):
                        xs.append(i + dx)
                        ys.append(j + dy)
                        zs.append(dz)
                faces = ((0, 1, 2), (0, 2, 3), (4, 5, 6), (4, 6, 7), (0, 1, 5), (0, 5, 4),
                         (1, 2, 6), (1, 6, 5), (2, 3, 7), (2, 7, 6), (3, 0, 4), (3, 4, 7))
                for a, b, c in faces:
                    ii.append(base + a)
                    jj.append(base + b)
                    kk.append(base + c)
            fig.add_trace(go.Mesh3d(x=xs, y=ys, z=zs, i=ii, j=jj, k=kk, flatshading=True,
                                    color=colors[j % len(colors)], name=self.y_labels[j],
                                    showlegend=True, hovertemplate=(
                                        f"{self.y_labels[j]}<br>%{{z:,.0f}} {self.zlabel}"
                                        "<extra></extra>")))
        ax = dict(showbackground=False)
        fig.update_layout(
            title=self.title.replace("\n", "<br>"), font=FONT, height=680,
            margin=dict(l=0, r=0, t=70, b=0),
            legend=dict(title=self.ylabel, x=1.0, y=0.9, xanchor="right"),
            scene=dict(
                xaxis=dict(ax, title=self.xlabel, tickvals=list(range(nx)), ticktext=self.x_labels),
                yaxis=dict(ax, title="R/W mix", tickvals=list(range(ny)), ticktext=self.y_labels),
                zaxis=dict(ax, title=self.zlabel, rangemode="tozero"),
                aspectmode="manual", aspectratio=dict(x=1.6, y=1.1, z=0.8),
                # as the PNG: seen from the first row, 22 degrees up, small blocks on the left
                camera=dict(eye=dict(x=1.35, y=-2.1, z=1.0))))
        return pio.to_html(fig, include_plotlyjs=False, full_html=False, div_id=self.key,
                           config=CONFIG)

    def png(self, out_dir: Path) -> list[Path]:
        plt = _pyplot()
        z = self._z()
        fig = plt.figure(figsize=(8, 6.2), dpi=200)
        ax = fig.add_subplot(projection="3d")
        ny, nx = z.shape
        colors = plt.cm.viridis(np.linspace(0, 1, ny))
        # back rows first, so that the front rows are drawn over them
        for j in range(ny - 1, -1, -1):
            ax.bar3d(np.arange(nx) - 0.3, np.full(nx, j - 0.3), np.zeros(nx), 0.6, 0.6, z[j],
                     color=colors[j], shade=True, zsort="max")
        ax.set_xticks(np.arange(nx))
        ax.set_xticklabels(self.x_labels, fontsize=7)
        ax.set_yticks(np.arange(ny))
        ax.set_yticklabels(self.y_labels, fontsize=7, ha="left", va="center")
        ax.tick_params(axis="z", labelsize=7, pad=6)
        from matplotlib.ticker import FuncFormatter

        ax.zaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:,.0f}"))
        ax.set_xlabel(self.xlabel, labelpad=10, fontsize=9)
        ax.set_ylabel(self.ylabel, labelpad=14, fontsize=9)
        ax.set_zlabel(self.zlabel, labelpad=14, fontsize=9)
        ax.view_init(elev=22, azim=-58)  # viewer at the first row, small blocks on the left
        fig.subplots_adjust(left=0.02, right=0.9, bottom=0.05, top=0.92)
        _title(fig, ax, self.title, 10)
        fig.canvas.draw()
        over = ax.title.get_window_extent().y1 - fig.bbox.y1
        if over > 0:  # a wrapped title's lines: the chart moves down under them
            fig.subplots_adjust(top=0.92 - (over + 8) / fig.bbox.height)
        return _save(fig, out_dir, self.key)
