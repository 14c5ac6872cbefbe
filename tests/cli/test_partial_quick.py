"""A quick run cut short (Ctrl-C, or killed: stale) shows the figures of the tests it
completed, marked as from an interrupted run, in `results show`, `compare` and the report,
as the other tests' curves show what was recorded; a finished run's metrics are untouched
and nothing computed so is stored."""

from __future__ import annotations

import json

import pytest
from fakes import FakeTarget
from typer.testing import CliRunner

from ssdlab.cli import app
from ssdlab.methodology import Options
from ssdlab.phase import GB
from ssdlab.runner import RunInterrupted, partial_metrics, run_test
from ssdlab.store import Store

# the AS SSD run's 4K read of its second run: CrystalDiskMark and one AS SSD run complete
CUT = "asssd_4k_read#2"


@pytest.fixture
def cut_run(tmp_path):
    store = Store(tmp_path / "r.sqlite")
    drive = FakeTarget(capacity=8 * GB, interrupt_at=(CUT, 0))
    with pytest.raises(RunInterrupted) as e:
        run_test(store, "quick", [("fake:a", drive)], Options(seconds=1, repeat=2, interval=0),
                 {"drives": ["fake:a"], "spare": 0.0, "repeat": 2, "seconds": 1, "set": [], "seed": 42})
    return store, e.value.run_id


def test_a_cut_short_quick_run_has_the_figures_of_the_tests_it_completed(cut_run):
    store, rid = cut_run
    run = store.run(rid)
    assert run["drives"][0]["metrics"] == {}  # nothing computed at the end, nothing stored
    partial_metrics(store, run)
    d = run["drives"][0]
    assert d["partial_metrics"]["status"] == "interrupted" and 0 < d["partial_metrics"]["phases"] < d["partial_metrics"]["of"]
    m = d["metrics"]
    assert len(m["repeats"]["cdm_rnd4k_q32t16_write_mbps"]) == 2  # every CrystalDiskMark test, both runs
    assert len(m["repeats"]["asssd_score_total"]) == 1  # the AS SSD run that finished, not the one cut short
    assert store.run(rid)["drives"][0]["metrics"] == {}


def test_results_show_and_compare_say_so(cut_run):
    store, rid = cut_run
    runner = CliRunner()
    r = runner.invoke(app, ["results", "show", str(rid), "--db", str(store.path)])
    assert r.exit_code == 0, r.output
    assert "fake:a (interrupted; metrics of its" in r.output and "asssd_score_total" in r.output
    doc = json.loads(runner.invoke(app, ["results", "show", str(rid), "--db", str(store.path), "--json"]).output)
    assert doc["drives"][0]["partial_metrics"]["status"] == "interrupted"
    r = runner.invoke(app, ["compare", str(rid), "--db", str(store.path), "--json"])
    rows = {x["metric"]: x["values"] for x in json.loads(r.stdout)["rows"]}
    assert rows["cdm_seq1m_q8t1_read_mbps"][0] is not None


def test_the_report_draws_them(cut_run, tmp_path):
    from ssdlab.report.store_adapter import from_store

    store, rid = cut_run
    (run,) = from_store(store, [rid])
    assert run.drives[0].metrics.get("cdm_seq1m_q8t1_read_mbps") and run.drives[0].status == "interrupted"
