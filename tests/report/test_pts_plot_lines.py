"""A PTS plot with many lines (DIRTH's demand intensity: 7 thread counts, the ceiling and 3
points) gives each its own colour, in the PNG and the HTML (the libraries' 10-colour cycles
gave the 11th the 1st one's), and its PNG's legend sits under the plot, off its data."""

from __future__ import annotations

import json
import re

import matplotlib.colors as mcolors

import ssdlab.figures.pts_plots as pp
from ssdlab.figures.png import STYLE, plt
from ssdlab.figures.pts_plots import Line, Plot


def plot() -> Plot:
    lines = [Line(f"{t} threads", [1e3 * q for q in range(1, 6)], [0.1 * q * t for q in range(1, 6)]) for t in range(11)]
    lines[7] = Line("ceiling", [0, 5e3], [5, 5], "lines", dash="dot")
    lines[8:] = [Line(f"{p} point", [2e3], [1.0], "markers") for p in ("Max", "Mid", "Min")]
    return Plot("fig-k-demand", "demand", "IOPS", "ms", lines)


def test_every_line_has_its_own_colour_and_the_legend_is_off_the_plot(tmp_path, monkeypatch):
    seen = {}

    def keep(fig, out_dir, key):
        fig.canvas.draw()
        (ax,) = fig.axes
        seen["colors"] = [mcolors.to_hex(ln.get_color()) for ln in ax.get_lines()]
        seen["legend"] = (fig.legends[0].get_window_extent() if fig.legends else ax.get_legend().get_window_extent())
        seen["axes"] = ax.get_window_extent()
        plt.close(fig)
        return []

    monkeypatch.setattr(pp, "_save", keep)
    with plt.rc_context(STYLE):
        plot().png(tmp_path)
    assert len(seen["colors"]) == 11 and len(set(seen["colors"])) == 11
    assert seen["legend"].y1 <= seen["axes"].y0  # under the axes, not over the data


def test_the_html_gives_every_line_its_own_colour():
    html = plot().html()
    data = json.loads(re.search(r'Plotly\.newPlot\(\s*"[^"]+",\s*(\[.*?\]),\s*\{', html, re.S)[1])
    colors = [(t.get("line") or {}).get("color") or (t.get("marker") or {}).get("color") for t in data]
    assert len(colors) == 11 and None not in colors and len(set(colors)) == 11


def test_a_long_title_wraps_inside_the_figure(tmp_path, monkeypatch):
    """A window's title ends with its verdict ("... NOT steady"), which ran off the PNG."""
    title = ("pts-latency: measurement window, rounds 1-2: RND 4 KiB 0/100 average response time (us) NOT steady"
             "\nWD SN520 128 GB (OEM, PCIe 3.0 x2, BiCS3 TLC, HMB) [user_capacity_gb=1]")
    seen = {}

    def keep(fig, out_dir, key):
        from ssdlab.figures.png import DPI

        fig.set_dpi(DPI)
        fig.canvas.draw()
        (ax,) = fig.axes
        seen["title"], seen["box"], seen["page"] = ax.title.get_text(), ax.title.get_window_extent(), fig.bbox.frozen()
        plt.close(fig)
        return []

    monkeypatch.setattr(pp, "_save", keep)
    with plt.rc_context(STYLE):
        Plot("fig-k-window", title, "round", "us", [Line("avg", [1, 2], [20.0, 21.0])]).png(tmp_path)
    assert seen["page"].x0 <= seen["box"].x0 and seen["box"].x1 <= seen["page"].x1
    assert " ".join(seen["title"].split()) == " ".join(title.split())  # wrapped, every word kept
