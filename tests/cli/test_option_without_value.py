"""An option that takes a value, given none before the next option (`--drive --db x.db`):
click would take `--db` as the drive and `x.db` as a stray argument, and the line would be
about something else. It is one line naming the option that lacks its value; exit status 2,
before anything runs or is stored."""

from __future__ import annotations

import pytest

from clirun import cli


@pytest.mark.parametrize("args, option, then, command", [
    (["run", "fill", "--drive", "--db", "x.db"], "--drive", "--db", "run fill"),
    (["run", "fill", "--db", "--drive", "sim:tlc-256"], "--db", "--drive", "run fill"),
    (["review", "--drive", "--seconds", "5"], "--drive", "--seconds", "review"),
    (["results", "list", "--db", "--json"], "--db", "--json", "results list"),
])
def test_an_option_followed_by_another_names_the_missing_value(tmp_path, args, option, then, command):
    p = cli(*args, timeout=60, cwd=tmp_path)
    assert p.returncode == 2 and p.stdout == "", p.stderr
    assert p.stderr.splitlines() == [
        f"ssdlab: error: {option} needs a value, but the word after it is the option {then}; "
        f"give {option} its value (see `ssdlab {command} --help`)"]
    assert list(tmp_path.iterdir()) == []  # nothing stored


def test_a_value_given_with_equals_is_taken_as_it_is(tmp_path):
    # `--drive=--db` names a drive called --db: not this mistake
    p = cli("run", "fill", "--drive=--db", "--db", str(tmp_path / "r.db"), timeout=60)
    assert p.returncode == 2
    assert "needs a value" not in p.stderr
