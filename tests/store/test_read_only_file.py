"""A store file its user may not write (`chmod 444`, or another user's file in a directory
they may write) is refused before a run with one line saying so: SQLite opens such a file
read-only without a word and fails at the run's first write, which read as a damaged store."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import clirun
import pytest

from otheruser import NOBODY, needs_other_user, ssdlab_as_nobody
from ssdlab.store import Store

pytestmark = needs_other_user


@pytest.fixture
def their_dir():
    """A directory in /tmp (0755), given to the other user once the test has put a store in it."""
    d = Path(tempfile.mkdtemp(prefix="ssdlab-ro-store-", dir="/tmp"))
    try:
        os.chmod(d, 0o755)
        yield d
    finally:
        shutil.rmtree(d, ignore_errors=True)


def test_a_read_only_store_file_is_refused_before_the_run(their_dir):
    db = their_dir / "r.sqlite"
    clirun.cli("run", "fill", "--drive", "sim:sn520-128", "--set", "user_capacity_gb=1", "--db", str(db), check=True)
    for f in [their_dir, *their_dir.iterdir()]:
        shutil.chown(f, NOBODY)
    os.chmod(db, 0o444)
    before = db.read_bytes()
    r = ssdlab_as_nobody("run", "fill", "--drive", "sim:sn520-128", "--set", "user_capacity_gb=1", "--db", str(db))
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and not r.stdout, r.stderr
    assert f"results store {db} is not writable (mode 0444" in r.stderr and "chmod u+w" in r.stderr, r.stderr
    assert "damaged" not in r.stderr
    assert db.read_bytes() == before and [x["id"] for x in Store(db, create=False).runs(10)] == [1]
    r = ssdlab_as_nobody("results", "list", "--db", str(db))  # reading it is fine
    assert r.returncode == 0 and "sn520-128" in r.stdout, r.stderr
