"""The HTML report in a real browser: Debian's chromium driven by Playwright (no browser
download: we point Playwright at the system binary). Opens the report offline, clicks the
consistency figure's drive and spare-area buttons and checks the plotted data changed."""

from __future__ import annotations

import contextlib
import os
import shutil
from pathlib import Path

import pytest

from ssdlab.report import build_runs_report
from ssdlab.report.synthetic import demo_runs

# one worker runs this module: its report and browser (module fixtures) start once
pytestmark = [pytest.mark.browser, pytest.mark.xdist_group("browser")]


def _chromium() -> str | None:
    for cand in (os.environ.get("SSDLAB_CHROMIUM"), shutil.which("chromium"),
                 "/usr/bin/chromium", shutil.which("chromium-browser")):
        if cand and Path(cand).exists():
            return cand
    return None


CHROMIUM = _chromium()
if CHROMIUM is None:
    pytest.skip("Debian's chromium is not installed (apt-get install -y chromium; "
                ".ci/run installs it)", allow_module_level=True)

sync_api = pytest.importorskip("playwright.sync_api")

# the y values of every trace of a figure, as plain arrays
TRACES_JS = """id => document.getElementById(id).data.map(t => Array.from(t.y || []))"""
STATE_JS = """() => Object.assign({}, document.getElementById('fig-consistency').dataset)"""


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> Path:
    return build_runs_report(demo_runs(), tmp_path_factory.mktemp("browser"), png=False)


@contextlib.contextmanager
def browser_page(report: Path, ready: str = "() => window.Plotly"):
    """The report open in chromium once `ready` holds; the page's `errors` (script errors,
    console errors) and `remote` (requests that left the machine) are collected."""
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True,
                                     args=["--no-sandbox", "--disable-gpu",
                                           "--disable-dev-shm-usage"])
        pg = browser.new_page(viewport={"width": 1280, "height": 1000})
        errors: list[str] = []
        remote: list[str] = []
        pg.on("pageerror", lambda e: errors.append(str(e)))
        pg.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        pg.on("request", lambda r: remote.append(r.url) if not r.url.startswith(
            ("file:", "data:", "blob:")) else None)
        pg.goto(report.as_uri())
        pg.wait_for_function(ready)
        pg.errors, pg.remote = errors, remote
        try:
            yield pg
        finally:
            browser.close()


@pytest.fixture(scope="module")
def page(report):
    with browser_page(report, "() => window.ssdlabConsistency && window.Plotly") as pg:
        yield pg


def _click(page, button_id: str, expect: dict) -> dict:
    page.click(f"#{button_id}")
    cond = " && ".join(f"d.{k} === {v!r}" for k, v in expect.items())
    page.wait_for_function(
        f"() => {{ const d = document.getElementById('fig-consistency').dataset; return {cond}; }}")
    return page.evaluate(STATE_JS)


def test_every_figure_renders_offline(page):
    ids = page.evaluate("() => Array.from(document.querySelectorAll('.js-plotly-plot'))"
                        ".map(d => d.id)")
    assert {"fig-fill-overlay", "fig-fill-0", "fig-fill-1", "fig-consistency",
            "fig-working-set", "fig-quick-mbps", "fig-quick-score"} <= set(ids)
    for fid in ids:  # drawn: plotly built its full layout and an SVG with the traces
        assert page.evaluate(f"() => !!document.getElementById('{fid}')._fullLayout")
        assert page.locator(f"#{fid} .main-svg").count() >= 1
    fill = page.evaluate(TRACES_JS, "fig-fill-0")
    assert len(fill[0]) == 256 and max(fill[0]) > 1500  # the cached peak is plotted
    assert page.remote == [] and page.errors == []


def test_switch_buttons_have_stable_ids(page):
    ids = page.evaluate("() => Array.from(document.querySelectorAll("
                        "'#fig-consistency g.updatemenu-button'))"
                        ".map(b => [b.id, b.dataset.value])")
    assert ids == [["fig-consistency-drive-btn-0", "MX100 256 GB"],
                   ["fig-consistency-drive-btn-1", "M550 256 GB"],
                   ["fig-consistency-spare-btn-0", "no extra spare"],
                   ["fig-consistency-spare-btn-1", "25% spare"]]


def test_drive_and_spare_buttons_change_the_plotted_data(page):
    names = page.evaluate(
        "() => JSON.parse(document.getElementById('data-consistency').textContent).traces")
    win = names.index("window-linear")
    start = page.evaluate(TRACES_JS, "fig-consistency")
    assert page.evaluate(STATE_JS)["drive"] == "MX100 256 GB"
    # whole run; WAF, SLC used, SLC allowance, free blocks; two windows; steady-state
    # marks; 0-IOPS seconds of the two log panels
    assert len(start) == 12 and len(start[0]) == 2000
    assert len(start[win]) == 601  # t = 1400 .. 2000 s

    st = _click(page, "fig-consistency-drive-btn-1", {"driveIndex": "1"})
    assert st["drive"] == "M550 256 GB" and st["present"] == "1"
    m550 = page.evaluate(TRACES_JS, "fig-consistency")
    assert m550[0] != start[0] and m550[win] != start[win] and m550[1] != start[1]

    # M550 was never run with spare area: the views empty rather than show stale data
    st = _click(page, "fig-consistency-spare-btn-1", {"spareIndex": "1"})
    assert st["spare"] == "25% spare" and st["present"] == "0"
    assert all(len(y) == 0 for y in page.evaluate(TRACES_JS, "fig-consistency"))

    st = _click(page, "fig-consistency-drive-btn-0", {"driveIndex": "0"})
    assert (st["drive"], st["spare"], st["present"]) == ("MX100 256 GB", "25% spare", "1")
    spare25 = page.evaluate(TRACES_JS, "fig-consistency")
    # more spare area: a higher steady band than the same drive without it
    band = lambda ys: sum(ys[win]) / len(ys[win])  # noqa: E731
    assert band(spare25) > 2 * band(start)
    title = page.evaluate("() => document.getElementById('fig-consistency').layout.title.text")
    assert "MX100 256 GB" in title and "25% spare" in title

    # ids survive plotly's redraw of the menus, and the active button is marked
    assert page.locator("#fig-consistency-spare-btn-1").get_attribute("data-active") == "1"
    st = _click(page, "fig-consistency-spare-btn-0", {"spareIndex": "0"})
    assert page.evaluate(TRACES_JS, "fig-consistency") == start
    assert page.errors == []


def test_the_drive_switch_draws_each_drive_in_its_colour(page):
    """The drive's colour of the report's other figures (fill, working set, bars), on
    the IOPS lines of the whole run and both windows."""
    payload = page.evaluate("() => JSON.parse(document.getElementById('data-consistency').textContent)")
    colors = "() => document.getElementById('fig-consistency').data.map(t => t.line && t.line.color)"
    mx100, m550 = payload["combos"]["0|0"]["color"], payload["combos"]["1|0"]["color"]
    assert mx100 != m550
    _click(page, "fig-consistency-drive-btn-1", {"driveIndex": "1"})
    drawn = page.evaluate(colors)
    assert [drawn[i] for i in payload["iops_traces"]] == [m550] * 3
    _click(page, "fig-consistency-drive-btn-0", {"driveIndex": "0"})
    drawn = page.evaluate(colors)
    assert [drawn[i] for i in payload["iops_traces"]] == [mx100] * 3
    assert page.errors == []


def test_fill_y_axis_top_is_settable_for_all_drives(page):
    ranges = "() => ['fig-fill-overlay', 'fig-fill-0', 'fig-fill-1'].map(" \
             "id => document.getElementById(id).layout.yaxis.range.map(Number))"
    assert page.evaluate(ranges) == [[0, 2500]] * 3
    page.fill("#fill-ymax", "4000")
    page.dispatch_event("#fill-ymax", "change")
    page.wait_for_function(
        "() => document.getElementById('fig-fill-1').layout.yaxis.range[1] == 4000")
    assert page.evaluate(ranges) == [[0, 4000]] * 3


# ---- the charts a reader must be able to trust -------------------------------------------
BOXES_JS = """id => {
  const gd = document.getElementById(id);
  const box = e => { const b = e.getBoundingClientRect(); return [b.left, b.top, b.right, b.bottom]; };
  return {plots: Array.from(gd.querySelectorAll('.nsewdrag')).map(box),
          legends: Array.from(gd.querySelectorAll('g.legend')).map(box),
          titles: Array.from(gd.querySelectorAll('.gtitle, .annotation-text')).map(box),
          svg: box(gd.querySelector('.main-svg'))};
}"""


def _overlap(a, b) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def test_no_legend_covers_a_plot_and_no_title_is_clipped(page):
    ids = page.evaluate("() => Array.from(document.querySelectorAll('.js-plotly-plot'))"
                        ".map(d => d.id)")
    legends = 0
    for fid in ids:
        b = page.evaluate(BOXES_JS, fid)
        assert b["plots"], fid
        for lg in b["legends"]:
            legends += 1
            for plot in b["plots"]:
                assert not _overlap(lg, plot), f"{fid}: legend {lg} over plot {plot}"
            for t in b["titles"]:
                assert not _overlap(lg, t), f"{fid}: legend {lg} over title {t}"
        left, _, right, _ = b["svg"]
        for t in b["titles"]:  # titles and subplot titles lie inside the figure
            assert left - 1 <= t[0] and t[2] <= right + 1, f"{fid}: title {t} cut at {b['svg']}"
    assert legends >= 5  # fill overlay, working set, trim, quick and idle have one


def _layout(page, fid="fig-consistency"):
    return page.evaluate(f"() => {{ const l = document.getElementById('{fid}')._fullLayout;"
                         " const out = {}; Object.keys(l).filter(k => /^yaxis\\d*$/.test(k))"
                         ".forEach(k => out[k] = {type: l[k].type, range: l[k].range,"
                         " tickvals: l[k].tickvals, ticktext: l[k].ticktext});"
                         " out.titles = (l.annotations || []).map(a => a.text); return out; }")


def test_consistency_log_panels_show_their_data_and_zero_iops_seconds(page):
    import math

    _click(page, "fig-consistency-spare-btn-0", {"spareIndex": "0"})
    st = _click(page, "fig-consistency-drive-btn-1", {"driveIndex": "1"})
    assert st["drive"] == "M550 256 GB"  # the demo drive with stalls and one lost sample
    names = page.evaluate(
        "() => JSON.parse(document.getElementById('data-consistency').textContent).traces")
    ys = page.evaluate(TRACES_JS, "fig-consistency")
    lay = _layout(page)
    logs = [k for k, v in lay.items() if k.startswith("yaxis") and v["type"] == "log"]
    assert logs == ["yaxis", "yaxis5"]  # whole run and the window from 1400 s
    for axis, trace, zeros in (("yaxis", "whole", "zeros-whole"), ("yaxis5", "window-log", "zeros-log")):
        ax = lay[axis]
        lo, hi = (10 ** r for r in ax["range"])
        data = [y for y in ys[names.index(trace)] if y is not None]
        assert lo <= min(data) and max(data) <= hi  # every second lies inside the range
        assert hi / lo >= 10  # at least a decade: a log view, not a stretched band
        assert ax["ticktext"][0] == "0" and len(ax["ticktext"]) >= 4  # labelled, 0 included
        floor = ax["tickvals"][0]
        assert lo < floor < min(y for y in data if y > floor)  # the 0 line sits below the data
        assert ys[names.index(zeros)] == [floor] * len(ys[names.index(zeros)])
    assert len(ys[names.index("zeros-whole")]) == 4 and len(ys[names.index("zeros-log")]) == 3
    # the lost sample (t = 1800 s) is a gap, not 0, in every view
    for trace, zero in (("whole", lay["yaxis"]["tickvals"][0]), ("window-log", lay["yaxis5"]["tickvals"][0]),
                        ("window-linear", 0)):
        y = ys[names.index(trace)]
        t = page.evaluate(f"() => document.getElementById('fig-consistency').data"
                          f"[{names.index(trace)}].x")
        assert y[t.index(1800)] is None  # a gap
        assert y[t.index(1500)] == pytest.approx(zero, rel=1e-4)  # a stall: 0, on the floor line
    titles = lay["titles"]
    assert any(x.startswith("From t = 1400 s, log scale") and "0-IOPS seconds" in x
               and "gaps: missing samples" in x for x in titles)
    assert any("allowance for new SLC blocks" in x for x in titles)
    # the other drive never stalled: no 0 on its axes, and its range still holds its data
    _click(page, "fig-consistency-drive-btn-0", {"driveIndex": "0"})
    lay = _layout(page)
    assert "0" not in lay["yaxis5"]["ticktext"] and not math.isnan(lay["yaxis5"]["range"][0])
    win = [y for y in page.evaluate(TRACES_JS, "fig-consistency")[names.index("window-log")]
           if y is not None]
    lo, hi = (10 ** r for r in lay["yaxis5"]["range"])
    assert lo <= min(win) and max(win) <= hi


def test_quick_bars_are_the_tools_figures_with_every_run(page):
    data = page.evaluate("() => document.getElementById('fig-quick-mbps').data.map(t => "
                         "({type: t.type, name: t.name, x: Array.from(t.x), y: Array.from(t.y), "
                         "minus: t.error_x && t.error_x.arrayminus, plus: t.error_x && t.error_x.array}))")
    bars = [d for d in data if d["type"] == "bar"]
    dots = [d for d in data if d["type"] == "scatter"]
    assert len(bars) == len(dots) == 2
    for bar, dot in zip(bars, dots):
        for i, metric in enumerate(bar["y"]):
            runs = [x for x, y in zip(dot["x"], dot["y"]) if y == metric]
            assert len(runs) == 3  # each run is a dot
            shown = max(runs) if metric.startswith("CDM") else sum(runs) / len(runs)
            assert bar["x"][i] == pytest.approx(shown, rel=1e-3)
            # whiskers: from the slowest to the fastest run
            assert bar["x"][i] - bar["minus"][i] == pytest.approx(min(runs), rel=1e-3)
            assert bar["x"][i] + bar["plus"][i] == pytest.approx(max(runs), rel=1e-3)
    note = page.inner_text("#note-quick")
    assert "best run" in note and "each run" in note
    assert "freshly written" in page.inner_text("#note-idle")
