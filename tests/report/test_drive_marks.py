"""How the report's figures name and colour a drive. A drive cut short (Ctrl-C: interrupted)
is marked as such in every figure that names it, HTML and PNG: its figures hold what was
recorded, and a PNG published on its own must not pass for a whole run's. A drive keeps
one colour in all the figures of a report, whichever drives each test compares it with."""

from __future__ import annotations

import json
import re

import matplotlib.colors as mcolors
import pytest
from matplotlib.container import BarContainer
from matplotlib.text import Text

import ssdlab.figures.png as P
from ssdlab import methodology
from ssdlab.figures import FigureOptions
from ssdlab.figures.model import ReportRun
from ssdlab.report import build_runs_report
from ssdlab.report.synthetic import (consistency_drive, fill_drive, idle_drive, quick_drive, trim_drive,
                                     working_set_drive)


@pytest.fixture
def drawn(monkeypatch):
    """Every matplotlib figure the report saves, by file name, read before it is closed."""
    figs: dict[str, dict] = {}
    save = P._save

    def keep(fig, out_dir, name):
        fig.canvas.draw()
        figs[name] = {"texts": [t.get_text() for t in fig.findobj(Text)],
                      "lines": {ln.get_label(): mcolors.to_hex(ln.get_color())
                                for ax in fig.axes for ln in ax.get_lines()},
                      "bars": {c.get_label(): mcolors.to_hex(c.patches[0].get_facecolor())
                               for ax in fig.axes for c in ax.containers if isinstance(c, BarContainer)},
                      "title_color": [mcolors.to_hex(ln.get_color()) for ln in fig.axes[0].get_lines()]}
        return save(fig, out_dir, name)

    monkeypatch.setattr(P, "_save", keep)
    return figs


def cut_short(d, metrics: bool = False):
    """No metrics are stored for a drive cut short; a quick run's are computed from its
    complete phases."""
    d.status = "interrupted"
    d.metrics = d.metrics if metrics else {}
    return d


RUNS = {
    "fill": lambda: [fill_drive("A 128 GB", 64, 1500, 400, 8), cut_short(fill_drive("B 256 GB", 64, 1700, 500, 8, seed=2))],
    "consistency": lambda: [cut_short(consistency_drive("B 256 GB", 60000, 6000, 0.4, seconds=300))],
    "trim": lambda: [trim_drive("A 128 GB", 32, 1500, 400, 8), cut_short(trim_drive("B 256 GB", 32, 1700, 500, 8))],
    "quick": lambda: [quick_drive("A 128 GB", 0.8), cut_short(quick_drive("B 256 GB", 1.0), metrics=True)],
}


@pytest.mark.parametrize("test", sorted(RUNS))
def test_a_drive_cut_short_is_marked_in_its_figures(test, drawn, tmp_path):
    runs = [ReportRun(1, test, RUNS[test]())]
    figures = methodology.ALL[test].figures(runs, FigureOptions())
    assert figures
    html = "".join(f.html() for f in figures)
    assert "interrupted" in html
    for f in figures:
        f.png(tmp_path)
    assert drawn
    for name, fig in drawn.items():
        said = [t for t in fig["texts"] if "B 256 GB" in t]
        if said:  # every figure naming the drive says it was cut short
            assert all("interrupted" in t for t in said), (name, said)
    assert any("interrupted" in t for fig in drawn.values() for t in fig["texts"])
    if "A 128 GB" in html:  # a complete drive is named as it is
        assert "A 128 GB (" not in html


@pytest.mark.parametrize("status, said", [("interrupted", "interrupted after 300 s, not a whole run"),
                                           ("running", "still running, 300 s so far, not a whole run")])
def test_the_consistency_title_says_how_far_the_run_got(status, said, drawn, tmp_path):
    runs = [ReportRun(1, "consistency", RUNS["consistency"](), spare_pct=0.0)]
    runs[0].drives[0].status = status
    for f in methodology.ALL["consistency"].figures(runs, FigureOptions()):
        f.png(tmp_path)
    (fig,) = drawn.values()
    assert any(t.startswith("Performance consistency: B 256 GB\n") and t.endswith(said) for t in fig["texts"]), fig["texts"]


def test_a_drive_has_one_colour_in_every_figure_of_its_report(drawn, tmp_path):
    runs = [ReportRun(1, "fill", [fill_drive("A 128 GB", 64, 1500, 400, 8), fill_drive("B 256 GB", 64, 1700, 500, 8)]),
            ReportRun(2, "working-set", [working_set_drive("B 256 GB", 80000, 32)]),
            ReportRun(3, "idle", [idle_drive("C 512 GB", (300,) * 9), idle_drive("B 256 GB", (200,) * 9)]),
            ReportRun(4, "consistency", [consistency_drive("B 256 GB", 60000, 6000, 0.4, seconds=300)])]
    build_runs_report(runs, tmp_path / "rep")
    b = drawn["fill-overlay"]["lines"]["B 256 GB"]
    assert drawn["fill-overlay"]["lines"]["A 128 GB"] != b
    assert drawn["fill-2-b-256-gb"]["title_color"][0] == b
    assert drawn["working-set"]["lines"]["B 256 GB"] == b
    assert drawn["idle"]["bars"]["B 256 GB"] == b  # second in its own figure, B's colour all the same
    assert drawn["idle"]["bars"]["C 512 GB"] not in (b, drawn["fill-overlay"]["lines"]["A 128 GB"])
    assert drawn["consistency-b-256-gb-spare0"]["title_color"][0] == b
    html = (tmp_path / "rep" / "report.html").read_text().lower()
    assert html.count(f'"marker":{{"color":"{b}"}}') == 1  # the HTML's idle bars of B
    payload = json.loads(re.search(r'id="data-consistency">(.*?)</script>', html, re.S)[1])
    assert payload["combos"]["0|0"]["color"] == b  # the switch draws B's IOPS in B's colour


def test_a_drive_s_trace_replays_keep_its_colour_and_are_told_apart():
    import numpy as np

    from ssdlab.figures.model import ReportDrive, ReportPhase
    from ssdlab.figures.style import color_drives
    from ssdlab.figures.trace import trace_latency_figure

    def replay(state):
        return ReportPhase(f"trace-{state}", kind="replay", series={"t_s": np.arange(1.0, 4.0), "lat_mean_us": np.ones(3)})

    runs = [ReportRun(1, "trace", [ReportDrive("sim:a", "A", phases=[replay("empty"), replay("full")]),
                                   ReportDrive("sim:b", "B", phases=[replay("empty"), replay("full")])])]
    color_drives(runs)
    html = trace_latency_figure(runs)
    data = json.loads(re.search(r'Plotly\.newPlot\(\s*"[^"]+",\s*(\[.*?\]),\s*\{', html, re.S)[1])
    styles = {t["name"]: (t["line"]["color"], t["line"].get("dash", "solid")) for t in data}
    assert len(set(styles.values())) == 4
    assert styles["A empty"][0] == styles["A full"][0] == runs[0].drives[0].color
    assert styles["B empty"][0] == styles["B full"][0] != styles["A empty"][0]
