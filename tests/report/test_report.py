"""Reports built from synthetic runs (ssdlab.report.synthetic): files, self-containment,
figures present or omitted, PNGs valid, the data behind them right."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

from ssdlab.report import ReportDrive, ReportPhase, ReportRun, build_runs_report
from ssdlab.figures import bars, consistency, fill, quick, trim, working_set
from ssdlab.figures import data as D
from ssdlab.methodology import idle as idle_test
from ssdlab.report.compare import compare_tables
from ssdlab.report.page import render
from ssdlab.report.synthetic import consistency_drive, demo_runs, fill_drive, quick_drive

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


# session-scoped and its tests in one xdist group: one worker builds it, once
@pytest.fixture(scope="session")
def full_report(tmp_path_factory) -> tuple[Path, str]:
    out = tmp_path_factory.mktemp("report")
    path = build_runs_report(demo_runs(), out)
    return path, path.read_text(encoding="utf-8")



def of(runs, test):
    """The runs of one test: what the report hands that test's figures."""
    return [r for r in runs if r.test == test]

def _figure_json(html: str, div_id: str) -> dict:
    """The figure plotly.py embedded for div_id: Plotly.newPlot("id", data, layout, config)."""
    m = re.search(r'Plotly\.newPlot\(\s*"' + re.escape(div_id) + r'",\s*(\[.*?\]),\s*(\{.*?\}),'
                  r'\s*\{"displaylogo"', html, re.S)
    assert m, f"no figure {div_id}"
    return {"data": json.loads(m.group(1)), "layout": json.loads(m.group(2))}


@pytest.mark.xdist_group("full_report")
def test_files_exist(full_report):
    path, _ = full_report
    assert path.name == "report.html" and path.stat().st_size > 1_000_000  # plotly.js inside
    names = {p.name for p in path.parent.glob("*.png")}
    assert {"fill-overlay.png", "fill-1-xg6-256-gb.png", "fill-2-xg6-1024-gb.png",
            "consistency-mx100-256-gb-spare0.png", "consistency-mx100-256-gb-spare25.png",
            "consistency-m550-256-gb-spare0.png", "working-set.png", "quick-mbps.png",
            "quick-score.png", "trim.png", "idle.png"} <= names


@pytest.mark.xdist_group("full_report")
def test_a_report_drawn_on_worker_processes_is_the_same_report(full_report, tmp_path):
    """A review draws the page and each test's PNGs on its worker processes: the same files,
    byte for byte, as one process drawing them one after another."""
    from ssdlab.executor import PoolExecutor

    path, _ = full_report
    with PoolExecutor(2) as ex:
        build_runs_report(demo_runs(), tmp_path, executor=ex)
    names = sorted(p.name for p in path.parent.iterdir())
    assert len(names) > 10 and names == sorted(p.name for p in tmp_path.iterdir())
    for n in names:
        assert (path.parent / n).read_bytes() == (tmp_path / n).read_bytes(), n


@pytest.mark.xdist_group("full_report")
def test_every_figure_carries_the_reports_template(full_report):
    """The template goes into each figure as JSON plotly made once: the whole white
    template, as plotly gives it to a figure that names it."""
    import plotly.graph_objects as go

    _, html = full_report
    white = go.Figure(layout=dict(template="plotly_white")).to_dict()["layout"]["template"]
    ids = re.findall(r'Plotly\.newPlot\(\s*"([^"]+)"', html)
    assert len(ids) >= 9
    for div_id in ids:
        assert _figure_json(html, div_id)["layout"]["template"] == white, div_id


@pytest.mark.xdist_group("full_report")
def test_html_is_self_contained(full_report):
    _, html = full_report
    assert not re.search(r"<script[^>]*\bsrc\s*=", html, re.I)
    assert not re.search(r"<link[^>]*\bhref\s*=\s*[\"']https?:", html, re.I)
    # plotly.js names a CDN only as the default for geo maps' topojson, which no figure uses
    assert html.count("cdn.plot.ly") == html.count('topojsonURL:{valType:"string",noBlank:!0,'
                                                   'dflt:"https://cdn.plot.ly/un/"}')
    assert html.count("<script>") >= 2  # plotly.js itself, and the switch
    assert "Plotly.newPlot" in html


@pytest.mark.xdist_group("full_report")
def test_html_has_every_figure(full_report):
    _, html = full_report
    for div in ("fig-fill-overlay", "fig-fill-0", "fig-fill-1", "fig-consistency",
                "fig-working-set", "fig-quick-mbps", "fig-quick-score", "fig-trim", "fig-idle",
                "table-compare-fill", "table-compare-consistency-no-extra-spare",
                "table-compare-consistency-25-spare", "data-consistency", "runs"):
        assert f'id="{div}"' in html, div


@pytest.mark.xdist_group("full_report")
def test_fill_shares_one_y_scale_and_has_counters(full_report):
    _, html = full_report
    a, b = _figure_json(html, "fig-fill-0"), _figure_json(html, "fig-fill-1")
    assert a["layout"]["yaxis"]["range"] == b["layout"]["yaxis"]["range"] == [0, 2500]
    # beneath the curve: WAF, SLC cache used and size (GB), free blocks
    assert [t["name"] for t in a["data"][1:]] == ["waf", "slc_used_gb", "slc_allowance_gb",
                                                  "free_blocks"]
    used, size = (np.array(a["data"][i]["y"], dtype=float) for i in (2, 3))
    assert 0 < used[0] < size[0] == 20 and used.max() == pytest.approx(20.0)
    # counters sit on the GB-written axis, like the curve
    assert max(a["data"][1]["x"]) == pytest.approx(256, rel=0.02)


def test_user_y_max(tmp_path):
    runs = [demo_runs()[0]]
    path = build_runs_report(runs, tmp_path, y_max=3000, png=False)
    fig = _figure_json(path.read_text(encoding="utf-8"), "fig-fill-0")
    assert fig["layout"]["yaxis"]["range"] == [0, 3000]
    assert fill.fill_y_max(fill.fill_curves(of(runs, "fill")), None) == 2500


@pytest.mark.xdist_group("full_report")
def test_consistency_switch_payload(full_report):
    _, html = full_report
    blob = re.search(r'id="data-consistency">(.*?)</script>', html, re.S).group(1)
    p = json.loads(blob)
    assert p["drives"] == ["MX100 256 GB", "M550 256 GB"]
    assert p["spares"] == ["no extra spare", "25% spare"]
    assert p["combos"]["1|1"]["present"] is False  # M550 was not run with spare area
    assert p["combos"]["0|0"]["traces"][0]["y"] != p["combos"]["0|1"]["traces"][0]["y"]
    fig = _figure_json(html, "fig-consistency")
    assert [m["buttons"][0]["args"][0]["menu"] for m in fig["layout"]["updatemenus"]] == [
        "drive", "spare"]
    assert fig["layout"]["yaxis"]["type"] == "log"
    names = p["traces"]
    assert names == ["whole", "waf", "slc_used_gb", "slc_allowance_gb", "free_blocks", "window-log",
                     "window-linear", "steady-start", "steady-mean-log", "steady-mean-linear",
                     "zeros-whole", "zeros-log"]
    assert len(fig["data"]) == len(names)
    # the window views start at t = 1400 s
    for view in ("window-log", "window-linear"):
        assert min(fig["data"][names.index(view)]["x"]) == 1400
    # the test's figures are marked: steady-state start (vertical) and mean (horizontal)
    start = fig["data"][names.index("steady-start")]
    assert start["x"] == [180.0, 180.0]
    mean = fig["data"][names.index("steady-mean-linear")]
    assert mean["x"] == [1400, 2000] and mean["y"][0] == pytest.approx(6615, rel=0.01)


def test_burst_then_band_shape():
    combo = consistency.consistency_combos([demo_runs()[1]])[0]
    burst, band = combo.iops[:50].mean(), combo.iops[combo.t >= 1400].mean()
    assert burst > 5 * band
    assert combo.counters is not None and combo.counters.lines["waf"][-1] > 2


@pytest.mark.xdist_group("full_report")
def test_png_files_are_valid_images(full_report):
    import matplotlib.image as mpimg

    path, _ = full_report
    for p in path.parent.glob("*.png"):
        assert p.read_bytes()[:8] == PNG_MAGIC, p
        img = mpimg.imread(p)
        assert img.shape[0] > 200 and img.shape[1] > 1000, p
        assert img[..., :3].std() > 0.05, f"{p} looks blank"


def test_missing_tests_and_series_omit_figures(tmp_path):
    # a real drive: per-GB curve only, no simulator counters, no other test
    d = fill_drive("Real 256", 64, 900, 300, 8)
    d.phases[-1].series = {"t_s": d.phases[-1].series["t_s"]}
    d.kind = "block"
    path = build_runs_report([ReportRun(7, "fill", [d])], tmp_path)
    html = path.read_text(encoding="utf-8")
    assert 'id="fig-fill-0"' in html
    for absent in ("fig-fill-overlay", "fig-consistency", "fig-working-set", "fig-quick",
                   "data-consistency"):
        assert f'id="{absent}' not in html
    assert len(_figure_json(html, "fig-fill-0")["data"]) == 1
    assert sorted(p.name for p in tmp_path.glob("*.png")) == ["fill-1-real-256.png"]


def test_empty_and_interrupted_runs_do_not_crash(tmp_path):
    runs = [ReportRun(1, "fill", [ReportDrive("sim:x", "X", {}, [], status="interrupted")]),
            ReportRun(2, "consistency", [ReportDrive("sim:x", "X", {"steady_iops": None})]),
            ReportRun(3, "trim", [ReportDrive("sim:x", "X", {"clean_mbps": 300.0})])]
    html = build_runs_report(runs, tmp_path).read_text(encoding="utf-8")
    assert 'id="table-compare-trim"' in html and "fig-fill-0" not in html


def test_comparison_percent_change():
    runs = [ReportRun(1, "fill", [ReportDrive("a", "A", {"avg_mbps": 400.0, "fill_seconds": 600}),
                                  ReportDrive("b", "B", {"avg_mbps": 500.0,
                                                         "fill_seconds": 450})])]
    (t,) = compare_tables(runs)
    rows = {name: (vals, pct) for name, vals, pct in t.rows}
    assert rows["avg_mbps"] == ([400.0, 500.0], [0.0, 25.0])
    assert rows["fill_seconds"][1] == [0.0, -25.0]
    html = render(runs)
    # faster and shorter are both better: green, whatever the sign
    assert html.count('class="num better"') == 2


def test_comparison_keeps_steady_stdev_but_not_repeat_spreads():
    runs = [ReportRun(1, "consistency", [ReportDrive("a", "A", {
        "steady_iops": 1.0, "steady_stdev": 0.1, "x_mbps": 5.0, "x_mbps_stdev": 0.2})])]
    (t,) = compare_tables(runs)
    assert [r[0] for r in t.rows] == ["steady_iops", "steady_stdev", "x_mbps"]


def test_comparison_warns_on_mixed_testbeds():
    a = ReportRun(1, "fill", [ReportDrive("a", "A", {"avg_mbps": 1.0})], {"testbed": "lab1"})
    b = ReportRun(2, "fill", [ReportDrive("b", "B", {"avg_mbps": 2.0})], {"testbed": "lab2"})
    (t,) = compare_tables([a, b])
    assert t.labels == ["A", "B"] and any("testbed" in w for w in t.warnings)


def test_quick_bars_use_repeats_and_skip_stdev():
    d = quick_drive("Q", 1.0)
    d.metrics["asssd_score_total_stdev"] = 12.0
    (mbps, score) = quick.quick_groups([ReportRun(1, "quick", [d])])
    assert mbps.unit == "MB/s" and score.unit == "points"
    assert "asssd_score_total_stdev" not in score.metrics
    s = score.series[0]
    assert s.lo[0] < s.value[0] < s.hi[0] and len(s.points[0]) == 3


def test_working_set_from_string_keys():
    d = ReportDrive("sim:x", "X", {"iops_by_gb": {"1": 10.0, "16": 8.0, "2": 9.0, "255.8": 5.0}})
    (ws,) = working_set.working_sets([ReportRun(1, "working-set", [d])])
    assert ws.gb.tolist() == [1, 2, 16, 255.8] and ws.iops.tolist() == [10, 9, 8, 5]
    assert ws.lat_p99_us is None


def test_shortened_consistency_window():
    d = consistency_drive("S", 50000, 5000, 0.3, seconds=300)
    (c,) = consistency.consistency_combos([ReportRun(1, "consistency", [d])])
    assert c.window_start == 210


def test_thin_keeps_short_series_and_means_long_ones():
    x = np.arange(10.0)
    assert D.thin(x, x)[1] is x
    big = np.arange(10_000.0)
    waf = np.full(10_000, np.nan)
    waf[::2] = 2.0
    tx, ty = D.thin(big, waf, max_points=100)
    assert len(tx) == 100 and np.allclose(ty, 2.0)  # NaN seconds do not drag the mean down


def test_from_phase_result():
    from ssdlab.phase import Phase
    from ssdlab.phase import PhaseResult

    r = PhaseResult(Phase(kind="io", name="fill", stop_bytes=4096), {"t_s": [1, 2]},
                    {"gb": [1], "mbps": [500]}, {"p99_us": 3.0}, {"mbps": 500.0})
    p = ReportPhase.from_result("", r)
    assert p.name == "fill" and p.kind == "io" and p.series["t_s"].dtype == float


def test_from_store_round_trip(tmp_path):
    store_mod = pytest.importorskip("ssdlab.store")
    from ssdlab.phase import Phase
    from ssdlab.report import build_report, from_store
    from ssdlab.phase import Identity, PhaseResult

    st = store_mod.Store(tmp_path / "r.sqlite")
    rids = []
    for spare, seed in ((0.0, 1), (25.0, 2)):
        rid = st.create_run("consistency", {"spare": spare}, testbed="ci")
        rd = st.add_drive(rid, 0, "sim:tlc-256", Identity("sim", "Generic TLC 256 GB", 256 * 10**9))
        src = consistency_drive("x", 60000, 6000 + 10000 * spare / 25, 0.4, seed=seed)
        for seq, p in enumerate(src.phases):
            kind = p.kind
            ph = Phase(kind=kind, name=p.name, **({"stop_seconds": 1} if kind == "io" else {}))
            st.add_phase(rd, seq, PhaseResult(ph, p.series, p.segments, {}, p.totals))
        st.set_metrics(rd, src.metrics)
        st.finish_drive(rd, "complete")
        st.finish_run(rid, "complete")
        rids.append(rid)
    runs = from_store(st, rids)
    assert [r.spare_pct for r in runs] == [0.0, 25.0]
    assert runs[0].drives[0].label == "Generic TLC 256 GB"
    assert [p.name for p in runs[0].drives[0].phases] == ["purge", "seq_fill", "rand_write"]
    assert runs[0].tags["testbed"] == "ci"
    path = build_report(st, rids, tmp_path / "out")
    html = path.read_text(encoding="utf-8")
    assert 'id="fig-consistency"' in html and "25% spare" in html
    assert len(list((tmp_path / "out").glob("consistency-*.png"))) == 2


def test_partial_last_interval_is_dropped():
    # a phase stopping 10 ms into its last second reports a meaningless last rate
    t = np.array([1.0, 2.0, 3.0, 3.01])
    ph = ReportPhase("random", series={"t_s": t, "iops": np.array([5e4, 5e4, 5e4, 300.0]),
                                       "waf": np.array([2.0, 2.0, 2.0, 9.0])})
    (c,) = consistency.consistency_combos([ReportRun(1, "consistency", [ReportDrive("d", "D", {}, [ph])])])
    assert c.iops.tolist() == [5e4] * 3 and c.counters.lines["waf"].tolist() == [2.0] * 3


def test_trim_and_idle_figures():
    runs = demo_runs()
    (t,) = trim.trim_curves(of(runs, "trim"))
    assert t.after_mbps.mean() < t.clean_mbps.mean() and len(t.after_gb) == 256
    (idle,) = bars.scalar_bars(of(runs, "idle"), **idle_test.BARS)
    assert idle.test == "idle" and idle.fig_key == "idle"
    assert [s.label for s in idle.series] == ["Intel 510 250 GB", "Crucial m4 256 GB"]
    # the two read baselines say what they read (the demo's HD Tach figures have no second)
    assert idle.labels[:3] == ["clean read (unwritten LBAs)", "full read", "idle read"]
    assert "never written" in idle.note and "freshly written" in idle.note
    m4 = idle.series[1]
    assert m4.value[idle.metrics.index("full_read_mbps")] == 177.1


class _FakeStore:
    """The two reading calls of ssdlab.store.Store that from_store uses."""

    def __init__(self, runs: dict[int, dict]):
        self._runs = runs

    def run(self, run_id: int) -> dict:
        return self._runs[run_id]

    def phases(self, run_drive_id: int) -> list[dict]:
        return []


def test_from_store_labels_overrides_and_duplicates():
    from ssdlab.report import from_store

    def run(rid, args, specs):
        return {"id": rid, "test": "fill", "args": args, "drives": [
            {"id": 10 * rid + i, "spec": sp, "identity": {"model": "TLC 256", "kind": "sim"},
             "status": "complete", "metrics": {}} for i, sp in enumerate(specs)]}

    st = _FakeStore({1: run(1, {}, ["sim:tlc-256"]),
                     2: run(2, {"set": ["nand.channels=4"]}, ["sim:tlc-256"]),
                     3: run(3, {}, ["sim:tlc-256", "sim:tlc-256"]),
                     4: run(4, {}, ["profile.toml"])})
    labels = [[d.label for d in r.drives] for r in from_store(st, [1, 2, 3, 4])]
    assert labels[1] == ["TLC 256 [nand.channels=4]"]
    assert labels[3] == ["TLC 256 [profile.toml]"]  # same model name, another profile
    flat = [x for r in labels for x in r]
    assert len(set(flat)) == len(flat), flat


def _real_temp_runs() -> list[ReportRun]:
    """A real drive's fill and consistency runs with temperature, beside a simulated one."""
    fill = fill_drive("Real 64", 64, 900, 300, 8, drive="/dev/sdx")
    s = fill.phases[-1].series
    t = s["t_s"]
    temp = 40.0 + 25.0 * t / t[-1]  # heats up as it writes
    fill.phases[-1].series = {"t_s": t, "mbps": s["mbps"], "temp_c": temp}
    fill.kind = "block"
    cons = consistency_drive("Real 64", 40000, 9000, 0.2, seconds=300, drive="/dev/sdx")
    rnd = cons.phases[-1]
    rnd.series = {"t_s": rnd.series["t_s"], "iops": rnd.series["iops"],
                  "temp_c": np.full(300, 55.0)}
    cons.kind = "block"
    sim = consistency_drive("Sim 256", 60000, 12000, 0.1, seconds=300)
    return [ReportRun(1, "fill", [fill]), ReportRun(2, "consistency", [cons, sim])]


def test_drive_temperature_is_plotted_under_the_series(tmp_path, monkeypatch):
    from ssdlab.figures import png

    runs = _real_temp_runs()
    (curve,) = fill.fill_curves(of(runs, "fill"))
    assert [p.key for p in curve.counters.panels()] == ["temp"]
    assert list(curve.counters.lines) == ["temp_c"]
    # on the GB-written axis like the curve: ~0.9 GB after the first second at 900 MB/s
    assert curve.counters.x[0] == pytest.approx(0.9, abs=0.1)
    assert curve.counters.x[-1] == pytest.approx(64, rel=0.02)

    drawn = {}
    real_save = png._save

    def save(fig, out_dir, name):
        drawn[name] = [(a.get_ylabel(), [ln.get_ydata() for ln in a.get_lines()], a.get_ylim())
                       for a in fig.axes]
        return real_save(fig, out_dir, name)

    monkeypatch.setattr(png, "_save", save)
    path = build_runs_report(runs, tmp_path)
    html = path.read_text(encoding="utf-8")

    # HTML: the fill figure has a temperature panel beneath the curve, not forced to 0
    fig = _figure_json(html, "fig-fill-0")
    assert [t["name"] for t in fig["data"]] == ["Real 64", "temp_c"]
    y = np.array(fig["data"][1]["y"], dtype=float)
    assert y.min() == pytest.approx(40, abs=0.5) and y.max() == pytest.approx(65, abs=0.5)
    assert fig["layout"]["yaxis2"]["title"]["text"] == "°C"
    assert fig["layout"]["yaxis2"]["rangemode"] == "normal"
    assert "Drive temperature" in json.dumps(fig["layout"]["annotations"])
    # consistency: a temperature row for the real drive, empty for the simulated one
    m = re.search(r'<script type="application/json" id="data-consistency">(.*?)</script>', html, re.S)
    payload = json.loads(m.group(1))
    i = payload["traces"].index("temp_c")
    assert {"waf", "free_blocks"} <= set(payload["traces"])
    real = next(c for c in payload["combos"].values() if "Real 64" in c["title"])
    sim = next(c for c in payload["combos"].values() if "Sim 256" in c["title"])
    assert real["traces"][i]["y"][:3] == [55.0] * 3 and sim["traces"][i]["y"] == []
    assert sim["traces"][payload["traces"].index("waf")]["y"]

    # PNG: the same panel under the curve
    fill_axes = drawn["fill-1-real-64"]
    assert [a[0] for a in fill_axes] == ["MB/s", "°C"]
    assert np.nanmax(fill_axes[1][1][0]) == pytest.approx(65, abs=0.5)
    assert fill_axes[1][2][0] > 30  # its own band, not from zero
    cons_axes = drawn["consistency-real-64-spare0"]
    assert "°C" in [a[0] for a in cons_axes]
    assert "°C" not in [a[0] for a in drawn["consistency-sim-256-spare0"]]


def test_no_temperature_panel_without_readings():
    runs = _real_temp_runs()
    runs[0].drives[0].phases[-1].series["temp_c"] = np.full(
        len(runs[0].drives[0].phases[-1].series["t_s"]), np.nan)
    (curve,) = fill.fill_curves(of(runs, "fill"))
    assert curve.counters is None


# ---- PNGs a reader can trust ----------------------------------------------------------------
def _figures(monkeypatch) -> dict:
    """Every PNG figure written from here on, by file name: (figure, the renderer of its
    layout), drawn once more after it was saved (and closed), in the PNGs' style."""
    from ssdlab.figures import png

    figs = {}
    real_save = png._save

    def keep(fig, out_dir, name):
        path = real_save(fig, out_dir, name)
        figs[name] = (fig, _draw(fig))
        return path

    monkeypatch.setattr(png, "_save", keep)
    return figs


def _draw(fig):
    """Lay the figure out as the PNG is (Agg), so sizes and places are final."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    return canvas.get_renderer()


def _overlaps(a, b) -> bool:
    return a.x0 < b.x1 and b.x0 < a.x1 and a.y0 < b.y1 and b.y0 < a.y1


def test_png_legends_sit_outside_the_plots_and_titles_fit(monkeypatch, tmp_path):
    from ssdlab.report.pngs import write_pngs

    figs = _figures(monkeypatch)
    write_pngs(demo_runs(), tmp_path)
    assert len(figs) == 11
    with_legend = 0
    for name, (fig, r) in figs.items():
        for ax in fig.axes:
            assert ax.get_legend() is None, f"{name}: a legend inside the axes"
        for lg in fig.legends:
            with_legend += 1
            box = lg.get_window_extent(r)
            for ax in fig.axes:
                assert not _overlaps(box, ax.get_window_extent(r)), f"{name}: legend over a plot"
        texts = [ax.title for ax in fig.axes] + ([fig._suptitle] if fig._suptitle else [])
        for t in texts:
            if t.get_text():
                e = t.get_window_extent(r)
                assert e.x0 >= -1 and e.x1 <= fig.bbox.x1 + 1, f"{name}: title cut: {t.get_text()}"
    assert with_legend == 6  # fill overlay, working set, quick (MB/s, score), trim, idle


def test_png_consistency_of_a_real_drive_with_a_stall_and_a_lost_sample():
    """No counters beneath (a real drive): the whole-run panel carries the time labels,
    both log panels show every second, a stalled second on a floor labelled 0, and a lost
    sample as a gap."""
    import matplotlib.pyplot as plt

    from ssdlab.figures.consistency import consistency_fig

    t = np.arange(1.0, 61.0)
    iops = 150_000 + 5_000 * np.sin(t)
    iops[31], iops[49] = 0.0, np.nan  # t = 32 s stalled, t = 50 s not logged
    ph = ReportPhase("random", series={"t_s": t, "iops": iops})
    run = ReportRun(1, "consistency", [ReportDrive("/dev/loop0", "Linux loop device", {}, [ph],
                                                   kind="block")])
    (c,) = consistency.consistency_combos([run])
    fig = consistency_fig(c)
    _draw(fig)
    whole, wlog, wlin = fig.axes
    assert [x.get_text() for x in whole.get_xticklabels() if x.get_visible()][:3] == ["0", "10", "20"]
    for ax, data in ((whole, iops), (wlog, iops[t >= c.window_start])):
        assert ax.get_yscale() == "log"
        lo, hi = ax.get_ylim()
        pos = data[np.isfinite(data) & (data > 0)]
        assert lo < pos.min() and pos.max() < hi and hi / lo >= 10
    labels = [x.get_text() for x in whole.get_yticklabels()]
    floor = whole.get_yticks()[labels.index("0")]
    assert whole.get_ylim()[0] < floor < iops[np.isfinite(iops) & (iops > 0)].min()
    line = whole.get_lines()[0]  # the series: the stall on the floor, the lost sample a gap
    y = np.asarray(line.get_ydata(), dtype=float)
    assert y[31] == floor and np.isnan(y[49])
    marks = [ln for ln in whole.get_lines() if ln.get_marker() == "|"]
    assert len(marks) == 1 and list(marks[0].get_xdata()) == [32.0]
    assert "0-IOPS seconds" in whole.get_title() and "gaps: missing samples" in whole.get_title()
    assert wlin.get_ylim()[0] == 0
    plt.close(fig)


def test_log_axis_range_ticks_and_floor():
    from ssdlab.figures.log_axis import log_axis

    band = log_axis([np.array([10_200.0, 11_000.0, 12_000.0])])  # tlc-256's steady band
    assert band.floor is None and band.hi / band.lo >= 10 and band.lo < 10_200 < 12_000 < band.hi
    assert "10k" in band.labels and len(band.ticks) >= 4 and "0" not in band.labels
    stalls = log_axis([np.array([0.0, 20.0, 3000.0, np.nan, 4500.0])])  # bg4-128's window
    assert stalls.labels[0] == "0" and stalls.ticks[0] == stalls.floor
    assert stalls.lo < stalls.floor < 20 and 4500 < stalls.hi
    assert np.isnan(stalls.plotted(np.array([np.nan]))[0])  # a missing second stays a gap
    assert stalls.plotted(np.array([0.0, 5.0])).tolist() == [stalls.floor, 5.0]
    assert log_axis([np.full(3, np.nan)]).ticks  # nothing to show still gives an axis


def test_png_flat_lines_do_not_sit_on_the_top_edge(monkeypatch, tmp_path):
    """A DRAM drive's working-set IOPS are flat: autoscaling leaves such a line on the axis's
    top edge, where it reads as clipped. Zero-based axes keep headroom over the data."""
    from ssdlab.figures.working_set import working_set_png
    from ssdlab.report.synthetic import working_set_drive

    figs = _figures(monkeypatch)
    (ws,) = working_set.working_sets([ReportRun(1, "working-set", [working_set_drive("DRAM", 40e3, None)])])
    ws.iops = ws.iops + np.linspace(0.0, 5.0, ws.iops.size)  # flat to 1e-4, as measured
    working_set_png([ws], tmp_path)
    for ax in figs["working-set"][0].axes:
        lo, hi = ax.get_ylim()
        top = max(float(np.nanmax(ln.get_ydata())) for ln in ax.get_lines())
        assert lo == 0 and hi >= 1.05 * top, (lo, hi, top)


def test_png_consistency_says_what_its_dotted_lines_are():
    """A PNG goes into a review without the HTML's caption: the panels' titles say that the
    dotted lines are where steady state began and its mean, with the test's own figures."""
    import dataclasses

    import matplotlib.pyplot as plt

    from ssdlab.figures.consistency import consistency_fig

    t = np.arange(1.0, 61.0)
    ph = ReportPhase("random", series={"t_s": t, "iops": 150_000 + 5_000 * np.sin(t)})
    run = ReportRun(1, "consistency", [ReportDrive("/dev/loop0", "Linux loop device", {}, [ph],
                                                   kind="block")])
    (c,) = consistency.consistency_combos([run])
    fig = consistency_fig(dataclasses.replace(c, steady_start_s=24.0, steady_iops=151_234.0))
    whole, wlog, wlin = fig.axes
    assert "dotted: steady state from 24 s" in whole.get_title()
    assert [ln.get_xdata()[0] for ln in whole.get_lines() if ln.get_linestyle() == ":"] == [24.0]
    for ax in (wlog, wlin):
        assert "dotted: steady-state mean 151,234 IOPS" in ax.get_title()
    plt.close(fig)
    plain = consistency_fig(c)  # no steady state found: no dotted line, nothing said of one
    assert not any("dotted" in ax.get_title() for ax in plain.axes)
    plt.close(plain)


def test_consistency_figures_say_a_run_never_reached_steady_state():
    """A run that ended in the burst has no steady figures: the PNG's and the page's titles
    say so, with the run's length; a run stored before the test said so is left alone."""
    import matplotlib.pyplot as plt

    from ssdlab.figures.consistency import _title, consistency_fig

    t = np.arange(1.0, 61.0)
    ph = ReportPhase("random", series={"t_s": t, "iops": np.full(60, 24_000.0)})

    def combo(metrics):
        run = ReportRun(1, "consistency", [ReportDrive("sim:x", "X", metrics, [ph])])
        return consistency.consistency_combos([run])[0]

    c = combo({"steady_reached": False, "steady_iops": None})
    fig = consistency_fig(c)
    assert "steady state not reached in 60 s" in fig.get_suptitle()
    plt.close(fig)
    assert "steady state not reached in 60 s" in _title(c, "X", "no extra spare")
    old = combo({"steady_iops": None})
    assert "not reached" not in _title(old, "X", "no extra spare")


def test_a_drive_without_an_slc_cache_has_no_slc_panel():
    """An MLC drive's SLC counters are 0 throughout: the panel would be an empty chart."""
    from ssdlab.figures.data import _counters

    x = np.arange(5.0)
    zero = np.zeros(5)
    s = {"waf": np.ones(5), "slc_used_bytes": zero, "slc_capacity_bytes": zero, "free_blocks": x}
    assert [p.key for p in _counters(s, x).panels()] == ["waf", "free_blocks"]
    s["slc_used_bytes"] = np.r_[1e9, zero[1:]]  # a cache used up early on: still drawn
    assert [p.key for p in _counters(s, x).panels()] == ["waf", "slc", "free_blocks"]
