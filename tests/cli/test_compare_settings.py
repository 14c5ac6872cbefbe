"""Runs of one test compared side by side must say where their settings differ (seconds,
spare area, --set, a test's own options): a 300 s run with 25 % spare against a 120 s run
without is not the drive's difference. `compare` warns on stderr, the report's comparison
table carries the same line."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from ssdlab.cli import app
from ssdlab.store import Store

CAP = {"kind": "sim", "model": "M", "capacity": 8_000_000_000}


def _run(store: Store, test: str, args: dict, iops: float) -> int:
    rid = store.create_run(test, args)
    d = store.add_drive(rid, 0, args["drives"][0], CAP)
    store.set_metrics(d, {"steady_iops": iops})
    store.finish_drive(d, "complete")
    store.finish_run(rid, "complete")
    return rid


@pytest.fixture
def db(tmp_path):
    store = Store(tmp_path / "r.sqlite")
    base = {"drives": ["sim:tlc-256"], "repeat": 5, "set": [], "seed": 42}
    _run(store, "consistency", {**base, "spare": 0.0, "seconds": 120.0}, 8000)
    _run(store, "consistency", {**base, "spare": 25.0, "seconds": 300.0, "repeat": 3}, 30000)
    _run(store, "consistency", {**base, "spare": 0.0, "seconds": 120.0}, 8100)
    _run(store, "fill", {**base, "spare": 0.0, "seconds": None, "repeat": 2}, 0)
    _run(store, "fill", {**base, "spare": 0.0, "seconds": None, "repeat": 5}, 0)
    return store.path


def test_compare_names_the_settings_that_differ(db):
    r = CliRunner().invoke(app, ["compare", "1", "2", "3", "--db", str(db)])
    assert r.exit_code == 0, r.output
    warn = [x for x in r.stderr.splitlines() if "differ in" in x]
    assert "ssdlab: warning: consistency runs differ in spare: 0 (runs 1, 3), 25 (run 2)" in warn, r.stderr
    assert "ssdlab: warning: consistency runs differ in seconds: 120 (runs 1, 3), 300 (run 2)" in warn
    assert len(warn) == 2, warn  # --repeat is not read by consistency: no difference


def test_alike_runs_get_no_warning(db):
    r = CliRunner().invoke(app, ["compare", "1", "3", "--db", str(db)])
    assert r.exit_code == 0 and "differ" not in r.stderr, r.stderr
    r = CliRunner().invoke(app, ["compare", "4", "5", "--db", str(db)])  # fill reads no --repeat
    assert r.exit_code == 0 and "differ" not in r.stderr, r.stderr


def test_the_report_table_says_so_too(db):
    from ssdlab.report import from_store
    from ssdlab.report.compare import compare_tables

    runs = from_store(Store(db, create=False), [1, 3])
    runs[1].tags["args"] = {**runs[1].tags["args"], "seconds": 2000.0}
    (t,) = compare_tables(runs)
    assert "consistency runs differ in seconds: 120 (run 1), 2000 (run 3)" in t.warnings, t.warnings
