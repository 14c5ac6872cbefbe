"""The figure kinds of the PTS report pages: line plots, tables and a 3D bar/surface of a
matrix, each as HTML (plotly, or a plain table) and as a PNG (matplotlib). They hold plain
numbers; methodology/pts/figures.py fills them from the runs."""

from __future__ import annotations

import html as _html
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

FONT = dict(family="DejaVu Sans, Arial, sans-serif", size=13)
CONFIG = {"displaylogo": False, "responsive": True,
          "toImageButtonOptions": {"format": "png", "scale": 2}}


def _num(v) -> float:
    try:
        f = float(v)
    except (TypeError, ValueError):
        return math.nan
    return f


def _json_list(a) -> list:
    return [None if not math.isfinite(_num(v)) else round(_num(v), 4) for v in a]


@dataclass
class Line:
    name: str
    x: Sequence[float]
    y: Sequence[float]
    mode: str = "lines+markers"  # plotly mode; "lines" for a fit or a limit
    dash: str | None = None  # "dash", "dot" for guides


@dataclass
class Plot:
    key: str
    title: str
    xlabel: str
    ylabel: str
    lines: list[Line] = field(default_factory=list)
    log_x: bool = False
    y_from_zero: bool = True
    caption: str = ""

    def html(self) -> str:
        import plotly.graph_objects as go
        import plotly.io as pio

        fig = go.Figure()
        for ln in self.lines:
            fig.add_trace(go.Scatter(x=_json_list(ln.x), y=_json_list(ln.y), name=ln.name,
                                     mode=ln.mode, line=dict(dash=ln.dash) if ln.dash else None))
        fig.update_layout(title=self.title.replace("\n", "<br>"), font=FONT, height=440, template="plotly_white",
                          xaxis_title=self.xlabel, yaxis_title=self.ylabel,
                          legend=dict(orientation="h", y=-0.2))
        if self.log_x:
            fig.update_xaxes(type="log")
        if self.y_from_zero:
            fig.update_yaxes(rangemode="tozero")
        div = pio.to_html(fig, include_plotlyjs=False, full_html=False, div_id=self.key,
                          config=CONFIG)
        cap = f'<p class="meta">{_html.escape(self.caption)}</p>' if self.caption else ""
        return div + cap

    def png(self, out_dir: Path) -> list[Path]:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(7, 4), dpi=200)
        for ln in self.lines:
            style = {"dash": "--", "dot": ":"}.get(ln.dash or "", "-")
            marker = "o" if "markers" in ln.mode else None
            ax.plot(np.asarray(ln.x, dtype=float), np.asarray([_num(v) for v in ln.y]),
                    linestyle=style, marker=marker, markersize=3, label=ln.name, linewidth=1.2)
        if self.log_x:
            ax.set_xscale("log", base=2)
        if self.xlabel == "round":
            from matplotlib.ticker import MaxNLocator

            ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        if self.y_from_zero:
            ax.set_ylim(bottom=0)
        ax.set_title(self.title)
        ax.set_xlabel(self.xlabel)
        ax.set_ylabel(self.ylabel)
        ax.grid(True, alpha=0.3)
        if self.lines:
            ax.legend(fontsize=8, loc="best")
        fig.tight_layout()
        path = Path(out_dir) / f"{self.key}.png"
        fig.savefig(path)
        plt.close(fig)
        return [path]


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


@dataclass
class Table:
    key: str
    title: str
    columns: list[str]
    rows: list[list]
    caption: str = ""

    def html(self) -> str:
        e = _html.escape
        head = "".join(f"<th>{e(c)}</th>" for c in self.columns)
        body = "".join("<tr>" + "".join(f"<td>{e(fmt(v))}</td>" for v in r) + "</tr>"
                       for r in self.rows)
        cap = f'<p class="meta">{e(self.caption)}</p>' if self.caption else ""
        return (f'<table id="{e(self.key)}" class="compare pts"><caption>{e(self.title).replace(chr(10), ", ")}</caption>'
                f"<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>{cap}")

    def png(self, out_dir: Path) -> list[Path]:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        cells = [[fmt(v) for v in r] for r in self.rows] or [["-"] * len(self.columns)]
        h = 0.7 + 0.2 * (len(cells) + 1)
        fig, ax = plt.subplots(figsize=(7, h), dpi=200)
        ax.axis("off")
        widths = [max(len(str(c)), *(len(r[i]) for r in cells)) + 2 for i, c in enumerate(self.columns)]
        t = ax.table(cellText=cells, colLabels=self.columns, loc="upper center", cellLoc="left",
                     colWidths=[w / sum(widths) for w in widths])
        t.auto_set_font_size(False)
        t.set_fontsize(8)
        ax.set_title(self.title)
        fig.tight_layout()
        path = Path(out_dir) / f"{self.key}.png"
        fig.savefig(path)
        plt.close(fig)
        return [path]


@dataclass
class Matrix3D:
    """A matrix over two categorical axes (the IOPS R/W mix x block size) as a 3D bar
    chart (PNG) and an interactive surface (HTML)."""

    key: str
    title: str
    x_labels: list[str]  # columns, e.g. block sizes
    y_labels: list[str]  # rows, e.g. R/W mixes
    z: list[list[float | None]]  # [row][column]; None: no value (a gap, a flat bar)
    zlabel: str = "IOPS"

    def html(self) -> str:
        import plotly.graph_objects as go
        import plotly.io as pio

        fig = go.Figure(go.Surface(z=[_json_list(r) for r in self.z], x=self.x_labels,
                                   y=self.y_labels, colorscale="Viridis",
                                   colorbar=dict(title=self.zlabel)))
        fig.update_layout(title=self.title.replace("\n", "<br>"), font=FONT, height=560,
                          scene=dict(xaxis_title="block size", yaxis_title="R/W mix",
                                     zaxis_title=self.zlabel))
        return pio.to_html(fig, include_plotlyjs=False, full_html=False, div_id=self.key,
                           config=CONFIG)

    def png(self, out_dir: Path) -> list[Path]:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        z = np.array([[_num(v) for v in r] for r in self.z], dtype=float)
        z = np.where(np.isfinite(z), z, 0.0)
        fig = plt.figure(figsize=(7, 5.5), dpi=200)
        ax = fig.add_subplot(projection="3d")
        ny, nx = z.shape
        xs, ys = np.meshgrid(np.arange(nx), np.arange(ny))
        colors = plt.cm.viridis(np.linspace(0, 1, ny))
        for i in range(ny):
            ax.bar3d(xs[i], ys[i], np.zeros(nx), 0.6, 0.6, z[i], color=colors[i], shade=True)
        ax.set_xticks(np.arange(nx) + 0.3)
        ax.set_xticklabels(self.x_labels, fontsize=7)
        ax.set_yticks(np.arange(ny) + 0.3)
        ax.set_yticklabels(self.y_labels, fontsize=7)
        ax.set_xlabel("block size")
        ax.set_ylabel("R/W mix")
        ax.set_zlabel(self.zlabel)
        ax.set_title(self.title)
        path = Path(out_dir) / f"{self.key}.png"
        fig.savefig(path)
        plt.close(fig)
        return [path]
