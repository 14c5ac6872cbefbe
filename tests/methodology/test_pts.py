"""The PTS tests: rounds until the steady-state rule holds (driven by results sent back),
analysis of the measurement window, every round stored (an interrupted run keeps its
rounds), each test end to end on a small simulated drive with its report figures."""

from __future__ import annotations

import json

import numpy as np
import pytest
from conftest import FakeTarget
from ssdlab import methodology
from ssdlab.methodology import Options
from ssdlab.methodology.pts import PTS_TESTS, PtsOptions
from ssdlab.methodology.pts import common as C
from ssdlab.methodology.pts import iops as IOPS
from ssdlab.phase import GB, PhaseResult
from ssdlab.runner import RunInterrupted, run_test

TRACK = IOPS.label(0, 4096)


def result(phase, iops: float) -> PhaseResult:
    return PhaseResult(phase, {}, {}, {"mean_us": 100.0, "max_us": 900.0},
                       {"iops": iops, "mbps": iops * phase.block_size / 1e6, "duration_s": 60.0})


def drive(test, values, po=PtsOptions(), other=1000.0):
    """Walk the test's phases, answering its tracking step with values[round - 1]."""
    opts = Options(own=po)
    gen = test.phases(64 * GB, opts)
    res, phase = [], next(gen)
    try:
        while True:
            rn = C.parse_round(phase.name)
            v = values[rn[0] - 1] if rn and rn[1] == TRACK else other
            res.append(result(phase, v))
            phase = gen.send(res[-1])
    except StopIteration:
        pass
    return res, opts


def test_iops_rounds_stop_at_the_first_steady_window():
    values = [500, 300, 100, 102, 98, 101, 99, 100, 100, 100]
    res, opts = drive(IOPS.TEST, values)
    names = [r.phase.name for r in res]
    assert names[:2] == ["purge", "wipc"]
    assert res[1].phase.stop_bytes == 2 * (64 * GB // C.MIB * C.MIB)  # 2x capacity, 128 KiB seq
    assert res[1].phase.block_size == 128 * 1024 and res[1].phase.pattern == "seq"
    rounds = C.by_round(res)
    assert sorted(rounds) == list(range(1, 8))  # steady at round 7: no round 8
    assert all(len(r) == len(IOPS.LABELS) for r in rounds.values())
    m = IOPS.TEST.analyze(res, opts)
    assert m["steady_reached"] and m["steady_round"] == 7 and m["rounds"] == 7
    assert (m["window_first_round"], m["window_last_round"]) == (3, 7)
    assert m["iops_matrix"][TRACK] == pytest.approx(100.0)  # the window's average
    assert m["iops_matrix"][IOPS.label(100, 4096)] == pytest.approx(1000.0)
    assert m["conditions"]["active_range_pct"] == 75 and m["conditions"]["threads"] == 2


def test_steps_follow_the_specification_order_and_settings():
    res, _ = drive(IOPS.TEST, [100] * 5, PtsOptions(segment="enterprise"))
    r1 = [r.phase for r in res if r.phase.name.startswith("r01/")]
    assert [(p.read_pct, p.block_size) for p in r1] == [(m, b) for m in IOPS.MIXES for b in IOPS.BLOCKS]
    assert {(p.jobs, p.queue_depth, p.pattern, p.stop_seconds, p.frac_length) for p in r1} == {
        (4, 32, "rand", 60.0, 1.0)}


def test_never_steady_runs_25_rounds_and_reports_the_last_window():
    res, opts = drive(IOPS.TEST, [100, 150] * 13)
    m = IOPS.TEST.analyze(res, opts)
    assert m["rounds"] == 25 and not m["steady_reached"] and m["steady_round"] is None
    assert (m["window_first_round"], m["window_last_round"]) == (21, 25)


def test_rounds_cap_shortens_a_run():
    res, opts = drive(IOPS.TEST, [100] * 25, PtsOptions(max_rounds=3))
    assert sorted(C.by_round(res)) == [1, 2, 3]
    assert not IOPS.TEST.analyze(res, opts)["steady_reached"]


def test_plan_lists_every_round_up_to_the_cap():
    from ssdlab.runner import plan_phases

    ph = plan_phases("pts-latency", 64 * GB, Options(own=PtsOptions(max_rounds=4)))
    assert len(ph) == 2 + 4 * 6 and ph[-1].name == "r04/rw0_bs4k"
    assert {(p.jobs, p.queue_depth) for p in ph[2:]} == {(1, 1)}


def test_registered_and_outside_the_review():
    assert set(PTS_TESTS) == {"pts-iops", "pts-throughput", "pts-latency", "pts-wsat",
                              "pts-hir", "pts-xsr", "pts-dirth"}
    for name, t in PTS_TESTS.items():
        assert methodology.get(name) is t and not t.in_review
    assert not set(PTS_TESTS) & set(methodology.TESTS)


def test_an_interrupted_run_keeps_its_rounds(store):
    target = FakeTarget(capacity=8 * GB, interrupt_at=("r03/rw65_bs4k", 1))
    opts = Options(own=PtsOptions(round_seconds=2.0))
    with pytest.raises(RunInterrupted) as e:
        run_test(store, "pts-iops", [("fake:a", target)], opts, {})
    run = store.run(e.value.run_id)
    assert run["status"] == "interrupted"
    names = [p["name"] for p in store.phases(run["drives"][0]["id"])]
    assert sum(n.startswith("r01/") for n in names) == len(IOPS.LABELS)
    assert sum(n.startswith("r02/") for n in names) == len(IOPS.LABELS)
    assert "r03/rw65_bs4k" in names  # the phase cut short, stored partial


# session-scoped and its tests in one xdist group: one worker runs it, once
@pytest.fixture(scope="session")
def small_sim_runs(tmp_path_factory):
    """Every PTS test, quick, on a 4 GB simulated drive, stored and loaded for the report."""
    from ssdlab.profiles import load_text
    from ssdlab.report import from_store
    from ssdlab.store import Store
    from ssdlab.targets.sim import SimTarget

    s = Store(tmp_path_factory.mktemp("pts") / "r.sqlite")
    opts = Options(own=PtsOptions.quick())
    ids = {}
    for name in PTS_TESTS:
        t = SimTarget(load_text("tlc-256"), ["user_capacity_gb=4"])
        ids[name], outcomes = run_test(s, name, [("sim:tlc-256", t)], opts, {})
        assert outcomes[0].status == "complete"
    runs = {n: from_store(s, [i]) for n, i in ids.items()}
    yield runs
    s.close()


@pytest.mark.xdist_group("pts_small_sim_runs")
@pytest.mark.parametrize("name", list(PTS_TESTS))
def test_each_test_runs_quick_on_a_simulated_drive_and_draws_its_page(name, small_sim_runs, tmp_path):
    runs = small_sim_runs[name]
    m = runs[0].drives[0].metrics
    json.dumps(m)  # stored as JSON
    cond = m["conditions"]
    assert cond["active_range_pct"] == 75 and cond["write_cache_spec"] == "enabled"
    assert cond["max_rounds"] == 2 and cond["round_seconds"] == 2.0
    figs = PTS_TESTS[name].figures(runs)
    keys = [f.key for f in figs]
    assert len(keys) == len(set(keys)) and any(k.endswith("-conditions") for k in keys)
    for f in figs:
        assert f'id="{f.key}"' in f.html()
        pngs = f.png(tmp_path)
        assert pngs and all(p.stat().st_size > 1000 for p in pngs)
    if name in ("pts-iops", "pts-latency", "pts-dirth", "pts-hir"):
        assert m["rounds"] == 2 and not m["steady_reached"]
        assert any(k.endswith("-window") for k in keys) and any(k.endswith("-convergence") for k in keys)


@pytest.mark.xdist_group("pts_small_sim_runs")
def test_iops_page_has_the_matrix_table_and_3d_plot(small_sim_runs):
    runs = small_sim_runs["pts-iops"]
    figs = {f.key.rsplit("-", 1)[-1]: f for f in PTS_TESTS["pts-iops"].figures(runs)}
    table = figs["matrix"].html()
    assert table.count("<tr>") == 1 + len(IOPS.MIXES) and "65/35" in table
    assert "surface" in figs["3d"].html()
    mat = runs[0].drives[0].metrics["iops_matrix"]
    assert mat[IOPS.label(100, 4096)] > mat[IOPS.label(0, 4096)] > 0  # reads beat writes


@pytest.mark.xdist_group("pts_small_sim_runs")
def test_dirth_reports_iops_against_outstanding_io(small_sim_runs):
    from ssdlab.methodology.pts import dirth

    g = small_sim_runs["pts-dirth"][0].drives[0].metrics["grid"]
    assert set(g) == set(dirth.LABELS)
    assert g["t32q32"]["iops"] > g["t1q1"]["iops"]
    assert g["t32q32"]["mean_us"] > g["t1q1"]["mean_us"]  # demand intensity: waits grow


@pytest.mark.xdist_group("pts_small_sim_runs")
def test_latency_reports_average_max_and_five_nines(small_sim_runs):
    t = small_sim_runs["pts-latency"][0].drives[0].metrics["latency_table"]
    for v in t.values():
        assert 0 < v["avg_us"] <= v["max_us"] and v["p99_999_us"] >= v["avg_us"] * 0.9


@pytest.mark.xdist_group("pts_small_sim_runs")
def test_wsat_and_xsr_series(small_sim_runs):
    w = small_sim_runs["pts-wsat"][0].drives[0].metrics
    assert len(w["iops_by_minute"]) == len(w["tgbw_by_minute"]) >= 1
    assert np.all(np.diff(w["tgbw_by_minute"]) >= 0)
    x = small_sim_runs["pts-xsr"][0].drives[0].metrics
    assert list(x["groups"]) == ["ag1", "ag2", "ag3"]
