"""Runs named on the command line: an id, or -N for the N-th newest run (-1 the latest), the
same for `results show`, `results export`, `report`, `compare` and `fit --runs`; anything
else is one line and exit status 2."""

from __future__ import annotations

import json

import pytest

from clirun import cli
from drives import SMALL, set_flags

# one worker makes the two runs once and reads them in every test
pytestmark = pytest.mark.xdist_group("run-ids")


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    path = tmp_path_factory.mktemp("ids") / "r.sqlite"
    for _ in range(2):
        cli("run", "fill", "--drive", "sim:tlc-256", *set_flags(SMALL), "--db", str(path), check=True)
    return str(path)


def test_minus_one_is_the_latest_run_in_show_and_export(db):
    assert json.loads(cli("results", "show", "-1", "--db", db, "--json", check=True).stdout)["id"] == 2
    assert json.loads(cli("results", "show", "-2", "--json", "--db", db, check=True).stdout)["id"] == 1
    csv = cli("results", "export", "-1", "--format", "csv", "--db", db, check=True).stdout
    assert csv.splitlines()[1].startswith("2,")


def test_compare_and_report_take_them_too(db, tmp_path):
    doc = json.loads(cli("compare", "-1", "-2", "--db", db, "--json", check=True).stdout)
    assert doc["columns"][0].startswith("2:") and doc["columns"][1].startswith("1:")
    r = cli("report", "-1", "-o", str(tmp_path / "rep"), "--db", db, check=True)
    assert r.stdout.strip().endswith("report.html")


@pytest.mark.parametrize("args, line", [
    (["results", "show", "-3"], "no run -3 in {db}: it holds 2 runs (-1 is the latest run, -2 the one before ...)"),
    (["results", "export", "-3"], "no run -3 in {db}: it holds 2 runs"),
    (["results", "show", "--jsn"], "no such option --jsn for `ssdlab results show` (did you mean --json?)"),
    (["results", "show", "abc"], "abc: not a run id; give one of `ssdlab results list`, or -1 for the latest run"),
    (["results", "show", "-1.5"], "-1.5: not a run id; give one of `ssdlab results list`"),
    (["compare", "-1", "-7"], "no run -7 in {db}"),
    (["report", "-9", "-o", "{tmp}/rep"], "no run -9 in {db}"),
    # a run id the store does not hold: where to find those it does
    (["results", "show", "7"], "no run 7 in {db} (`ssdlab results list` shows its runs)"),
    (["report", "9", "-o", "{tmp}/rep"], "no run 9 in {db} (`ssdlab results list` shows its runs)"),
])
def test_what_names_no_run_is_one_line(db, tmp_path, args, line):
    args = [a.replace("{tmp}", str(tmp_path)) for a in args]
    r = cli(*args, "--db", db)
    assert r.returncode == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"ssdlab: error: {line.format(db=db)}"), r.stderr
    assert not (tmp_path / "rep").exists()


def test_fit_runs_take_them_too(db):
    from ssdlab.cli.errors import UserError
    from ssdlab.cli.fit import _run_ids
    from ssdlab.store import Store

    store = Store(db, create=False)
    assert _run_ids(store, "-1") == [2] and _run_ids(store, "1,-1") == [1, 2]
    with pytest.raises(UserError, match="names a run twice"):
        _run_ids(store, "2,-1")
