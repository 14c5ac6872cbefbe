"""PTS DIRTH on a drive answered by a formula: the 7 x 7 grid with 6, the pre-writes
between rounds, the MaxIOPS / MidIOPS / MinIOPS points under the response-time ceiling
with their 10-step histograms, and the page's demand-variation axis (queue depth per
thread)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from ssdlab.figures.model import ReportDrive, ReportPhase, ReportRun
from ssdlab.methodology import Options
from ssdlab.methodology.pts import PtsOptions
from ssdlab.methodology.pts import common as C
from ssdlab.methodology.pts import dirth as D
from ssdlab.phase import GB, PhaseResult
from ssdlab.runner import steps


def grid_iops(t: int, q: int) -> float:
    # saturates with outstanding I/O; a little lost per thread, so that no two points tie
    return 120_000 * (1 - math.exp(-t * q / 8)) + 10 * t * q - 5 * t


def result(phase) -> PhaseResult:
    t, q = phase.jobs, phase.queue_depth
    iops = grid_iops(t, q)
    mean = t * q / iops * 1e6  # Little's law, µs
    lat = {"mean_us": mean, "max_us": 3 * mean, "min_us": 0.2 * mean}
    if phase.name.startswith("hist-"):  # two buckets: most I/Os near the mean, a tail
        lat.update(edges_us=np.array([mean, 2.9 * mean]), counts=np.array([99_990.0, 10.0]),
                   hist_edges="upper")
    return PhaseResult(phase, {}, {}, lat, {"iops": iops, "duration_s": 60.0})


def walk(po: PtsOptions):
    opts = Options(own=po)
    gen = steps(D.TEST.phases(64 * GB, opts))  # a round's Batch step by step
    res, phase = [], next(gen)
    try:
        while True:
            res.append(result(phase))
            phase = gen.send(res[-1])
    except StopIteration:
        pass
    return res, opts


@pytest.fixture(scope="module")
def run():
    return walk(PtsOptions(round_seconds=1.0))


def test_the_grid_is_7_by_7_with_6_highest_demand_first(run):
    res, _ = run
    r1 = [r.phase for r in res if r.phase.name.startswith("r01/")]
    assert [(p.jobs, p.queue_depth) for p in r1] == [(t, q) for t in (32, 16, 8, 6, 4, 2, 1)
                                                      for q in (32, 16, 8, 6, 4, 2, 1)]
    assert {(p.read_pct, p.block_size, p.pattern, p.frac_length) for p in r1} == {(65, 4096, "rand", 0.75)}


def test_a_pre_write_opens_every_round_after_the_first(run):
    res, _ = run
    rounds = C.by_round(res)
    assert sorted(rounds) == [1, 2, 3, 4, 5]  # steady T32Q32 IOPS: round 5
    assert D.PREWRITE not in rounds[1]
    for n in range(2, 6):
        p = rounds[n][D.PREWRITE].phase
        assert (p.read_pct, p.block_size, p.jobs, p.queue_depth) == (0, 4096, 32, 32)
        names = [r.phase.name for r in res if r.phase.name.startswith(f"r{n:02d}/")]
        assert names[0] == f"r{n:02d}/{D.PREWRITE}" and len(names) == 50


def test_max_mid_min_points_honour_the_response_ceiling(run):
    res, opts = run
    m = D.TEST.analyze(res, opts)
    g, pts = m["grid"], m["points"]
    assert set(g) == set(D.LABELS) and len(g) == 49
    # T32Q32 has the most IOPS, at 1024 outstanding / ~130 K IOPS = 7.9 ms: past 5 ms
    assert m["max_iops_at"] == "t32q32" and g["t32q32"]["mean_us"] > 5000
    assert pts["max"]["at"] == "t16q32"  # 512 outstanding, 4.2 ms: the most IOPS within 5 ms
    assert all(v["iops"] <= g["t16q32"]["iops"] for v in g.values() if v["mean_us"] <= 5000)
    assert pts["min"]["at"] == "t1q1"
    half = (g["t16q32"]["iops"] + g["t1q1"]["iops"]) / 2
    near = min((k for k, v in g.items() if v["mean_us"] <= 5000 and k not in ("t16q32", "t1q1")),
               key=lambda k: abs(g[k]["iops"] - half))
    assert pts["mid"]["at"] == near
    hist = {r.phase.name: r.phase for r in res if r.phase.name.startswith("hist-")}
    assert list(hist) == ["hist-max", "hist-mid", "hist-min"]  # after the rounds, in this order
    for p, ph in hist.items():
        assert ph.stop_seconds == 10 * 1.0 and D.label(ph.jobs, ph.queue_depth) == pts[p[5:]]["at"]
        v = pts[p[5:]]
        assert v["p99_999_us"] <= v["max_us"] and v["p99_us"] <= v["p99_9_us"] <= v["p99_999_us"]


def test_a_lower_ceiling_moves_the_max_point_down_the_plateau():
    res, opts = walk(PtsOptions(round_seconds=1.0, max_rounds=5, response_ceiling_ms=1.0))
    m = D.TEST.analyze(res, opts)
    at = m["points"]["max"]["at"]
    assert m["grid"][at]["mean_us"] <= 1000 and at != "t16q32"
    assert m["conditions"]["response_ceiling_ms"] == 1.0


def test_the_page_plots_iops_against_queue_depth_per_thread_and_the_histograms(run, tmp_path):
    res, opts = run
    m = D.TEST.analyze(res, opts)
    d = ReportDrive(drive="fake:a", label="Formula drive", metrics=m, kind="block",
                    phases=[ReportPhase.from_result(r.phase.name, r) for r in res])
    figs = {f.key: f for f in D.TEST.figures([ReportRun(run_id=1, test="pts-dirth", drives=[d])])}
    dv = figs["fig-pts-dirth-1-0-iops-toio"]
    assert dv.xlabel.startswith("queue depth per thread")
    assert all(list(ln.x) == [1, 2, 4, 6, 8, 16, 32] for ln in dv.lines)
    assert [ln.name for ln in dv.lines][:2] == ["32 threads", "16 threads"]
    for p in D.POINTS:
        h = figs[f"fig-pts-dirth-1-0-hist-{p}"]
        x, y = h.lines[0].x, h.lines[0].y
        # the last bin holds the slowest I/O
        width = x[1] - x[0] if len(x) > 1 else 2 * x[0]
        assert h.log_y and h.lines[0].mode == "bars" and max(x) - width / 2 <= m["points"][p]["max_us"] / 1e3
        assert h.ylabel.startswith("I/Os per ") and h.ylabel.endswith(" ms bin")
        assert np.nansum(y) == pytest.approx(100_000)  # every I/O in some bin
        assert h.png(tmp_path)[0].stat().st_size > 1000
    header = figs["table-pts-dirth-1-0-conditions"].html()
    assert "MaxIOPS" in header and "5 ms" in header


def test_each_histogram_bin_holds_whole_ios():
    """A bin counts I/Os, as fio's and the specification's histograms do: a stored bucket's
    I/Os go whole into one bin (never a share of them spread over its span), every I/O in
    some bin, and no bin narrower than the widest bucket (none empty for lack of resolution)."""
    from ssdlab.analysis import latency_hist

    # the simulator's buckets (upper bounds in ns, 32 per power of two): a few of one I/O
    # each, scattered from 0.1 to 9 ms, and a crowd near 1 ms
    ns = np.array([131_072, 1_048_576, 1_081_344, 3_014_656, 5_505_024, 8_912_896])
    counts = np.array([1.0, 700.0, 3.0, 1.0, 1.0, 1.0])
    lat = {"edges_us": ns / 1e3, "counts": counts, "hist_edges": "upper", "max_us": 8_900.0}
    x, y, width_ms = D.histogram_lines(lat)
    got = np.nan_to_num(np.asarray(y))
    assert np.all(got == np.round(got)) and got.sum() == counts.sum()
    assert sorted(got[got > 0].tolist()) == [1, 1, 1, 1, 3, 700]
    lo, hi = latency_hist.bucket_bounds(lat["edges_us"], "upper")
    assert width_ms * 1e3 >= (hi - lo).max() - 1e-9 and len(x) <= 60
    assert np.allclose(np.diff(x), width_ms) and x[-1] - width_ms / 2 <= 8.9 < x[-1] + width_ms / 2
