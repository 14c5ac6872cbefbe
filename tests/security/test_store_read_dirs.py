"""A store of yours is read only from directories no other user may write: in one another
user may write (it can get there by `mv`; a run refuses to make one there), they could swap
the store or its -wal for their own between the checks and SQLite's open, and the results
shown would be theirs. Reading it is refused as making it is, in one line."""

from __future__ import annotations

import os
import shutil

import pytest
from clirun import cli

from ssdlab.store import Store, StoreError

NOBODY = 65534


@pytest.fixture
def theirs_dir(tmp_path):
    """A directory another user owns (and so may write), holding a store of ours."""
    made = tmp_path / "made"
    made.mkdir()
    Store(made / "r.db").close()
    d = tmp_path / "theirs"
    d.mkdir(mode=0o755)
    os.chown(d, NOBODY, NOBODY)
    for f in os.listdir(made):
        shutil.move(str(made / f), str(d / f))
    return d


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to give a directory to another user")
def test_reading_a_store_in_a_directory_another_user_may_write_is_refused(theirs_dir):
    with pytest.raises(StoreError, match="may be written by users other than"):
        Store(theirs_dir / "r.db", create=False)
    r = cli("results", "list", "--db", str(theirs_dir / "r.db"))
    assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr
    assert str(theirs_dir) in r.stderr


def test_a_store_in_a_directory_of_ours_is_read(tmp_path):
    Store(tmp_path / "r.db").close()
    Store(tmp_path / "r.db", create=False).close()
