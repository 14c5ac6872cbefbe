"""A new store is built in a private directory beside it (store_companions.new_store); one a
killed process left there is removed by the next store made in that directory: this user's
own and older than a store takes to make, never another user's or a fresh one."""

from __future__ import annotations

import os
import time

import pytest

from ssdlab.store import Store
from ssdlab.store_companions import NEW_PREFIX, STALE_AFTER_S


def _left(tmp_path, name: str, age_s: float):
    d = tmp_path / (NEW_PREFIX + name)
    d.mkdir()
    (d / "store").write_bytes(b"")
    t = time.time() - age_s
    os.utime(d, (t, t))
    return d


def test_a_killed_makers_directory_goes_a_fresh_one_stays(tmp_path):
    old, fresh = _left(tmp_path, "old", STALE_AFTER_S + 60), _left(tmp_path, "fresh", 5)
    Store(tmp_path / "r.db").close()
    assert not old.exists() and fresh.exists()


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to make another user's directory")
def test_another_users_directory_is_left(tmp_path):
    theirs = _left(tmp_path, "theirs", STALE_AFTER_S + 60)
    os.chown(theirs, 65534, 65534)
    t = time.time() - STALE_AFTER_S - 60
    os.utime(theirs, (t, t))
    Store(tmp_path / "r.db").close()
    assert theirs.exists()
