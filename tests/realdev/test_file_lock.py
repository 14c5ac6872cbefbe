"""A file target's own lock, which every user's runs see (guard/file_lock.py): two users who
may both write one file (root's, mode 0666) never write it at once, and a reader of one
keeps a writer of the other out; each user's lock files (locks.py) could not see the
other's runs. The second user is the `nobody` account, ssdlab and all (tests/otheruser.py)."""

from __future__ import annotations

import os
import pwd
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import clirun
import pytest
from refusals import one_line_error, sha

from loopdevs import MIB, REASON
from otheruser import NOBODY, held_as_nobody, needs_other_user, ssdlab_as_nobody
from ssdlab import phase as P
from ssdlab.targets import open_target
from ssdlab.targets.guard import safety

pytestmark = [pytest.mark.realdev, needs_other_user]
if REASON:
    pytestmark = [pytest.mark.realdev, pytest.mark.skip(reason=REASON)]

# a run of the other user holding the file, as a run does between its checks and its end
HOLD = """
import os, sys, time
from ssdlab import phase as P
from ssdlab.targets import open_target
spec, path, writes = sys.argv[1], sys.argv[2], sys.argv[3] == "write"
t = open_target(spec, destroy_data=path if writes else None)
t.preflight([P.seq_write("w", stop_bytes=1 << 20) if writes else P.seq_read("r", stop_bytes=1 << 20)])
print("held", os.getpid(), flush=True)
time.sleep(120)
"""


@pytest.fixture
def shared_file() -> Iterator[tuple[str, Path, Path]]:
    """Root's file that anyone may write (in a directory only root may write), its
    file:PATH:SIZE spec, and a directory of the other user's for their store."""
    d = Path(tempfile.mkdtemp(prefix="ssdlab-shared-file-", dir="/tmp"))
    try:
        os.chmod(d, 0o755)
        f = d / "drive.bin"
        f.write_bytes(os.urandom(MIB))  # data ssdlab did not write: both need --destroy-data
        os.truncate(f, 32 * MIB)
        os.chmod(f, 0o666)
        (d / "theirs").mkdir()
        shutil.chown(d / "theirs", NOBODY)
        yield f"file:{f}:32M", f, d / "theirs"
    finally:
        shutil.rmtree(d, ignore_errors=True)






def test_a_second_writer_of_another_user_is_refused(shared_file, tmp_path):
    spec, f, theirs = shared_file
    before = sha(f)
    with held_as_nobody(HOLD, spec, str(f), "write") as pid:
        db = tmp_path / "r.sqlite"
        r = clirun.cli("run", "fill", "--drive", spec, "--destroy-data", str(f), "--db", str(db))
        one_line_error(r, f"refusing file:{f}: pid {pid} (", f"uid {pwd.getpwnam(NOBODY).pw_uid})",
                       "is writing it", "file's lock", "wait for it to finish")
        assert not db.exists() and sha(f) == before
        r = clirun.cli("run", "working-set", "--no-precondition", "--seconds", "1", "--drive", spec, "--db", str(db))
        one_line_error(r, f"refusing file:{f}: pid {pid} (", "is writing it")  # nor read while written
        assert not db.exists()
    # the other way round: this user writes, the other user's writer is refused
    with open_target(spec, destroy_data=str(f)) as t:
        t.preflight([P.seq_write("w", stop_bytes=MIB)])
        r = ssdlab_as_nobody("run", "fill", "--drive", spec, "--destroy-data", str(f),
                             "--db", str(theirs / "r.sqlite"))
        one_line_error(r, f"refusing file:{f}: pid {os.getpid()} (", "is writing it")
        assert not (theirs / "r.sqlite").exists()
    assert sha(f) == before


def test_a_reader_of_another_user_keeps_a_writer_out_and_readers_share(shared_file, tmp_path):
    spec, f, _ = shared_file
    with held_as_nobody(HOLD, spec, str(f), "read") as pid:
        r = clirun.cli("run", "fill", "--drive", spec, "--destroy-data", str(f), "--db", str(tmp_path / "r.sqlite"))
        one_line_error(r, f"refusing file:{f}: pid {pid} (", "is reading it")
        with open_target(spec, destroy_data=str(f)) as t:  # reading beside another reader is fine
            t.preflight([P.seq_read("r", stop_bytes=MIB)])
            with pytest.raises(safety.DeviceLocked, match="is reading it"):
                t.allow_writes()
    with open_target(spec, destroy_data=str(f)) as t:  # the reader gone, the writer goes ahead
        t.preflight([P.seq_write("w", stop_bytes=MIB)])


def test_a_new_file_is_locked_once_made():
    """A file the run makes is locked as soon as it is there (there was nothing to lock
    when the run opened the drive): another user's run on it is refused."""
    d = Path(tempfile.mkdtemp(prefix="ssdlab-new-file-", dir="/tmp"))
    try:
        os.chmod(d, 0o755)
        spec = f"file:{d / 'new.bin'}:8M"
        with open_target(spec) as t:
            t.preflight([P.seq_write("w", stop_bytes=MIB)])
            os.chmod(d / "new.bin", 0o666)  # the other user may open it
            r = ssdlab_as_nobody("run", "working-set", "--no-precondition", "--seconds", "1", "--drive", spec,
                                 "--db", "/nonexistent/r.sqlite")
            one_line_error(r, f"refusing file:{d / 'new.bin'}: pid {os.getpid()} (", "is writing it")
    finally:
        shutil.rmtree(d, ignore_errors=True)
