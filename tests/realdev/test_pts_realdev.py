"""Every PTS test through fio on a loop device, shortened (`ssdlab pts --quick
--round-seconds 0.1`): the same phases as on a simulated drive, every round stored, the
duration announced before the first write, the report written with what only the target
knows (fio's version, the purge it used, the write cache as the kernel reports it). A
loop device has 512-byte logical blocks, so IOPS and Latency run their 0.5 KiB steps.
The two matrix tests (IOPS: 56 steps a round, DIRTH: 49 and its three histogram points)
run one round; the others two, so that round bookkeeping is checked through fio too."""

from __future__ import annotations

import json

import pytest
from clirun import cli as _cli
from loopdevs import REASON, loops  # noqa: F401  (loops: a fixture)
from ssdlab.methodology.pts import PTS_TESTS
from ssdlab.store import Store

pytestmark = pytest.mark.realdev
if REASON:
    pytestmark = [pytest.mark.realdev, pytest.mark.skip(reason=REASON)]




ONE_ROUND = ("iops", "dirth")
ROUND_SECONDS = 0.1  # each step: fio's start-up (about 0.3 s) is most of it even so


@pytest.mark.parametrize("test", [n.removeprefix("pts-") for n in PTS_TESTS])
def test_each_pts_test_quick_on_a_loop_device(test, loops, tmp_path):  # noqa: F811
    dev, _ = loops.make()
    db, out = tmp_path / "r.sqlite", tmp_path / "rep"
    rounds = 1 if test in ONE_ROUND else 2
    r = _cli("pts", "--drive", dev, "--test", test, "--quick", "--rounds", str(rounds),
             "--round-seconds", str(ROUND_SECONDS), "-o", str(out), "--db", str(db), "--json", "--destroy-data", dev)
    assert r.returncode == 0, r.stderr
    assert f"{dev}: pts-{test} take at most" in r.stderr  # said before it started
    doc = json.loads(r.stdout)
    (run,) = doc["runs"]
    assert run["status"] == "complete" and run["test"] == f"pts-{test}"
    m = run["drives"][0]["metrics"]
    assert m["conditions"]["max_rounds"] == rounds and m["conditions"]["round_seconds"] == ROUND_SECONDS
    s = Store(db)
    names = [p["name"] for p in s.phases(s.run(run["run_id"])["drives"][0]["id"])]
    s.close()
    assert names[0].startswith("write_cache") and names[1].startswith("purge")
    if "tracking_by_round" in m:  # a test of rounds: every round stored, whole
        assert m["rounds"] == rounds
        assert {n.split("/")[0] for n in names if n.startswith("r0")} == {f"r0{i}" for i in range(1, rounds + 1)}
    if test in ("iops", "latency"):  # the loop device's 512-byte blocks: 0.5 KiB steps ran
        assert m["conditions"]["small_blocks"].startswith("run")
        assert "r01/rw0_bs512b" in names
    html = (out / "report.html").read_text()
    assert f'id="table-pts-{test}-{run["run_id"]}-0-conditions"' in html
    from ssdlab.methodology.pts import PTS_TESTS as T
    from ssdlab.report import from_store

    s = Store(db)
    head = T[f"pts-{test}"].figures(from_store(s, [run["run_id"]]))[0]
    s.close()
    rows = {r[0]: str(r[1]) for r in head.rows}
    assert rows["fio"].startswith("fio-") and rows["logical block"] == "512 bytes"
    assert rows["purge"] not in ("not recorded", "no purge phase stored")
    # a loop device has no cache of its own to switch: the kernel's state as found, flagged
    assert "measured: enabled" in rows["write cache"] or "measured: disabled" in rows["write cache"]
    assert "set by the run" not in rows["write cache"]
    assert rows["operating system"].startswith("Linux")
    assert list(out.glob("*.png"))


def test_pts_refuses_a_device_without_destroy_data_before_anything(loops, tmp_path):  # noqa: F811
    dev, _ = loops.make()
    db = tmp_path / "r.sqlite"
    r = _cli("pts", "--drive", dev, "--quick", "-o", str(tmp_path / "rep"), "--db", str(db))
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "--destroy-data" in r.stderr
    assert not db.exists()
