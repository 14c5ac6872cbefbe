"""The sweep report's figures compare like with like: each parameter's panel on one y scale
(the panels set side by side read as which parameter moves the metric more), and a main
effect over the points that completed at every value of its parameter (a point with no
result would otherwise leave one value's mean over other settings than the next's)."""

from __future__ import annotations

import math

import pytest

from ssdlab.report import sweep_data as S


def _table(missing: set[tuple[int, int]] = frozenset()) -> S.SweepTable:
    rows = [{"run_id": i, "status": "failed" if (a, b) in missing else "complete", "a": a, "b": b,
             **({} if (a, b) in missing else {"m": 1000 * b + 10 * a})}
            for i, (a, b) in enumerate([(1, 1), (1, 2), (2, 1), (2, 2)])]
    return S.SweepTable("sw-x", "consistency", {"a": [1, 2], "b": [1, 2]}, rows, ["m"])


def test_png_panels_share_one_y_scale():
    from ssdlab.figures.png import plt
    from ssdlab.report.sweep import png_figure

    t = _table()
    fig = png_figure(t, "m", S.sensitivity(t))
    try:
        a, b = fig.axes[:2]
        assert a.get_ylim() == b.get_ylim()
        lo, hi = a.get_ylim()
        assert lo <= 1015 and hi >= 2015  # both lines inside it
    finally:
        plt.close(fig)


def test_main_effect_leaves_out_what_a_missing_point_would_unbalance():
    t = _table(missing={(2, 2)})
    # a: only b=1 completed at both a values: 1010 against 1020, not 1510 against 1020
    assert S.main_effect(t, "m", "a") == [1010.0, 1020.0]
    assert S.main_effect(t, "m", "b") == [1010.0, 2010.0]
    s = S.sensitivity(t)[0]["swing_pct"]
    assert s["a"] == pytest.approx(100 * 10 / ((1010 + 2010 + 1020) / 3))


def test_a_full_grid_keeps_its_plain_means():
    t = _table()
    assert S.main_effect(t, "m", "a") == [1510.0, 1520.0]
    assert S.main_effect(t, "m", "b") == [1015.0, 2015.0]


def test_no_balanced_slice_leaves_the_effect_empty_and_the_page_says_why():
    from ssdlab.report.sweep import render

    t = _table(missing={(2, 2), (1, 1)})
    assert all(math.isnan(v) for v in S.main_effect(t, "m", "a"))
    html = render(t)
    assert "2 of 4 points have no result" in html


def test_png_heat_map_numbers_are_legible_and_spare_is_in_percent():
    """A number on a light (yellow) cell is dark, on a dark (purple) cell light; the spare
    area's axis says it is in %."""
    from matplotlib.colors import to_rgb

    from ssdlab.figures.png import plt
    from ssdlab.report.sweep import heat_figure, png_figure

    rows = [{"run_id": i, "status": "complete", "a": a, "spare": s, "m": 1000 * s + 10 * a}
            for i, (a, s) in enumerate([(1, 0), (1, 25), (2, 0), (2, 25)])]
    t = S.SweepTable("sw-x", "consistency", {"a": [1, 2], "spare": [0.0, 25.0]}, rows, ["m"])
    fig = png_figure(t, "m", S.sensitivity(t))
    try:
        heat = fig.axes[2]
        ink = {txt.get_text(): to_rgb(txt.get_color()) for txt in heat.texts}
        assert sum(ink["25,020"]) < 1.0  # the largest value: yellow cell, dark text
        assert sum(ink["10"]) > 2.0  # the smallest: purple cell, light text
        labels = [ax.get_xlabel() for ax in fig.axes] + [ax.get_ylabel() for ax in fig.axes]
        assert "spare (%)" in labels and "spare" not in labels
    finally:
        plt.close(fig)
    assert heat_figure(t, "m", "a", "spare").layout.yaxis.title.text == "spare (%)"


def test_a_png_says_its_points_are_means_and_names_the_metric_s_unit():
    """Published on its own, the PNG says what the page's title does: with two parameters
    swept, each panel's point is a mean over the other's values."""
    from ssdlab.figures.png import plt
    from ssdlab.report.sweep import lines_figure, png_figure

    rows = [{"run_id": i, "status": "complete", "a": a, "b": b, "avg_mbps": 100.0 * b + a}
            for i, (a, b) in enumerate([(1, 1), (1, 2), (2, 1), (2, 2)])]
    t = S.SweepTable("sw-x", "fill", {"a": [1, 2], "b": [1, 2]}, rows, ["avg_mbps"])
    fig = png_figure(t, "avg_mbps", S.sensitivity(t))
    try:
        assert fig._suptitle.get_text() == "avg_mbps (mean over the other parameters)"
        assert fig.axes[0].get_ylabel() == "Average (MB/s)"
    finally:
        plt.close(fig)
    assert lines_figure(t, "avg_mbps").layout.yaxis.title.text == "Average (MB/s)"


def test_a_sweep_report_removes_the_earlier_reports_figures_and_nothing_else(tmp_path, monkeypatch):
    """A second sweep's report into the same directory: the first one's PNGs of metrics this
    one does not have would look like its figures; the user's own files stay."""
    from ssdlab.report.sweep import build_sweep_report

    first, second = _table(), _table()
    second.metrics = ["k"]
    for r in second.rows:
        r["k"] = r.pop("m", 0)
    tables = iter([first, second])
    monkeypatch.setattr(S, "from_store", lambda store, sweep_id: next(tables))
    out = tmp_path / "rep"
    build_sweep_report(None, "sw-x", out)
    assert (out / "sweep-m.png").exists()
    (out / "mine.png").write_bytes(b"mine")
    build_sweep_report(None, "sw-y", out)
    names = {p.name for p in out.iterdir()}
    assert "sweep-k.png" in names and "sweep-m.png" not in names and "mine.png" in names
