"""The files SQLite keeps beside a store (-wal, -shm, -journal) in a directory others may
add to (sticky, as /tmp): another user's file there is not read as the store's own pages
(store_companions.py). A forged -wal, planted by `nobody` after root's run finished,
turned the finished run `failed` and its figures into the forger's at root's next
`results list`, whose checkpoint then copied them into the store file."""

from __future__ import annotations

import os
import sqlite3
import subprocess
from pathlib import Path

import clirun
import pytest

from otheruser import needs_other_user, python_as_nobody, sticky  # noqa: F401 (fixtures)
from ssdlab import store_companions

pytestmark = needs_other_user

FORGE = """
import os, shutil, sqlite3, sys
store, scratch = sys.argv[1], sys.argv[2]
copy = os.path.join(scratch, "copy.db")
shutil.copy(store, copy)
db = sqlite3.connect(copy, isolation_level=None)
db.execute("PRAGMA journal_mode=WAL")
db.execute("PRAGMA wal_autocheckpoint=0")
db.execute("UPDATE runs SET status='failed', error='forged' WHERE id=1")
fd = os.open(store + "-wal", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
os.fchmod(fd, 0o666)
os.write(fd, open(copy + "-wal", "rb").read())
os.close(fd)
os._exit(0)  # the copy's connection is never closed: its -wal is not checkpointed away
"""


def forge(store: Path, scratch: Path) -> Path:
    subprocess.run(python_as_nobody("-c", FORGE, str(store), str(scratch)), check=True, capture_output=True,
                   timeout=60, cwd="/")
    wal = Path(f"{store}-wal")
    assert wal.stat().st_uid != 0 and wal.stat().st_size > 0
    return wal


def status(store: Path) -> str:
    with sqlite3.connect(f"file:{store}?mode=ro&immutable=1", uri=True) as db:  # the file alone, no -wal
        return db.execute("SELECT status FROM runs WHERE id=1").fetchone()[0]


@pytest.fixture
def scratch(sticky) -> Path:
    d = sticky / "nobody"
    d.mkdir()
    os.chown(d, 65534, 65534)
    return d


def test_another_users_wal_beside_a_store_is_refused_and_the_finished_run_kept(sticky, scratch):
    store = sticky / "r.db"
    clirun.cli("run", "quick", "--drive", "sim:sn520-128", "--repeat", "1", "--seconds", "1", "--db", str(store),
               check=True)
    assert status(store) == "complete"
    wal = forge(store, scratch)
    for cmd in (("results", "list"), ("run", "quick", "--drive", "sim:sn520-128", "--repeat", "1", "--seconds", "1")):
        r = clirun.cli(*cmd, "--db", str(store))
        assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr
        assert f"{wal} belongs to uid" in r.stderr and "remove it" in r.stderr, r.stderr
        assert status(store) == "complete" and wal.exists()
    wal.unlink()
    r = clirun.cli("results", "list", "--db", str(store), check=True)
    assert "complete" in r.stdout and "failed" not in r.stdout


@pytest.mark.parametrize("suffix", store_companions.SUFFIXES)
def test_a_companion_of_another_user_or_with_another_name_is_refused(sticky, scratch, suffix):
    store = sticky / "r.db"
    clirun.cli("run", "quick", "--drive", "sim:sn520-128", "--repeat", "1", "--seconds", "1", "--db", str(store),
               check=True)
    theirs = Path(f"{store}-{suffix}")
    subprocess.run(python_as_nobody("-c", f"open({str(theirs)!r}, 'w').close()"), check=True, cwd="/")
    r = clirun.cli("results", "show", "1", "--db", str(store))
    assert r.returncode == 2 and "belongs to uid" in r.stderr, r.stderr
    theirs.unlink()
    mine = scratch.parent / "other-name"
    mine.write_bytes(b"")
    os.link(mine, theirs)  # a second name of a file: whoever holds the other may change it
    r = clirun.cli("results", "show", "1", "--db", str(store))
    assert r.returncode == 2 and "has 2 names" in r.stderr, r.stderr


def test_a_store_in_wal_mode_gets_its_own_wal_and_shm_before_sqlite_opens_them(sticky):
    # made by the caller before SQLite opens them: none of another user's can be put there
    # between the check and the open (in a sticky directory they cannot replace the caller's)
    store = sticky / "r.db"
    clirun.cli("run", "quick", "--drive", "sim:sn520-128", "--repeat", "1", "--seconds", "1", "--db", str(store),
               check=True)
    store_companions.check(str(store), "results store")
    for suffix in ("wal", "shm"):
        st = os.lstat(f"{store}-{suffix}")
        assert st.st_uid == os.geteuid() and st.st_size == 0 and st.st_mode & 0o777 == store.stat().st_mode & 0o666
    r = clirun.cli("results", "list", "--db", str(store), check=True)
    assert "complete" in r.stdout


def test_a_new_store_is_in_wal_mode_with_its_own_wal_before_sqlite_opens_it(sticky, monkeypatch):
    # an empty store file would be set to WAL mode by SQLite itself, which deletes a -wal
    # beside an empty file and makes its own later: a moment for another user's in between
    from ssdlab.store import Store

    seen = []
    real_connect = Store._connect

    def connect(self, uri):
        wal = Path(f"{self.real}-wal")
        seen.append((open(self.real, "rb").read()[18:20], wal.exists() and wal.stat().st_uid == os.geteuid()))
        return real_connect(self, uri)

    monkeypatch.setattr(Store, "_connect", connect)
    store = sticky / "new.db"
    Store(store).close()
    assert seen[0] == (store_companions.WAL_MODE, True)
    assert sorted(p.name for p in sticky.iterdir()) == ["new.db"]  # nothing left beside it
    assert store.stat().st_mode & 0o777 == 0o644 & ~_umask()


def _umask() -> int:
    m = os.umask(0)
    os.umask(m)
    return m
