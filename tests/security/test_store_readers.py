"""Reading another user's results store (root reading a user's) writes none of it: no
checkpoint of its owner's -wal into the store file, no -wal or -shm file removed or made
beside it, whether its owner's writer left them (killed mid-run) or not; every run, the
ones only in the -wal included, is read; and its owner's writer closing while the reader
opens it makes no file beside it either."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import clirun
import pytest

from otheruser import as_nobody, needs_other_user, python_as_nobody, sticky  # noqa: F401 (a fixture)
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


LIVE_WRITER = """
import sys
sys.path[:0] = [sys.argv[2] + "/security"]
from ssdlab.store import Store
from test_store_files import a_finished_run
s = Store(sys.argv[1])
a_finished_run(s)
s.db.execute("PRAGMA wal_autocheckpoint = 0")
a_finished_run(s)  # in the -wal only
if sys.argv[3:] == ["hold"]:
    print("open", flush=True)
    sys.stdin.readline()
s.close()  # the last connection: SQLite checkpoints and removes -wal and -shm, if it may
"""


@needs_other_user
def test_a_writer_closing_while_the_reader_opens_makes_no_file(sticky, monkeypatch):
    """The owner's writer closes between the reader's look at its -wal and -shm files and
    SQLite's open: the reader must not then have SQLite make a -wal beside the store (as
    root, SQLite makes the file it cannot find, and gives it to the store's owner)."""
    d = sticky / "theirs"
    as_nobody("mkdir", "-m", "755", str(d))
    db = d / "r.sqlite"
    w = subprocess.Popen(python_as_nobody("-c", LIVE_WRITER, str(db), str(TESTS), "hold"), stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd="/")
    try:
        assert w.stdout.readline().strip() == "open", w.communicate()[1][-2000:]
        assert {p.name for p in d.iterdir()} == {"r.sqlite", "r.sqlite-wal", "r.sqlite-shm"}
        left: dict = {}
        real_connect = Store._connect

        def owner_closes_first(self, uri):
            if w.poll() is None:
                w.communicate("\n", timeout=60)  # the owner's writer ends, just now
                left.update(snapshot(d))
            return real_connect(self, uri)

        monkeypatch.setattr(Store, "_connect", owner_closes_first)
        s = Store(db, create=False)
        try:
            assert w.returncode == 0 and s.read_only
            assert [r["id"] for r in s.runs()] == [2, 1]
            assert snapshot(d) == left  # nothing made, nothing changed, while it reads
            s.close()
            assert snapshot(d) == left
            # the owner's runs go on beside a reader, which reads what they add
            s = Store(db, create=False)
            subprocess.run(python_as_nobody("-c", LIVE_WRITER, str(db), str(TESTS)), check=True, capture_output=True,
                           cwd="/", timeout=120)
            assert [r["id"] for r in s.runs()] == [4, 3, 2, 1]
        finally:
            s.close()
        assert all(p.stat().st_uid == NOBODY for p in d.iterdir())
    finally:
        if w.poll() is None:
            w.kill()
            w.communicate()
