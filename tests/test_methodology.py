import math

import numpy as np
import pytest
from conftest import FakeTarget

from ssdlab.methodology import TESTS, Options, get
from ssdlab.phase import GB
from ssdlab.runner import RunInterrupted, plan_phases, run_test

METRICS = {
    "fill": {"slc_cache_gb", "peak_mbps", "post_cache_mbps", "last16_mbps", "avg_mbps",
             "fill_seconds", "recovery_peaks", "mbps_per_watt"},
    "consistency": {"steady_iops", "steady_stdev", "p1_low_iops", "min_iops", "steady_start_s", "waf"},
    "working-set": {"iops_by_gb", "lat_p99_us_by_gb"},
    "trim": {"clean_mbps", "after_trim_mbps", "recovery_ratio"},
    "idle": {"clean_read_mbps", "clean_write_mbps", "full_read_mbps", "full_write_mbps",
             "idle_read_mbps", "idle_write_mbps", "purge_write_mbps", "trim_write_mbps"},
    "copy": {"large_copy_mbps", "large_transfer_mbps", "small_copy_mbps", "small_transfer_mbps"},
}
FAST = {"consistency": 60, "trim": 30, "idle": 60, "working-set": 2, "quick": 1}


def run(store, test, target=None, **kw):
    opts = Options(seconds=FAST.get(test), **kw)
    return run_test(store, test, [("fake", target or FakeTarget())], opts, {"spare": opts.spare})


def test_registry_names():
    assert list(TESTS) == ["fill", "consistency", "working-set", "trim", "idle", "quick", "copy"]
    with pytest.raises(ValueError, match="unknown test 'nope'.*fill, consistency"):
        get("nope")


@pytest.mark.parametrize("test", list(TESTS))
def test_every_test_runs_stores_and_names_its_metrics(store, test):
    run_id, (out,) = run(store, test)
    assert out.status == "complete"
    if test in METRICS:
        assert set(out.metrics) == METRICS[test]
    r = store.run(run_id)
    assert r["status"] == "complete" and r["drives"][0]["metrics"].keys() == out.metrics.keys()
    phases = store.phases(r["drives"][0]["id"], with_data=False)
    assert phases[0]["kind"] == "purge" and all(p["status"] == "complete" for p in phases)


def test_fill_metrics_follow_the_curve(store):
    fake = FakeTarget(capacity=40 * GB, cache_bytes=10 * GB)
    _, (out,) = run(store, "fill", fake)
    m = out.metrics
    assert m["slc_cache_gb"] == 10.0
    assert m["peak_mbps"] == pytest.approx(2000, rel=1e-6)
    assert m["post_cache_mbps"] == pytest.approx(500, rel=0.01)
    assert m["last16_mbps"] == pytest.approx(500, rel=0.01)
    assert m["fill_seconds"] == pytest.approx(10 / 2 + 30 / 0.5, rel=0.01)
    assert m["avg_mbps"] == pytest.approx(fake.ran[-1].length / 1e6 / m["fill_seconds"], rel=1e-9)
    assert m["recovery_peaks"] == 0
    assert m["mbps_per_watt"] is None  # not a simulated drive


def test_consistency_seconds_and_steady_state(store):
    fake = FakeTarget()
    _, (out,) = run(store, "consistency", fake)
    assert fake.ran[-1].stop_seconds == 60
    m = out.metrics
    assert m["waf"] == 2.5
    assert m["min_iops"] <= m["p1_low_iops"] <= m["steady_iops"]
    # 60 s -> 3 s rounds; the sine averages out in a round, so the band after the 10 s burst is steady
    assert m["steady_start_s"] is not None and 9 <= m["steady_start_s"] <= 15
    assert m["steady_iops"] == pytest.approx(12_000, rel=0.1)


def test_spare_confines_writes(store):
    fake = FakeTarget()
    run(store, "consistency", fake, spare=25)
    for p in fake.ran:
        if p.kind == "io":
            assert p.offset == 0 and p.length <= 0.75 * fake.capacity
    assert fake.ran[1].stop_bytes == fake.ran[1].length


def test_working_set_sizes_capped_at_capacity(store):
    fake = FakeTarget(capacity=10 * GB)
    _, (out,) = run(store, "working-set", fake)
    assert list(out.metrics["iops_by_gb"]) == ["1", "2", "4", "8", "10"]
    assert out.metrics["iops_by_gb"]["1"] > out.metrics["iops_by_gb"]["10"]  # past the map cache
    assert max(p.length for p in fake.ran if p.kind == "io") <= 10 * GB


def test_quick_repeats_with_spread(store):
    _, (out,) = run(store, "quick", repeat=2)
    m = out.metrics
    for name in ("cdm_seq1m_q8t1_read_mbps", "cdm_rnd4k_q32t1_write_iops", "cdm_rnd4k_q32t16_read_iops",
                 "cdm_seq128k_q32t1_write_mbps", "asssd_seq_write_mbps", "asssd_4k_read_mbps",
                 "asssd_4k64_read_mbps", "asssd_access_read_ms", "asssd_score_read",
                 "asssd_score_write", "asssd_score_total"):
        assert len(m["repeats"][name]) == 2
        assert m[name] == pytest.approx(np.mean(m["repeats"][name]))
        assert f"{name}_stdev" in m
    score = 0.1 * m["asssd_seq_read_mbps"] + m["asssd_4k_read_mbps"] + m["asssd_4k64_read_mbps"]
    assert m["asssd_score_read"] == pytest.approx(score)
    assert m["asssd_score_total"] == pytest.approx(
        m["asssd_score_read"] + m["asssd_score_write"] + 0.05 * m["asssd_seq_write_mbps"])


def test_copy_transfer_is_source_bound_and_gives_idle(store):
    fake = FakeTarget(capacity=64 * GB, cache_bytes=64 * GB)  # 2000 MB/s writes > 500 MB/s source
    _, (out,) = run(store, "copy", fake)
    assert out.metrics["large_transfer_mbps"] == pytest.approx(500, rel=1e-6)
    idles = [p for p in fake.ran if p.kind == "idle" and p.name.startswith("large")]
    assert len(idles) == 15 and all(p.seconds > 0 for p in idles)
    # copy moves SIZE in and SIZE out: half the mixed stream's rate
    assert out.metrics["large_copy_mbps"] < 2000


def test_interrupt_keeps_partial_phase(store):
    fake = FakeTarget(interrupt_at=("random", 7))
    with pytest.raises(RunInterrupted) as e:
        run(store, "consistency", fake)
    r = store.run(e.value.run_id)
    assert r["status"] == "interrupted" and r["drives"][0]["status"] == "interrupted"
    phases = store.phases(r["drives"][0]["id"])
    assert [p["status"] for p in phases] == ["complete", "complete", "partial"]
    assert phases[2]["series"]["iops"].size == 7


def test_bare_ctrl_c_keeps_streamed_samples(store):
    fake = FakeTarget(interrupt_at=("random", 5), bare_interrupt=True)
    with pytest.raises(RunInterrupted) as e:
        run(store, "consistency", fake)
    rd = store.run(e.value.run_id)["drives"][0]
    last = store.phases(rd["id"])[-1]
    assert last["status"] == "partial" and last["series"]["t_s"].tolist() == [1, 2, 3, 4, 5]


def test_exception_marks_failed(store):
    with pytest.raises(RuntimeError):
        run(store, "trim", FakeTarget(fail_at="torture"))
    r = store.run(store.latest_run_id())
    assert r["status"] == "failed" and "fake failure" in r["error"]
    assert r["drives"][0]["status"] == "failed"
    assert len(store.phases(r["drives"][0]["id"], with_data=False)) == 2


def test_plan_of_copy_lists_dependent_steps():
    phases = plan_phases("copy", 64 * GB, Options())
    assert phases[0].kind == "purge"
    waits = [p for p in phases if p.kind == "idle"]
    assert waits and all(math.isfinite(p.seconds) for p in waits)
