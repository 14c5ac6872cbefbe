"""`ssdlab pts`: bad input refused in one line before anything is stored; a run of chosen
tests writes its runs and one report."""

from __future__ import annotations

import json

import pytest
import ssdlab.targets
from conftest import FakeTarget
from ssdlab.cli import app
from ssdlab.phase import GB
from typer.testing import CliRunner

runner = CliRunner()
real_open = ssdlab.targets.open_target


@pytest.fixture
def fakes(monkeypatch):
    def open_target(spec, **kw):
        if spec.startswith("fake:"):
            return FakeTarget(capacity=8 * GB, cache_bytes=2 * GB)
        return real_open(spec, **kw)

    monkeypatch.setattr(ssdlab.targets, "open_target", open_target)


@pytest.mark.parametrize("args, says", [
    (["--rounds", "0"], "--rounds 0: must be 1 to 25"),
    (["--rounds", "26"], "--rounds 26: must be 1 to 25"),
    (["--round-seconds", "0"], "--round-seconds 0: must be above 0"),
    (["--test", "bogus"], "--test bogus: choose from iops, throughput, latency, wsat, hir, xsr, dirth"),
    (["--jobs", "0"], "--jobs 0: must be at least 1"),
])
def test_bad_input_is_one_line_exit_2_and_nothing_stored(args, says, tmp_path, fakes):
    db = tmp_path / "r.sqlite"
    r = runner.invoke(app, ["pts", "--drive", "fake:a", "-o", str(tmp_path / "o"), "--db", str(db), *args])
    assert r.exit_code == 2, r.output
    assert says in r.stderr and r.stderr.count("\n") == 1
    assert not db.exists()


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
