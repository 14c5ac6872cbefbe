"""`ssdlab pts`: bad input refused in one line before anything is stored; a run of chosen
tests writes its runs and one report."""

from __future__ import annotations

import json

import pytest
import ssdlab.targets
from fakes import FakeTarget, with_fake_drives

from ssdlab.targets.base import Capabilities
from ssdlab.cli import app
from ssdlab.phase import GB
from typer.testing import CliRunner

runner = CliRunner()
real_open = ssdlab.targets.open_target


class SimulatedFake(FakeTarget):
    """A fake drive that says it is simulated (no real-time duration notice)."""

    capabilities = Capabilities(simulated=True, replay=False)


class SectorDrive(FakeTarget):
    """A fake drive that says its logical block size, as a block device's identity does."""

    def __init__(self, logical_block: int):
        super().__init__(capacity=8 * GB, cache_bytes=2 * GB)
        self.logical_block = logical_block

    def identify(self):
        i = super().identify()
        i.extra["logical_block"] = self.logical_block
        return i


@pytest.fixture
def fakes(monkeypatch):
    def open_target(drive, **kw):
        spec = str(drive)
        if spec.startswith("fake512:"):
            return SectorDrive(512)
        if spec.startswith("fake4k:"):
            return SectorDrive(4096)
        if spec.startswith("fake:"):
            return SimulatedFake(capacity=8 * GB, cache_bytes=2 * GB)
        return real_open(drive, **kw)

    monkeypatch.setattr(ssdlab.targets, "open_target", open_target)
    monkeypatch.setattr(ssdlab.targets, "parse_drive", with_fake_drives(ssdlab.targets.parse_drive))


@pytest.mark.parametrize("args, says", [
    (["--rounds", "0"], "--rounds 0: must be 1 to 25"),
    (["--rounds", "26"], "--rounds 26: must be 1 to 25"),
    (["--round-seconds", "0"], "--round-seconds 0: must be above 0"),
    (["--test", "bogus"], "--test bogus: choose from iops, throughput, latency, wsat, hir, xsr, dirth"),
    (["--jobs", "0"], "--jobs 0: must be at least 1"),
    (["--response-ceiling", "0"], "--response-ceiling 0: must be above 0"),
    (["--drive", "sim:nope"], "unknown profile 'nope'"),
])
def test_bad_input_is_one_line_exit_2_and_nothing_stored(args, says, tmp_path, fakes):
    db = tmp_path / "r.sqlite"
    r = runner.invoke(app, ["pts", "--drive", "fake:a", "-o", str(tmp_path / "o"), "--db", str(db), *args])
    assert r.exit_code == 2, r.output
    assert says in r.stderr and r.stderr.count("\n") == 1
    assert not db.exists() and not (tmp_path / "o").exists()  # no report directory made either


def test_chosen_tests_run_in_order_and_land_in_one_report(tmp_path, fakes):
    db, out = tmp_path / "r.sqlite", tmp_path / "o"
    r = runner.invoke(app, ["pts", "--drive", "fake:a", "--test", "latency", "--test", "pts-iops",
                            "--rounds", "5", "--round-seconds", "1", "-o", str(out), "--db", str(db),
                            "--json", "--enterprise"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert [x["test"] for x in doc["runs"]] == ["pts-iops", "pts-latency"]  # the spec's order
    m = doc["runs"][0]["drives"][0]["metrics"]
    assert m["conditions"]["segment"] == "enterprise" and m["conditions"]["active_range_pct"] == 100
    assert m["rounds"] <= 5
    html = (out / "report.html").read_text()
    for x in doc["runs"]:
        assert f'id="table-{x["test"]}-{x["run_id"]}-0-conditions"' in html
    assert (out / f"table-pts-iops-{doc['runs'][0]['run_id']}-0-matrix.png").exists()
    assert "take at most" not in r.stderr  # a simulated (here: fake) drive: no duration notice


@pytest.mark.parametrize("drives, small", [(["fake512:a"], True), (["fake512:a", "fake4k:b"], False),
                                           (["fake512:a", "fake:c"], False)])
def test_half_kib_steps_follow_the_drives_logical_blocks(drives, small, tmp_path, fakes):
    args = [x for d in drives for x in ("--drive", d)]
    r = runner.invoke(app, ["pts", *args, "--test", "latency", "--rounds", "1", "--round-seconds", "1",
                            "-o", str(tmp_path / "o"), "--db", str(tmp_path / "r.sqlite"), "--json"])
    assert r.exit_code == 0, r.output
    (run,) = json.loads(r.stdout)["runs"]
    for d in run["drives"]:
        m = d["metrics"]
        assert ("rw0_bs512b" in m["latency_table"]) is small
        assert m["conditions"]["small_blocks"].startswith("run") is small


def test_run_of_one_pts_test_reads_the_logical_block_too(tmp_path, fakes):
    r = runner.invoke(app, ["run", "pts-latency", "--drive", "fake512:a", "--db", str(tmp_path / "r.sqlite"),
                            "--json"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    m = doc["drives"][0]["metrics"]
    assert "rw0_bs512b" in m["latency_table"] and m["conditions"]["logical_block"] == 512


@pytest.mark.parametrize("metrics, says", [
    ({"steady_reached": True, "steady_round": 7, "rounds": 7}, "steady at round 7"),
    ({"steady_reached": False, "steady_round": None, "rounds": 25}, "steady state not reached in 25 rounds"),
    ({"iops_by_minute": [1.0]}, "no steady-state rule"),
    # XSR judges each access group by the rule: when the third settled, or that it did not
    ({"groups": {}, "recovery_minutes": 19.0, "recovery_ratio": 0.95},
     "third access group settled at minute 19 (0.95 x the first's MB/s)"),
    ({"groups": {"ag3": {"step_s": 1}}, "recovery_minutes": 103 / 60, "recovery_ratio": 1.0},
     "third access group settled at second 103 (1 x the first's MB/s)"),
    ({"groups": {}, "recovery_minutes": None, "recovery_ratio": 0.5},
     "third access group never settled (0.5 x the first's MB/s)"),
])
def test_the_line_after_each_test_says_its_verdict(metrics, says):
    from ssdlab.cli.pts import verdict_line

    assert verdict_line(metrics) == says
