"""An interrupted `pts --json` still prints its document (as an interrupted `review --json`
does): the tests stored, no report."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

pytest.importorskip("ssdlab._sim")

from ssdlab.cli import app  # noqa: E402


def test_an_interrupted_parallel_pts_prints_its_document(tmp_path, monkeypatch):
    from ssdlab import review

    def stopped(req, executor, on_run, on_unit=None, tests=None, application=False):
        on_run("pts-iops", 1, [])
        raise KeyboardInterrupt

    monkeypatch.setattr(review, "run_parallel", stopped)
    monkeypatch.setattr(review, "parallel", lambda drives, executor: True)
    r = CliRunner().invoke(app, ["pts", "--drive", "sim:tlc-256", "--quick", "--jobs", "2", "-o",
                                 str(tmp_path / "rep"), "--db", str(tmp_path / "r.sqlite"), "--json"])
    assert r.exit_code == 130, r.output
    assert json.loads(r.stdout) == {"report": None, "runs": [
        {"test": "pts-iops", "run_id": 1, "status": "complete", "drives": []}]}
