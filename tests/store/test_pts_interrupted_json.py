"""An interrupted `pts --json` still prints its document (as an interrupted `review --json`
does): the tests stored, no report."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

pytest.importorskip("ssdlab._sim")

from ssdlab.cli import app  # noqa: E402


def stopped_after_iops(monkeypatch) -> None:
    """A parallel pts that stores pts-iops as run 1, then meets a Ctrl-C."""
    from ssdlab import review

    def stopped(req, executor, on_run, on_unit=None, tests=None, application=False):
        on_run("pts-iops", 1, [])
        raise KeyboardInterrupt

    monkeypatch.setattr(review, "run_parallel", stopped)
    monkeypatch.setattr(review, "parallel", lambda drives, executor: True)


def test_an_interrupted_parallel_pts_prints_its_document(tmp_path, monkeypatch):
    stopped_after_iops(monkeypatch)
    r = CliRunner().invoke(app, ["pts", "--drive", "sim:tlc-256", "--quick", "--jobs", "2", "-o",
                                 str(tmp_path / "rep"), "--db", str(tmp_path / "r.sqlite"), "--json"])
    assert r.exit_code == 130, r.output
    assert json.loads(r.stdout) == {"report": None, "runs": [
        {"test": "pts-iops", "run_id": 1, "status": "complete", "drives": []}]}


def test_an_interrupted_pts_names_the_tests_not_run_and_how_to_run_them(tmp_path, monkeypatch):
    """As an interrupted review does: the runs kept, the tests not run, the command for them."""
    stopped_after_iops(monkeypatch)
    r = CliRunner().invoke(app, ["pts", "--drive", "sim:tlc-256", "--quick", "--jobs", "2", "-t", "iops",
                                 "-t", "throughput", "-o", str(tmp_path / "rep"), "--db", str(tmp_path / "r.sqlite")])
    assert r.exit_code == 130, r.output
    lines = [x for x in r.stderr.splitlines() if x.startswith("ssdlab: ")]
    assert "ssdlab: pts interrupted; tests stored: pts-iops (run 1); not run: pts-throughput" in lines
    go_on = next(x for x in lines if "to go on" in x)
    assert "--test throughput" in go_on and "--test iops" not in go_on and "ssdlab report 1 " in go_on
