"""The PTS report pages in a real browser (Debian's chromium through Playwright, as
test_browser.py): every test of the suite, run quick on a formula drive, drawn offline
without an error; the 3D IOPS bars in SNIA's orientation; every axis named; no legend
over a plot; the header's steady-state line."""

from __future__ import annotations

from pathlib import Path

import pytest
from fakes import FakeTarget
from ssdlab.methodology import Options
from ssdlab.methodology.pts import PTS_TESTS, PtsOptions
from ssdlab.phase import GB
from ssdlab.report import build_runs_report, from_store
from ssdlab.runner import run_test
from ssdlab.store import Store
from test_browser import BOXES_JS, CHROMIUM, _overlap, browser_page

pytestmark = [pytest.mark.browser, pytest.mark.xdist_group("browser")]
assert CHROMIUM is not None  # test_browser skips the module otherwise


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("pts-browser")
    store = Store(tmp / "r.sqlite")
    ids = [run_test(store, name, [("fake:a", FakeTarget(capacity=8 * GB))],
                    Options(own=PtsOptions.quick()), {})[0] for name in PTS_TESTS]
    runs = from_store(store, ids)
    store.close()
    return build_runs_report(runs, tmp / "rep", png=False)


@pytest.fixture(scope="module")
def page(report):
    with browser_page(report) as pg:
        yield pg


def _plots(page) -> list[str]:
    return page.evaluate("() => Array.from(document.querySelectorAll('.js-plotly-plot')).map(d => d.id)")


def test_every_pts_figure_renders_offline(page):
    ids = _plots(page)
    for test in PTS_TESTS:
        assert any(i.startswith(f"fig-{test}-") for i in ids), test
    for fid in ids:
        assert page.evaluate(f"() => !!document.getElementById('{fid}')._fullLayout"), fid
    for t in PTS_TESTS:  # a header per test, with its steady-state line
        text = page.inner_text(f"#table-{t}-{list(PTS_TESTS).index(t) + 1}-0-conditions")
        assert "purge" in text and "write cache" in text and "preconditioning" in text
    assert "NOT ACHIEVED in 2 rounds" in page.inner_text("#table-pts-iops-1-0-conditions")
    assert page.remote == [] and page.errors == []


def test_every_axis_is_named(page):
    axes = page.evaluate("""() => Array.from(document.querySelectorAll('.js-plotly-plot')).map(d => {
        const l = d._fullLayout;
        const t = a => (a && a.title && a.title.text) || '';
        return l.scene ? [d.id, t(l.scene.xaxis), t(l.scene.yaxis), t(l.scene.zaxis)]
                       : [d.id, t(l.xaxis), t(l.yaxis)]; })""")
    for fid, *titles in axes:
        assert all(titles) and "value" not in titles, (fid, titles)


def test_the_iops_3d_bars_stand_in_snia_s_orientation(page):
    fig = page.evaluate("""() => { const d = document.getElementById('fig-pts-iops-1-0-3d');
        const s = d._fullLayout.scene;
        return {types: d.data.map(t => t.type), names: d.data.map(t => t.name),
                xticks: s.xaxis.ticktext, eye: s.camera.eye}; }""")
    assert set(fig["types"]) == {"mesh3d"} and len(fig["names"]) == 7
    assert fig["names"][0] == "0/100" and fig["names"][-1] == "100/0"  # 0/100 the front row
    assert fig["xticks"] == ["4", "8", "16", "32", "64", "128", "1024"]  # small to large
    assert fig["eye"]["y"] < 0 < fig["eye"]["x"]  # looking from the first row, small blocks left


def test_no_pts_legend_covers_a_plot(page):
    for fid in _plots(page):
        if "-3d" in fid:
            continue
        b = page.evaluate(BOXES_JS, fid)
        for lg in b["legends"]:
            for plot in b["plots"]:
                assert not _overlap(lg, plot), f"{fid}: legend {lg} over plot {plot}"
