"""Ctrl-C while `review` (one test after another: a real drive's, or --jobs 1) or `pts` draws
its report, every test stored: the command says which runs are kept and gives the `ssdlab
report` command that draws their report, as when a test is cut short. It said only
`ssdlab: interrupted`, the line of a command that stored nothing."""

from __future__ import annotations

import json

import pytest
from fakes import FakeTarget, with_fake_drives
from typer.testing import CliRunner

import ssdlab.report
import ssdlab.targets
from ssdlab.cli import app
from ssdlab.phase import GB
from ssdlab.store import Store


def interrupt(*args, **kw):
    raise KeyboardInterrupt


@pytest.fixture
def no_report(monkeypatch):
    monkeypatch.setattr(ssdlab.report, "build_report", interrupt)
    real_open = ssdlab.targets.open_target
    monkeypatch.setattr(ssdlab.targets, "open_target", lambda drive, **kw: FakeTarget(capacity=8 * GB, cache_bytes=2 * GB)
                        if str(drive).startswith("fake:") else real_open(drive, **kw))
    monkeypatch.setattr(ssdlab.targets, "parse_drive", with_fake_drives(ssdlab.targets.parse_drive))


def test_a_review_interrupted_in_its_report_names_the_runs_and_their_report(no_report, tmp_path):
    db, out = tmp_path / "r.sqlite", tmp_path / "rep"
    r = CliRunner().invoke(app, ["review", "--drive", "fake:a", "--seconds", "5", "-o", str(out), "--db", str(db)])
    assert r.exit_code == 130, r.output
    ids = [x["id"] for x in sorted(Store(db).runs(20), key=lambda x: x["id"])]
    assert len(ids) >= 7 and {x["status"] for x in Store(db).runs(20)} == {"complete"}
    lines = r.stderr.splitlines()
    assert lines[-2].startswith("ssdlab: review interrupted; tests stored: fill (run 1), consistency (run 2), ")
    assert "not run" not in lines[-2]
    assert lines[-1] == f"ssdlab: their report: ssdlab report {' '.join(map(str, ids))} -o {out} --db {db}"


@pytest.mark.parametrize("json_out", [False, True])
def test_pts_interrupted_in_its_report_names_the_runs_and_their_report(no_report, tmp_path, json_out):
    pytest.importorskip("ssdlab._sim")
    db, out = tmp_path / "r.sqlite", tmp_path / "rep"
    r = CliRunner().invoke(app, ["pts", "--drive", "sim:sn520-128", "--set", "user_capacity_gb=1", "--quick",
                                 "--jobs", "1", "--test", "iops", "--test", "latency", "-o", str(out), "--db", str(db)]
                           + (["--json"] if json_out else []))
    assert r.exit_code == 130, r.output
    assert r.stderr.splitlines()[-2:] == [
        "ssdlab: pts interrupted; tests stored: pts-iops (run 1), pts-latency (run 2)",
        f"ssdlab: their report: ssdlab report 1 2 -o {out} --db {db}"]
    if json_out:
        doc = json.loads(r.stdout)
        assert doc["report"] is None and [d["run_id"] for d in doc["runs"]] == [1, 2]


def test_a_sweep_interrupted_in_its_report_names_the_command_that_draws_it(tmp_path, monkeypatch):
    pytest.importorskip("ssdlab._sim")
    import ssdlab.report.sweep

    monkeypatch.setattr(ssdlab.report.sweep, "build_sweep_report", interrupt)
    db, out = tmp_path / "r.sqlite", tmp_path / "rep"
    r = CliRunner().invoke(app, ["sweep", "fill", "--drive", "sim:sn520-128", "--set", "user_capacity_gb=1",
                                 "--spare", "0,25", "--jobs", "1", "-o", str(out), "--db", str(db)])
    assert r.exit_code == 130, r.output
    sweep = Store(db).runs(5)[0]["args"]["sweep"]
    assert r.stderr.splitlines()[-1] == (f"ssdlab: sweep {sweep} interrupted while drawing its report: 2 of 2 points "
                                         f"complete; its report: ssdlab report --sweep {sweep} -o {out} --db {db}")
