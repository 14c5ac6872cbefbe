"""The HTML report in a real browser: Debian's chromium driven by Playwright (no browser
download: we point Playwright at the system binary). Opens the report offline, clicks the
consistency figure's drive and spare-area buttons and checks the plotted data changed."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from ssdlab.report import build_runs_report
from ssdlab.report.synthetic import demo_runs

pytestmark = pytest.mark.browser


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


@pytest.fixture(scope="module")
def page(report):
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
        pg.wait_for_function("() => window.ssdlabConsistency && window.Plotly")
        pg.errors, pg.remote = errors, remote
        yield pg
        browser.close()


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
    # whole run; WAF, SLC used, SLC size, free blocks; two windows; steady-state marks
    assert len(start) == 10 and len(start[0]) == 2000
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
    assert "MX100 256 GB | 25% spare" in title

    # ids survive plotly's redraw of the menus, and the active button is marked
    assert page.locator("#fig-consistency-spare-btn-1").get_attribute("data-active") == "1"
    st = _click(page, "fig-consistency-spare-btn-0", {"spareIndex": "0"})
    assert page.evaluate(TRACES_JS, "fig-consistency") == start
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
