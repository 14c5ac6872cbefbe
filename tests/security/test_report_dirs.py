"""A report directory is written by name (the page, the PNGs, moved in from a private
directory), so it must be a directory no one else may write: a second account (`nobody`)
that owns it could rename the private directory ssdlab drew the report in and put a link
to any directory in its place, and the move into the report directory would then take
that directory's files (root's, in a directory only root may enter) into the other
user's hands. Such a directory is refused with one line before anything is drawn; a
sticky one (as /tmp) or one of the caller's own is written as before. The fit's report
and its twin file follow the same rules."""

from __future__ import annotations

import os
from pathlib import Path

import clirun
import pytest

from otheruser import NOBODY, as_nobody, needs_other_user, sticky, secrets_dir  # noqa: F401 (fixtures)
from ssdlab import safe_path

pytestmark = needs_other_user


@pytest.fixture
def theirs(sticky) -> Path:
    """A directory another user made (in /tmp, anyone can make one under any name)."""
    as_nobody("mkdir", str(sticky / "rep"))
    return sticky / "rep"


def test_the_private_directory_cannot_be_swapped_for_a_link(theirs, secrets_dir):
    # what the other user does while the report is drawn: the private directory renamed
    # away and a link to root's directory in its place (before, root then moved
    # root-only/key into the other user's directory)
    with pytest.raises(safe_path.UnsafePath, match="may be written by users other than"):
        with safe_path.staged(theirs) as stage:
            as_nobody("mv", str(stage), str(theirs / "away"))
            as_nobody("ln", "-s", str(secrets_dir), str(stage))
    assert sorted(p.name for p in secrets_dir.iterdir()) == ["key"]
    assert (secrets_dir / "key").read_text() == "ROOT"
    assert sorted(p.name for p in theirs.iterdir()) == []


def test_a_report_directory_of_another_user_is_refused_before_drawing(theirs, tmp_path):
    db = tmp_path / "r.db"
    clirun.cli("run", "quick", "--drive", "sim:sn520-128", "--repeat", "1", "--seconds", "1", "--db", str(db),
               check=True)
    r = clirun.cli("report", "--latest", "-o", str(theirs), "--db", str(db))
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "Traceback" not in r.stderr, r.stderr
    assert f"refusing the report directory {theirs}" in r.stderr and "owner uid" in r.stderr, r.stderr
    assert list(theirs.iterdir()) == []
    below = theirs / "sub"  # a directory of ours below theirs: they can still swap it
    as_nobody("chmod", "777", str(theirs))
    below.mkdir()
    r = clirun.cli("report", "--latest", "-o", str(below), "--db", str(db))
    assert r.returncode == 2 and f"directory {theirs} may be written" in r.stderr, r.stderr
    mine = tmp_path / "mine"  # the caller's own: written
    r = clirun.cli("report", "--latest", "-o", str(mine), "--db", str(db))
    assert r.returncode == 0 and (mine / "report.html").is_file(), r.stderr
    assert not [p for p in mine.iterdir() if p.name.startswith(".ssdlab-")]


FIT_DOC = {"class": "tlc", "trials": 1, "scaled_trials": False, "seconds": 1.0, "evidence": [], "passed": 0,
           "total": 0, "figures": [], "parameters": []}


def test_the_fit_report_replaces_a_planted_link_and_leaves_its_target(sticky, secrets_dir):
    from ssdlab.fit import report

    out = sticky / "fit"
    out.mkdir()
    os.chmod(out, 0o1777)
    as_nobody("ln", "-s", str(secrets_dir / "key"), str(out / "report.html"))
    page = report.write(dict(FIT_DOC), out, [], "Twin of x")
    assert (secrets_dir / "key").read_text() == "ROOT"
    assert page == out / "report.html" and not page.is_symlink() and "<html" in page.read_text()[:300].lower()
    assert not [p for p in out.iterdir() if p.name.startswith(".ssdlab-")]


def test_the_fit_twin_never_goes_through_another_users_link(sticky, secrets_dir):
    from ssdlab.cli import fit

    as_nobody("ln", "-s", str(secrets_dir), str(sticky / "d"))
    for force in (False, True):
        with pytest.raises(safe_path.UnsafePath, match="is a symlink owned by uid"):
            fit._write(sticky / "d" / "twin.toml", "x = 1\n", force)
    with pytest.raises(safe_path.UnsafePath, match="is a symlink owned by uid"):
        fit._check_out(sticky / "d" / "twin.toml", False)
    assert sorted(p.name for p in secrets_dir.iterdir()) == ["key"]
    fit._write(sticky / "twin.toml", "x = 1\n", False)  # a new file of ours: written
    assert (sticky / "twin.toml").read_text() == "x = 1\n"
