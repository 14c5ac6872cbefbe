"""`run quick --repeat 1`: one run has no spread. Its `_stdev` figures are null in --json
and "-" in every table (`run`, `results show`, `compare`), never a 0.0 that reads as runs
that agreed; the report's tables and figures draw no spread either."""

from __future__ import annotations

import json
import re

import pytest
from typer.testing import CliRunner

from ssdlab.cli import app

QUICK = ["run", "quick", "--drive", "sim:tlc-256", "--set", "user_capacity_gb=8", "--repeat", "1",
         "--seconds", "0.5", "--interval", "0"]


def _invoke(*args: str):
    r = CliRunner().invoke(app, list(args))
    assert r.exit_code == 0, r.output
    return r


@pytest.fixture(scope="module")
def one_run(tmp_path_factory):
    db = str(tmp_path_factory.mktemp("q") / "r.sqlite")
    doc = json.loads(_invoke(*QUICK, "--db", db, "--json").stdout)
    return db, doc


def _stdev_rows(text: str) -> dict[str, str]:
    return {f[0]: f[1:] for f in (line.split("\t") for line in text.splitlines()) if f[0].endswith("_stdev")}


def test_json_has_no_spread_of_one_run(one_run):
    _, doc = one_run
    m = doc["drives"][0]["metrics"]
    spreads = {k: v for k, v in m.items() if k.endswith("_stdev")}
    assert spreads and all(v is None for v in spreads.values()), spreads
    assert all(len(v) == 1 for v in m["repeats"].values())
    assert m["cdm_seq1m_q8t1_read_mbps"] > 0  # the figures themselves are there


def test_tables_show_a_dash(one_run, tmp_path):
    db, doc = one_run
    rows = _stdev_rows(_invoke(*QUICK, "--db", str(tmp_path / "r.sqlite")).stdout)
    assert rows and all(v == ["-"] for v in rows.values()), rows
    shown = _stdev_rows(_invoke("results", "show", str(doc["run_id"]), "--db", db).stdout)
    assert shown and all(v == ["-"] for v in shown.values()), shown
    stored = json.loads(_invoke("results", "show", str(doc["run_id"]), "--db", db, "--json").stdout)
    assert all(v is None for k, v in stored["drives"][0]["metrics"].items() if k.endswith("_stdev"))
    compared = _stdev_rows(_invoke("compare", str(doc["run_id"]), str(doc["run_id"]), "--db", db).stdout)
    assert compared and all(set(v) == {"-"} for v in compared.values()), compared


def test_the_report_draws_no_spread(one_run, tmp_path):
    db, doc = one_run
    _invoke("report", str(doc["run_id"]), "--db", db, "-o", str(tmp_path / "rep"))
    html = (tmp_path / "rep" / "report.html").read_text()
    assert 'stdev"' not in html  # no spread row in the comparison table
    whiskers = re.findall(r'"error_x":\{"array":[^}]*\}', html)
    assert whiskers and all('"visible":false' in w for w in whiskers)  # none drawn around one run
