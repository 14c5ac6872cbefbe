"""`ssdlab compare`'s % columns read one format down the column: signed with one decimal
("+24.9", "-6.0", "0.0"), where whole changes once read "0" and "-6" beside "24.9"; the
--json document keeps its numbers."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from ssdlab.cli import app
from ssdlab.store import Store

CAP = {"kind": "sim", "model": "M", "capacity": 8_000_000_000}
FIRST = {"a_mbps": 100.0, "b_mbps": 200.0, "c_mbps": 1000.0, "d_mbps": 50.0, "e_mbps": 10.0}
SECOND = {"a_mbps": 100.0, "b_mbps": 188.0, "c_mbps": 1249.0, "d_mbps": 49.99, "e_mbps": None}


@pytest.fixture
def db(tmp_path):
    store = Store(tmp_path / "r.sqlite")
    for metrics in (FIRST, SECOND):
        rid = store.create_run("fill", {"drives": ["sim:tlc-256"]})
        d = store.add_drive(rid, 0, "sim:tlc-256", CAP)
        store.set_metrics(d, metrics)
        store.finish_drive(d, "complete")
        store.finish_run(rid, "complete")
    store.close()
    return str(tmp_path / "r.sqlite")


def test_the_pct_column_has_one_format(db):
    r = CliRunner().invoke(app, ["compare", "1", "2", "--db", db])
    assert r.exit_code == 0, r.output
    lines = [x.split("\t") for x in r.stdout.splitlines() if not x.startswith("#")]
    assert lines[0][-1].startswith("% 2:")
    pct = {row[0]: row[-1] for row in lines[1:]}
    assert pct == {"a_mbps": "0.0", "b_mbps": "-6.0", "c_mbps": "+24.9", "d_mbps": "0.0", "e_mbps": "-"}


def test_json_keeps_the_numbers(db):
    r = CliRunner().invoke(app, ["compare", "1", "2", "--db", db, "--json"])
    doc = json.loads(r.stdout)
    pct = {row["metric"]: row["pct"] for row in doc["rows"]}
    assert pct["b_mbps"] == [None, pytest.approx(-6.0)] and pct["a_mbps"] == [None, 0.0]
    assert pct["e_mbps"] == [None, None]
