"""A new results store in a shared sticky directory (/tmp) is made by ssdlab itself, new
(O_EXCL, no link followed), before SQLite opens it by name: another user who puts a link
or a file of theirs at that name after the checks gets a refusal, never root's writes
through the link."""

from __future__ import annotations

import os

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
