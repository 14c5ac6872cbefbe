"""A run interrupted before it stored any metric says so in one line, in `results show`
and in the report's comparison, instead of an empty table; its --json is as it was."""

from __future__ import annotations

import json

import pytest
from fakes import FakeTarget
from typer.testing import CliRunner

from ssdlab.cli import app
from ssdlab.methodology import Options
from ssdlab.phase import GB
from ssdlab.runner import RunInterrupted, run_test
from ssdlab.store import Store


@pytest.fixture
def cut_run(tmp_path):
    store = Store(tmp_path / "r.sqlite")
    drive = FakeTarget(capacity=8 * GB, interrupt_at=("fill", 0), bare_interrupt=True)
    with pytest.raises(RunInterrupted) as e:  # Ctrl-C before the fill's first second
        run_test(store, "fill", [("fake:a", drive)], Options(), {"drives": ["fake:a"], "spare": 0.0})
    return store, e.value.run_id


def test_results_show_says_it_in_one_line(cut_run):
    store, rid = cut_run
    runner = CliRunner()
    r = runner.invoke(app, ["results", "show", str(rid), "--db", str(store.path)])
    assert r.exit_code == 0, r.output
    lines = r.stdout.splitlines()
    assert lines[0].startswith(f"run {rid}: fill interrupted")
    assert lines[1:] == ["fake:a: FakeDrive firmware fake 1: interrupted before any result"]
    doc = json.loads(runner.invoke(app, ["results", "show", str(rid), "--db", str(store.path), "--json"]).stdout)
    assert doc["drives"][0]["metrics"] == {} and doc["drives"][0]["status"] == "interrupted"


def test_the_report_says_it_in_one_line(cut_run, tmp_path):
    store, rid = cut_run
    r = CliRunner().invoke(app, ["report", str(rid), "--db", str(store.path), "-o", str(tmp_path / "rep")])
    assert r.exit_code == 0, r.output
    html = (tmp_path / "rep" / "report.html").read_text()
    assert 'id="table-compare-fill" data-test="fill">FakeDrive: interrupted before any result</p>' in html
    assert "<tbody></tbody>" not in html
