"""Reading another user's results store (root reading a user's) writes none of it: no
checkpoint of its owner's -wal into the store file, no -wal or -shm file removed or made
beside it, whether its owner's writer left them (killed mid-run) or not; every run, the
ones only in the -wal included, is read."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import clirun
import pytest

from ssdlab.store import Store

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="needs root (a store of another user)")
NOBODY = 65534
TESTS = Path(__file__).resolve().parents[1]

WRITER = """
import os, sys
sys.path[:0] = [sys.argv[2], sys.argv[2] + "/security"]
from ssdlab.store import Store
from test_store_files import a_finished_run
s = Store(sys.argv[1]); a_finished_run(s); s.close()
if sys.argv[3] == "killed":
    s = Store(sys.argv[1])
    s.db.execute("PRAGMA wal_autocheckpoint = 0")
    a_finished_run(s)  # a second run, in the -wal only
    os._exit(0)  # the writer killed: its -wal and -shm stay
"""


def their_store(tmp_path: Path, how: str) -> Path:
    d = tmp_path / "theirs"
    d.mkdir()
    db = d / "r.sqlite"
    subprocess.run([sys.executable, "-c", WRITER, str(db), str(TESTS), how], check=True, env=clirun.environ())
    for p in [d, *d.iterdir()]:
        os.chown(p, NOBODY, NOBODY)
    return db


def snapshot(d: Path) -> dict[str, tuple[str, int, int]]:
    return {p.name: (hashlib.sha256(p.read_bytes()).hexdigest(), p.stat().st_mtime_ns, p.stat().st_uid)
            for p in sorted(d.iterdir())}


@pytest.mark.parametrize("how", ["closed", "killed"])
def test_reading_another_users_store_changes_no_byte_of_it(tmp_path, how):
    db = their_store(tmp_path, how)
    before = snapshot(db.parent)
    assert set(before) == ({"r.sqlite", "r.sqlite-wal", "r.sqlite-shm"} if how == "killed" else {"r.sqlite"})
    runs = ["2", "1"] if how == "killed" else ["1"]
    r = clirun.cli("results", "list", "--db", str(db))
    assert r.returncode == 0, r.stderr
    assert [x.split("\t")[0] for x in r.stdout.splitlines()[2:]] == runs, r.stdout
    assert snapshot(db.parent) == before
    for args in (["results", "show", runs[0]], ["results", "export", runs[0], "--format", "csv"],
                 ["report", runs[0], "-o", str(tmp_path / "report")]):
        r = clirun.cli(*args, "--db", str(db))
        assert r.returncode == 0, (args, r.stderr)
        assert snapshot(db.parent) == before, args
    # while a reader has it open, nothing is made beside it either
    s = Store(db, create=False)
    try:
        assert s.read_only and [r["id"] for r in s.runs()] == [int(x) for x in runs]
        assert snapshot(db.parent) == before
    finally:
        s.close()
    assert snapshot(db.parent) == before
