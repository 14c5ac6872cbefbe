"""The test procedures on real drives, through fio: a file target (no root needed) runs the
same phases as the simulator, its idle phases are sleeps of the planned length, and the
figures are what the tools show."""

from __future__ import annotations

import re
import shutil
import time

import pytest

from ssdlab.methodology import Options
from ssdlab.runner import run_test
from ssdlab.store import Store
from ssdlab.targets import open_target

pytestmark = pytest.mark.realdev
if not shutil.which("fio"):
    pytestmark = [pytestmark, pytest.mark.skip(reason="fio not installed (apt-get install fio)")]

MIB = 2**20


def test_quick_through_fio_sleeps_its_intervals_and_shows_the_best_run(tmp_path):
    store = Store(tmp_path / "r.sqlite")
    opts = Options(repeat=2, seconds=0.1, interval=0.2)
    with open_target(f"file:{tmp_path}/q.bin:64M") as target:
        t0 = time.monotonic()
        run_id, (out,) = run_test(store, "quick", [("file", target)], opts, {})
        wall = time.monotonic() - t0
    assert out.status == "complete"
    phases = store.phases(store.run(run_id)["drives"][0]["id"])
    names = [p["name"] for p in phases]
    # CrystalDiskMark's order: its file, every read test, then every write test
    first_write = names.index("cdm_seq1m_q8t1_write#0")
    assert names[1] == "test_file" and all(
        "_read#" in n for n in names[2:first_write] if n.startswith("cdm_") and "#" in n)
    assert names.index("asssd_file#1") > names.index("cdm_rnd4k_q32t16_write#2")
    idles = [p for p in phases if p["kind"] == "idle"]
    assert len(idles) == 11 + 2  # between CDM's 12 tests; before each of 2 AS SSD runs
    for p in idles:  # a real drive idles by sleeping the planned time: never less, and
        # short of a whole default 1 s interval (a loaded machine wakes a sleeper late)
        assert 0.2 - 1e-6 <= p["totals"]["duration_s"] < 0.9
    assert wall > 13 * 0.2
    m = out.metrics
    for name in ("cdm_seq1m_q8t1_read_mbps", "cdm_rnd4k_q32t1_write_iops"):
        assert len(m["repeats"][name]) == 2 and m[name] == max(m["repeats"][name]) > 0
    assert m["asssd_seq_read_mbps"] == pytest.approx(sum(m["repeats"]["asssd_seq_read_mbps"]) / 2)
    store.close()


def test_working_set_plan_on_a_real_drive_idles_before_the_reads(tmp_path):
    from ssdlab.methodology.working_set import IDLE_CAP_S
    from ssdlab.runner import plan_phases

    phases = plan_phases("working-set", 64 * MIB, Options(seconds=1))
    text = open_target(f"file:{tmp_path}/w.bin:64M", plan=True).plan(phases)
    steps = re.findall(r"^(sleep \S+|\$ fio .*|\$ fallocate.*)$", text, re.M)
    fio_jobs = [i for i, s in enumerate(steps) if s.startswith("$ fio")]
    sleep = steps.index(f"sleep {IDLE_CAP_S:g}")
    assert fio_jobs[0] < sleep < fio_jobs[1]  # after the fill, before the first read
