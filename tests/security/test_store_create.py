"""A new results store in a shared sticky directory (/tmp) is made by ssdlab itself, new
(O_EXCL, no link followed), before SQLite opens it by name: another user who puts a link
or a file of theirs at that name after the checks gets a refusal, never root's writes
through the link."""

from __future__ import annotations

import os

import clirun
import pytest

from ssdlab.store import Store, StoreError


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root (a link of another user)")
@pytest.mark.parametrize("planted", ["link", "file"])
def test_a_store_name_taken_after_the_checks_is_refused(tmp_path, monkeypatch, planted):
    shared = tmp_path / "tmp"
    shared.mkdir()
    shared.chmod(0o1777)
    victim = tmp_path / "victim"  # an empty file of root's (where a link could also create one)
    victim.write_bytes(b"")
    db = shared / "r.sqlite"
    real_connect = Store._connect

    def plant_then_connect(self, uri):  # the other user wins the race to the name
        if not os.path.lexists(db):
            if planted == "link":
                os.symlink(victim, db)
                os.lchown(db, 65534, 65534)
            else:
                db.write_bytes(b"")
                os.chown(db, 65534, 65534)
        return real_connect(self, uri)

    # the name taken just before SQLite opens it, or before ssdlab makes it: the same refusal
    monkeypatch.setattr(Store, "_connect", plant_then_connect)
    monkeypatch.setattr("ssdlab.store_companions.new_store", _plant_first(db, victim, planted))
    with pytest.raises(StoreError, match="refusing results store"):
        Store(db)
    assert victim.read_bytes() == b""
    assert os.lstat(db).st_uid == 65534  # theirs, left as it was


def _plant_first(db, victim, planted):
    from ssdlab import store_companions

    real_new = store_companions.new_store

    def new_store(path, what):
        if path == str(db) and not os.path.lexists(db):
            if planted == "link":
                os.symlink(victim, db)
                os.lchown(db, 65534, 65534)
            else:
                db.write_bytes(b"")
                os.chown(db, 65534, 65534)
        return real_new(path, what)

    return new_store


def test_a_store_with_another_name_is_refused(tmp_path):
    """An existing empty file of root's at --db is made a store (SQLite takes an empty file
    for a new database): where fs.protected_hardlinks is 0, anyone may give a file of root's
    (an empty configuration, a lock file) a second name in /tmp, and root's next run wrote a
    store into it. A store with another name (a hard link) is refused in one line; with one
    name it is used as before."""
    shared = tmp_path / "tmp"
    shared.mkdir()
    shared.chmod(0o1777)
    victim = tmp_path / "etc" / "empty.conf"  # root's, where only root may write
    victim.parent.mkdir()
    victim.write_bytes(b"")
    db = shared / "r.sqlite"
    os.link(victim, db)  # as anyone may with fs.protected_hardlinks=0
    with pytest.raises(StoreError, match=r"refusing results store .*: .*r\.sqlite has 2 names \(hard links\)"):
        Store(db)
    assert victim.read_bytes() == b"" and not (shared / "r.sqlite-wal").exists()
    r = clirun.cli("run", "fill", "--drive", "sim:tlc-256", "--set", "user_capacity_gb=0.5", "--db", str(db))
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "2 names (hard links)" in r.stderr, r.stderr
    assert victim.read_bytes() == b""
    victim.unlink()  # one name again: the store is made there as before
    Store(db).close()
    assert db.stat().st_size > 0
