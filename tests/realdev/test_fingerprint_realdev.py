"""The fingerprint battery through fio on a loop device (root, losetup and fio needed): the
same phases as on a simulated drive, stored, with every metric the fit reads; the plan read
back from the stored run is the one that ran. A plumbing check: a loop device on a sparse
file has no SLC cache or GC to find (about 25 s, most of it the 10 s of QD1 reads)."""

from __future__ import annotations

import json

import pytest
from clirun import cli

from loopdevs import MIB, REASON, loops  # noqa: F401  (loops: a fixture)
from ssdlab.methodology import fingerprint as fp
from ssdlab.store import Store

pytestmark = pytest.mark.realdev
if REASON:
    pytestmark = [pytest.mark.realdev, pytest.mark.skip(reason=REASON)]


def test_fingerprint_through_fio_on_a_loop_device(loops, tmp_path):
    dev, _ = loops.make(128 * MIB)
    db = tmp_path / "r.sqlite"
    r = cli("run", "fingerprint", "--drive", dev, f"--destroy-data={dev}", "--seconds", "3",
            "--interval", "1", "--db", str(db), "--json", timeout=240, check=True)
    doc = json.loads(r.stdout)
    d = doc["drives"][0]
    assert d["status"] == "complete"
    m = d["metrics"]
    for key in ("unmapped_qd1_read_mean_us", "unmapped_qd32_read_iops", "cache_seq_read_mbps",
                "cache_qd1_read_mean_us", "cache_rand_write_iops", "peak_mbps", "post_cache_mbps",
                "qd1_read_mean_us", "qd1_read_p99_us", "read_qd32_iops", "read_seq_mbps", "read_seq_qd1_mbps", "qd1_write_mean_us", "qd1_write_iops", "steady_iops"):
        assert m[key] is not None and m[key] > 0, key
    assert len(m["fill_mbps_by_share"]) == fp.FILL_BINS and set(m["qd1_read_mean_us_by_span"]) == {"1/2", "1"}
    assert len(m["fill_avg_mbps_by_share"]) == fp.FILL_POINTS
    for key in ("fill_head_mbps_by_share", "cache_write_head_mbps_by_share"):
        assert set(m[key]) == {f"{x:g}" for x in fp.HEAD_SHARES}, key
        assert all(v is not None and v > 0 for v in m[key].values()), key
    assert all(v is not None and v > 0 for v in m["stretch_iops_by_share"].values())
    assert m["trimmed_gain"] > 0 and len(m["trimmed_iops_by_share"]) == fp.TRIMMED_BINS
    assert m["stretch_waf"] is None  # a real drive has no NAND counters
    store = Store(db)
    rd = store.run(doc["run_id"])["drives"][0]
    phases = store.phases(rd["id"], with_data=False)
    assert [p["name"] for p in phases] == [
        "purge", "unmapped_qd1_read", "unmapped_qd32_read", "cache_write", "cache_seq_read", "cache_qd1_read",
        "cache_qd32_read", "cache_qd1_write", "cache_rand_write", "fill", "settle", "qd1_read", "read_qd32", "read_seq", "read_seq_qd1", "ws_1/2", "qd1_write", "stretch",
        "pause", "recovery", "trim_spare", "trimmed"]
    settle = next(p for p in phases if p["name"] == "settle")
    assert settle["totals"]["duration_s"] >= 1.0 - 1e-6  # a real drive idles the whole cap
    plan = fp.plan_of(phases, 128 * MIB)
    assert plan.spans == 1 and plan.pause_s == 1
    assert 0 < plan.stretch_share <= fp.STRETCH_SHARE + 1e-9
    assert plan.trim_share == pytest.approx(fp.TRIM_SHARE, abs=1e-3) and plan.unmapped
    store.close()
