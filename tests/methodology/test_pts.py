"""The PTS tests: rounds until the steady-state rule holds (driven by results sent back),
analysis of the measurement window, every round stored (an interrupted run keeps its
rounds), each test end to end on a small simulated drive with its report figures."""

from __future__ import annotations

import json

import numpy as np
import pytest
from fakes import FakeTarget
from ssdlab import methodology
from ssdlab.methodology import Options
from ssdlab.methodology.pts import PTS_TESTS, PtsOptions
from ssdlab.methodology.pts import common as C
from ssdlab.methodology.pts import iops as IOPS
from ssdlab.phase import GB, PhaseResult
from ssdlab.runner import RunInterrupted, run_test, steps

TRACK = IOPS.label(0, 4096)


def result(phase, iops: float) -> PhaseResult:
    return PhaseResult(phase, {}, {}, {"mean_us": 100.0, "max_us": 900.0},
                       {"iops": iops, "mbps": iops * phase.block_size / 1e6, "duration_s": 60.0})


def drive(test, values, po=PtsOptions(), other=1000.0):
    """Walk the test's phases, answering its tracking step with values[round - 1]."""
    opts = Options(own=po)
    gen = steps(test.phases(64 * GB, opts))  # a round's Batch step by step
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
    assert names[:3] == ["write_cache", "purge", "wipc"]
    assert res[0].phase.write_cache is True  # the client segment: on
    w = res[2].phase  # 2x the user capacity of 128 KiB sequential writes over the active range
    assert w.stop_bytes == 2 * (64 * GB // C.MIB * C.MIB)
    assert (w.block_size, w.pattern, w.read_pct) == (128 * 1024, "seq", 0)
    assert (w.frac_offset, w.frac_length, w.jobs, w.queue_depth) == (0.0, 0.75, 2, 16)
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
    assert res[0].phase.write_cache is False  # the enterprise segment: off
    assert (res[2].phase.frac_length, res[2].phase.jobs, res[2].phase.queue_depth) == (1.0, 4, 32)
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


def drive_iops(tracks: dict[str, list[float]], po=PtsOptions()):
    """Walk the IOPS test answering each tracking step from `tracks` ({label: per round})."""
    opts = Options(own=po)
    gen = steps(IOPS.TEST.phases(64 * GB, opts))
    res, phase = [], next(gen)
    try:
        while True:
            rn = C.parse_round(phase.name)
            v = tracks[rn[1]][rn[0] - 1] if rn and rn[1] in tracks else 1000.0
            res.append(result(phase, v))
            phase = gen.send(res[-1])
    except StopIteration:
        pass
    return res, opts


R1M, W64K = IOPS.label(100, 1024 * 1024), IOPS.label(65, 64 * 1024)


def test_iops_is_steady_only_when_all_three_tracking_variables_are():
    # the 4 KiB write is flat from round 1; the 1024 KiB read falls 1634 -> 757 over rounds
    # 1-5 (range 90 %, the fit falls 77 % of the average) and flattens from round 3 on
    falling = [1634, 902, 809, 781, 757, 760, 752, 755, 758, 756]
    res, opts = drive_iops({TRACK: [100.0] * 10, R1M: falling})
    assert sorted(C.by_round(res)) == list(range(1, 8))  # not stopped at round 5
    m = IOPS.TEST.analyze(res, opts)
    assert m["steady_reached"] and m["steady_round"] == 7
    assert (m["window_first_round"], m["window_last_round"]) == (3, 7)
    assert set(m["tracking_variables"]) == set(IOPS.TRACKING) and m["not_steady"] == []
    assert m["windows"]["RND 1024 KiB 100/0 IOPS"]["values"] == [809, 781, 757, 760, 752]
    assert m["iops_matrix"][R1M] == pytest.approx((809 + 781 + 757 + 760 + 752) / 5)


def test_iops_never_steady_while_the_64k_mix_swings_and_says_which():
    res, opts = drive_iops({TRACK: [100.0] * 25, W64K: [100.0, 150.0] * 13})
    m = IOPS.TEST.analyze(res, opts)
    assert not m["steady_reached"] and m["rounds"] == 25
    assert m["not_steady"] == ["RND 64 KiB 65/35 IOPS"]
    assert (m["window_first_round"], m["window_last_round"]) == (21, 25)


@pytest.mark.parametrize("lb, small", [(512, True), (4096, False), (None, False)])
def test_half_kib_steps_run_on_512_byte_drives_only(lb, small):
    from ssdlab.methodology.pts import latency as LAT
    from ssdlab.runner import plan_phases

    po = PtsOptions(max_rounds=1, logical_block=lb)
    for test, n in (("pts-iops", 7), ("pts-latency", 3)):
        sizes = [p.block_size for p in plan_phases(test, 64 * GB, Options(own=po))
                 if p.name.startswith("r01/")]
        assert (sizes.count(512) == n) is small and (512 in sizes) is small
    res, opts = drive(LAT.TEST, [100.0] * 5, po)
    t = LAT.TEST.analyze(res, opts)["latency_table"]
    assert (LAT.label(0, 512) in t) is small
    note = IOPS.TEST.analyze(*drive(IOPS.TEST, [100.0] * 5, po))["conditions"]["small_blocks"]
    assert note.startswith("run") is small and (("4Kn" in note) is (lb == 4096))


def test_a_512_byte_block_is_a_valid_phase_and_the_simulator_refuses_it():
    from ssdlab.phase import Phase
    from ssdlab.profiles import load_text
    from ssdlab.targets.sim import SimTarget

    p = Phase(kind="io", pattern="rand", block_size=512, stop_seconds=0.1)
    with pytest.raises(ValueError, match="multiple of 512"):
        Phase(kind="io", pattern="rand", block_size=1000, stop_seconds=0.1)
    with pytest.raises(ValueError, match="4096"):
        SimTarget(load_text("tlc-256"), ["user_capacity_gb=4"]).run(p)


def test_plan_lists_every_round_up_to_the_cap():
    from ssdlab.runner import plan_phases

    ph = plan_phases("pts-latency", 64 * GB, Options(own=PtsOptions(max_rounds=4)))
    assert len(ph) == 3 + 4 * 6 and ph[-1].name == "r04/rw0_bs4k"  # write cache, purge, WIPC, rounds
    assert {(p.jobs, p.queue_depth) for p in ph[3:]} == {(1, 1)}


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
def test_iops_page_has_the_matrix_table_2d_and_3d_in_snia_s_orientation(small_sim_runs):
    runs = small_sim_runs["pts-iops"]
    figs = {f.key.split("-", 5)[-1]: f for f in PTS_TESTS["pts-iops"].figures(runs)}
    table = figs["matrix"]
    assert [r[0] for r in table.rows] == ["4", "8", "16", "32", "64", "128", "1024"]  # small first
    assert table.columns[1] == "R/W 0/100" and table.columns[-1] == "R/W 100/0"
    assert "1,024" not in table.html() and table.html().count("<tr>") == 1 + 7
    two = figs["2d"]
    assert two.log_x and two.log_y and (two.xlabel, two.ylabel) == ("block size (KiB)", "IOPS")
    three = figs["3d"]
    assert three.y_labels[0] == "0/100" and three.x_labels == ["4", "8", "16", "32", "64", "128", "1024"]
    assert three.zlabel == "IOPS" and "mesh3d" in three.html()
    assert {"convergence", "window", "window-rnd-64-kib-65-35-iops",
            "window-rnd-1024-kib-100-0-iops"} <= set(figs)
    assert figs["convergence"].ylabel == "IOPS"
    mat = runs[0].drives[0].metrics["iops_matrix"]
    assert mat[IOPS.label(100, 4096)] > mat[IOPS.label(0, 4096)] > 0  # reads beat writes


@pytest.mark.xdist_group("pts_small_sim_runs")
@pytest.mark.parametrize("name", list(PTS_TESTS))
def test_the_header_carries_what_a_qualification_report_must(name, small_sim_runs):
    runs = small_sim_runs[name]
    head = PTS_TESTS[name].figures(runs)[0]
    rows = {r[0]: str(r[1]) for r in head.rows}
    ident = runs[0].drives[0].identity
    assert head.key.endswith("-conditions") and rows["drive"] == ident["model"]
    assert rows["firmware"].startswith("ssdsim") and rows["serial"] == "tlc-256"
    assert rows["user capacity"].startswith("4.0 GB") and rows["logical block"] == "4096 bytes (4Kn)"
    assert "ssdsim" in rows["platform"] and rows["operating system"].startswith("Linux")
    assert rows["fio"].startswith("none") and rows["purge"].startswith("simulated purge")
    assert rows["write cache"].startswith("specification: enabled; measured: enabled")
    assert rows["active range"].startswith("75 %")
    if name in ("pts-wsat", "pts-xsr"):
        assert rows["preconditioning"].startswith("none")
    else:
        assert rows["preconditioning"].endswith("T2Q16") and "active range" in rows["preconditioning"]
    if name in ("pts-iops", "pts-latency", "pts-hir", "pts-dirth"):
        assert rows["steady state"].startswith("NOT ACHIEVED in 2 rounds: rounds 1-2 reported")


@pytest.mark.xdist_group("pts_small_sim_runs")
def test_dirth_reports_iops_against_outstanding_io(small_sim_runs):
    from ssdlab.methodology.pts import dirth

    m = small_sim_runs["pts-dirth"][0].drives[0].metrics
    g = m["grid"]
    assert set(g) == set(dirth.LABELS)
    assert g["t32q32"]["iops"] > g["t1q1"]["iops"]
    assert g["t32q32"]["mean_us"] > g["t1q1"]["mean_us"]  # demand intensity: waits grow
    assert {p: v["at"] for p, v in m["points"].items()}["min"] == "t1q1"
    assert all(v["p99_999_us"] <= v["max_us"] for v in m["points"].values())


@pytest.mark.xdist_group("pts_small_sim_runs")
def test_latency_five_nines_never_above_the_maximum(small_sim_runs):
    runs = small_sim_runs["pts-latency"]
    t = runs[0].drives[0].metrics["latency_table"]
    for v in t.values():
        assert 0 < v["avg_us"] <= v["p99_999_us"] <= v["max_us"]
    keys = {f.key.split("-", 5)[-1] for f in PTS_TESTS["pts-latency"].figures(runs)}
    assert {"latency", "convergence", "convergence-max", "window", "3d-avg", "3d-max"} <= keys


@pytest.mark.xdist_group("pts_small_sim_runs")
def test_wsat_and_xsr_series(small_sim_runs):
    runs = small_sim_runs["pts-wsat"]
    w = runs[0].drives[0].metrics
    assert len(w["iops_by_minute"]) == len(w["tgbw_by_minute"]) == len(w["fills_by_minute"]) >= 1
    assert np.all(np.diff(w["tgbw_by_minute"]) >= 0)
    assert w["fills_by_minute"][-1] == pytest.approx(w["drive_fills"], rel=0.05)
    figs = {f.key.split("-", 5)[-1]: f for f in PTS_TESTS["pts-wsat"].figures(runs)}
    assert figs["time-log"].log_x and figs["fills"].xlabel.startswith("drive fills")
    assert "spare area" in figs["time"].caption  # why WSAT's level is not a full drive's
    x = small_sim_runs["pts-xsr"][0].drives[0].metrics
    assert list(x["groups"]) == ["ag1", "ag2", "ag3"]


@pytest.mark.xdist_group("pts_small_sim_runs")
def test_hir_draws_its_bursts_unjoined_and_the_baselines(small_sim_runs):
    figs = {f.key.split("-", 5)[-1]: f for f in PTS_TESTS["pts-hir"].figures(small_sim_runs["pts-hir"])}
    lines = {ln.name: ln for ln in figs["timeline"].lines}
    assert lines["2 s write bursts"].mode == "markers"  # quick: a step's 2 s, not 5
    assert any(n.startswith("steady state") for n in lines)
    assert any(n.startswith("continuous writes") for n in lines)


# ---- XSR: a slow ramp is not a recovery ------------------------------------------------
def xsr_results(ag3_minutes: list[float]):
    from ssdlab.methodology.pts import xsr as XSR

    res = []
    for g, per_min in (("ag1", [400.0] * 12), ("ag2", [150.0] * 12), ("ag3", ag3_minutes)):
        phase = next(p for p in XSR.phases(64 * GB, Options()) if p.name == g)
        mb = np.repeat(np.asarray(per_min, dtype=float), 60)  # one sample a second
        res.append(PhaseResult(phase, {"mbps": mb, "iops": mb}, {}, {},
                               {"duration_s": float(mb.size)}))
    return XSR, res


def test_xsr_recovery_is_where_the_ramp_reaches_its_level_not_where_it_starts():
    # the third group ramps 102 -> 224 MB/s until minute 13 (worked by hand in
    # tests/analysis/test_pts_steady.py): its first 5 minutes alone pass the window rule
    ramp = [102, 104, 106, 108, 110, 130, 160, 190, 210, 220, 224, 224, 224, 224, 224, 224]
    XSR, res = xsr_results(ramp)
    m = XSR.TEST.analyze(res, Options())
    ag3 = m["groups"]["ag3"]
    assert m["recovery_minutes"] == 13 and ag3["settled_window"] == [9, 13]
    assert ag3["mbps"] == pytest.approx(224) and m["recovery_ratio"] == pytest.approx(224 / 400)
    assert m["groups"]["ag1"]["steady_minute"] == 5  # flat from the start


def test_xsr_still_ramping_at_its_end_never_recovered():
    XSR, res = xsr_results([100 + 12 * i for i in range(14)])
    m = XSR.TEST.analyze(res, Options())
    assert m["recovery_minutes"] is None and not m["groups"]["ag3"]["final_steady"]


def test_a_run_stored_with_one_flat_window_still_draws_it():
    from ssdlab.figures.model import ReportDrive
    from ssdlab.methodology.pts import figures as F

    m = {"tracking": "4 KiB random write IOPS", "steady_reached": True, "tracking_by_round":
         {str(i): v for i, v in enumerate([500, 300, 100, 102, 98, 101, 99], 1)},
         "window_first_round": 3, "window_last_round": 7, "window_average": 100.0,
         "window_data_excursion": 4.0, "window_slope": -0.3, "window_intercept": 100.9,
         "window_slope_excursion": 1.2}
    (w,) = F.window_plots("k", "pts-iops", ReportDrive(drive="d", label="D", metrics=m))
    assert w.key == "fig-k-window" and list(w.lines[0].x) == [3, 4, 5, 6, 7]


class BatchingFake(FakeTarget):
    """Records what reaches run_phases: a round should arrive as one batch."""

    def __init__(self, **kw):
        super().__init__(**kw)
        self.batches: list[list[str]] = []

    def run_phases(self, phases, on_start=None, on_end=None):
        self.batches.append([p.name for p in phases])
        return super().run_phases(phases, on_start, on_end)


def test_a_round_reaches_the_target_as_one_batch_and_each_step_is_stored(store):
    target = BatchingFake(capacity=8 * GB)
    opts = Options(own=PtsOptions(round_seconds=2.0, max_rounds=2))
    run_id, _ = run_test(store, "pts-iops", [("fake:a", target)], opts, {})
    r1, r2 = ([f"r0{n}/{lb}" for lb in IOPS.LABELS] for n in (1, 2))
    assert target.batches == [["write_cache"], ["purge"], ["wipc"], r1, r2]
    ph = store.phases(store.run(run_id)["drives"][0]["id"])
    assert [p["name"] for p in ph] == ["write_cache", "purge", "wipc", *r1, *r2]
    assert [p["seq"] for p in ph] == list(range(len(ph))) and {p["status"] for p in ph} == {"complete"}


@pytest.mark.parametrize("bare", [False, True])
def test_an_interrupt_inside_a_batch_keeps_the_steps_before_it(store, bare):
    target = BatchingFake(capacity=8 * GB, interrupt_at=("r02/rw65_bs4k", 1), bare_interrupt=bare)
    opts = Options(own=PtsOptions(round_seconds=2.0, max_rounds=3))
    with pytest.raises(RunInterrupted) as e:
        run_test(store, "pts-iops", [("fake:a", target)], opts, {})
    ph = store.phases(store.run(e.value.run_id)["drives"][0]["id"])
    r2 = [p for p in ph if p["name"].startswith("r02/")]
    cut = IOPS.LABELS.index("rw65_bs4k")
    assert [p["name"] for p in r2] == [f"r02/{lb}" for lb in IOPS.LABELS[:cut + 1]]
    assert all(p["status"] == "complete" for p in r2[:-1])
    # the step cut short: the target's partial result, else the one rebuilt from its samples
    assert r2[-1]["status"] == "partial"
    assert [p["seq"] for p in ph] == list(range(len(ph)))


def test_a_plan_walked_without_results_lists_every_round():
    from ssdlab.runner import plan_phases

    names = [p.name for p in plan_phases("pts-iops", 8 * GB, Options(own=PtsOptions(max_rounds=3)))]
    assert names[:3] == ["write_cache", "purge", "wipc"]
    assert names[3:] == [f"r0{n}/{lb}" for n in (1, 2, 3) for lb in IOPS.LABELS]
