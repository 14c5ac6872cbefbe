"""Reading another user's results store (root reading a user's) writes none of it: no
checkpoint of its owner's -wal into the store file, no -wal or -shm file removed or made
beside it, whether its owner's writer left them (killed mid-run) or not; every run, the
ones only in the -wal included, is read; its owner's writer closing while the reader
opens it makes no file beside it either; and a store its owner rewrites while it is read
(checkpointed into the store file, which the reader read as an immutable file) is read
as it is now, never as a mix of before and after, its reader lock held throughout."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import clirun
import pytest

from otheruser import as_nobody, needs_other_user, python_as_nobody, sticky  # noqa: F401 (a fixture)
from ssdlab import store_reading
from ssdlab.store import Store, StoreError

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
    """Each file's hash, mtime and owner; hashed by another process, as closing a descriptor
    of the store here would drop the reader's lock on it (POSIX locks are the process's)."""
    files = sorted(d.iterdir())
    sums = subprocess.run(["sha256sum", "--", *map(str, files)], check=True, capture_output=True, text=True).stdout
    return {p.name: (line.split()[0], p.stat().st_mtime_ns, p.stat().st_uid)
            for p, line in zip(files, sums.splitlines())}


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


OWNER = """
import sys
import numpy as np
from ssdlab.phase import Phase, PhaseResult
from ssdlab.store import Store
s = Store(sys.argv[1])
if sys.argv[2] == "rewrite":  # the owner clears the store and measures again
    for table in ("series", "histograms", "phases", "metrics", "run_drives", "runs"):
        s.db.execute(f"DELETE FROM {table}")
for i in range(int(sys.argv[3])):  # runs with long series: 16 pages each
    rid = s.create_run("fill", {"seconds": 3, "take": sys.argv[2]})
    i += 1000 if sys.argv[2] == "rewrite" else 0  # each take's own values
    rd = s.add_drive(rid, 0, "sim:sn520-128", {"kind": "sim", "model": "m", "capacity": 10**9})
    res = PhaseResult(phase=Phase(kind="io", name="fill", stop_bytes=10**9), segments={}, latency={},
                      series={"mbps": np.arange(8000.0) + i}, totals={"write_bytes": 10**9})
    s.add_phase(rd, 1, res)
    s.set_metrics(rd, {"avg_mbps": 500.0 + i})
    s.finish_drive(rd, "complete")
    s.finish_run(rid, "complete")
s.close()
"""


def owner_writes(db: Path, how: str, runs: int) -> None:
    """The store's owner (nobody) writing `runs` runs into it, `rewrite`: after clearing it."""
    subprocess.run(python_as_nobody("-c", OWNER, str(db), how, str(runs)), check=True, capture_output=True,
                   cwd="/", timeout=300)


def all_of(s: Store) -> list:
    """Every run of the store with its phases, series as lists."""
    out = []
    for r in s.runs():
        run = s.run(r["id"])
        for d in run["drives"]:
            d["phases"] = [{**p, "series": {k: v.tolist() for k, v in p["series"].items()}}
                           for p in s.phases(d["id"])]
        out.append(run)
    return out


def fresh(db: Path) -> list:
    s = Store(db, create=False)
    try:
        return all_of(s)
    finally:
        s.close()


@pytest.fixture
def their_big_store(sticky) -> Path:
    """A store of nobody's, closed (no -wal, no -shm): a reader reads it as an immutable file."""
    d = sticky / "theirs"
    as_nobody("mkdir", "-m", "755", str(d))
    db = d / "r.sqlite"
    owner_writes(db, "first", 60)
    assert {p.name for p in d.iterdir()} == {"r.sqlite"}
    return db


@needs_other_user
def test_a_store_its_owner_rewrites_between_two_reads_is_read_as_it_is_now(their_big_store):
    """The reader holds the store open (a report reading run after run); its owner's new
    connection writes some 2400 pages meanwhile, which SQLite checkpoints into the store
    file every 1000: the reader's next read gives the store as it is now, not pages it
    kept from before mixed with pages written since."""
    db = their_big_store
    s = Store(db, create=False)
    try:
        before = s.runs()
        assert len(before) == 60 and before[0]["args"]["take"] == "first"
        store_file = snapshot(db.parent)["r.sqlite"]
        owner_writes(db, "rewrite", 150)
        left = snapshot(db.parent)  # -wal and -shm stay: the reader's lock keeps them
        assert left["r.sqlite"][0] != store_file[0]  # checkpointed into the store file
        assert set(left) == {"r.sqlite", "r.sqlite-wal", "r.sqlite-shm"}
        after = all_of(s)
        assert snapshot(db.parent) == left  # read again, writing nothing
    finally:
        s.close()
    assert snapshot(db.parent) == left
    now = fresh(db)
    assert len(now) == 150 and {r["args"]["take"] for r in now} == {"rewrite"}
    assert after == now


@needs_other_user
def test_a_store_its_owner_rewrites_during_one_read_is_read_again(their_big_store, monkeypatch):
    """The owner's writer checkpoints into the store file while one read (a run with its
    drives and their metrics) is under way: that read is made again, whole."""
    db = their_big_store
    s = Store(db, create=False)
    try:
        rid = s.latest_run_id()
        their_first = snapshot(db.parent)["r.sqlite"]
        real_drive_row, wrote = Store._drive_row, []

        def owner_writes_midway(self, x):
            if not wrote:  # the run's row read, its drive's metrics not yet
                wrote.append(1)
                owner_writes(db, "rewrite", 150)
            return real_drive_row(self, x)

        monkeypatch.setattr(Store, "_drive_row", owner_writes_midway)
        got = s.run(rid)
        assert wrote and snapshot(db.parent)["r.sqlite"][0] != their_first[0]
    finally:
        s.close()
    monkeypatch.undo()
    now = Store(db, create=False)
    try:
        assert got["args"]["take"] == "rewrite" and got == now.run(rid), \
            (got["args"], [d["metrics"] for d in got["drives"]])
    finally:
        now.close()


@needs_other_user
def test_a_store_that_changes_under_every_read_is_one_line(their_big_store, monkeypatch):
    """A store that changes under every read (as its owner's writer would, were SQLite to
    leave no -wal to read it through) is one line saying so, not an endless loop."""
    real_state, calls = store_reading.state, []

    def changing(fd, real):  # the store file's mtime moving on each look
        calls.append(1)
        ino, size, mtime, *rest = real_state(fd, real)
        return (ino, size, mtime + len(calls), *rest)

    monkeypatch.setattr(store_reading, "state", changing)
    with pytest.raises(StoreError) as e:
        Store(their_big_store, create=False)
    assert "changed under each of" in str(e.value) and "\n" not in str(e.value)
    assert len(calls) == 2 * store_reading.REOPENS


def test_the_reader_lock_is_held_after_a_failed_read_through_the_wal(tmp_path, monkeypatch):
    """Its -wal and -shm there but not readable through (SQLite refuses): the connection
    SQLite closes on the way out drops every POSIX lock the process has on the store, the
    reader's own included, which the reader then takes again before it reads."""
    db = their_store(tmp_path, "killed")
    real_connect = Store._connect

    def wal_refused(self, uri):
        if "readonly_shm" in uri:
            sqlite3.connect(f"file:{self._uri_path}?mode=ro&immutable=1", uri=True).close()
            raise sqlite3.OperationalError("unable to open database file")
        return real_connect(self, uri)

    monkeypatch.setattr(Store, "_connect", wal_refused)
    s = Store(db, create=False)
    try:
        assert s.read_only and s.runs()
        held = subprocess.run([sys.executable, "-c", LOCKS, str(db), str(store_reading.SHARED_FIRST),
                               str(store_reading.SHARED_SIZE)], capture_output=True, text=True)
        assert held.returncode == 1 and "held" in held.stdout, (held.stdout, held.stderr)
    finally:
        s.close()


LOCKS = """
import errno, fcntl, os, sys
fd = os.open(sys.argv[1], os.O_RDWR)  # a write lock needs a descriptor open for writing; nothing is written
try:
    fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB, int(sys.argv[3]), int(sys.argv[2]), os.SEEK_SET)
except OSError as e:
    print("held" if e.errno in (errno.EACCES, errno.EAGAIN) else e)
    sys.exit(1)
print("free")
"""
