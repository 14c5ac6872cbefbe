"""`results show`'s first line: a run without a testbed tag says `testbed=-` (as `results
list` shows it), not Python's `None`, and stored text reaches the terminal only as printable
characters (a store file from elsewhere may hold anything)."""

import sqlite3

import pytest
from typer.testing import CliRunner

from ssdlab.cli import app

pytest.importorskip("ssdlab._sim")


def show(db):
    r = CliRunner().invoke(app, ["results", "show", "1", "--db", str(db)])
    assert r.exit_code == 0, r.stderr
    return r.stdout.splitlines()[0]


def test_the_first_line_has_no_none_and_no_control_characters(tmp_path):
    db = tmp_path / "r.sqlite"
    r = CliRunner().invoke(app, ["run", "fill", "--drive", "sim:sn520-128", "--set", "user_capacity_gb=1",
                                 "--db", str(db)])
    assert r.exit_code == 0, r.stderr
    first = show(db)
    assert " testbed=- tool=" in first and "None" not in first, first
    with sqlite3.connect(db) as c:
        c.execute("UPDATE runs SET engine_version = ? WHERE id = 1", ("ssdsim\x1b]0;pwned\x07 1",))
    assert "\x1b" not in show(db) and "\x07" not in show(db)
