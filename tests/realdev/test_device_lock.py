"""The device's own lock, which every user's runs see (guard/device_lock.py): a run of one
user that reads a device and a run of another user that writes it never overlap, in
either order; runs that only read may. Each user's own runs are one at a time per device
through lock files only that user can write (test_locks.py); these tests run the second
user's side as the `nobody` account, ssdlab and all (tests/otheruser.py)."""

from __future__ import annotations

import fcntl
import os
import shutil
import stat
import tempfile
from pathlib import Path

import clirun
import pytest
from refusals import one_line_error, sha

from loopdevs import MIB, REASON, loops, partitioned  # noqa: F401  (loops: a fixture)
from otheruser import NOBODY, held_as_nobody, needs_other_user, ssdlab_as_nobody
from ssdlab import phase as P
from ssdlab.targets import open_target
from ssdlab.targets.guard import device_lock, safety

pytestmark = [pytest.mark.realdev, needs_other_user]
if REASON:
    pytestmark = [pytest.mark.realdev, pytest.mark.skip(reason=REASON)]

# a run of the other user holding the device, as a run does between its checks and its end
HOLD = """
import os, sys, time
from ssdlab import phase as P
from ssdlab.targets import open_target
dev, writes = sys.argv[1], sys.argv[2] == "write"
t = open_target(dev, destroy_data=dev if writes else None)
t.preflight([P.seq_write("w", stop_bytes=1 << 20) if writes else P.seq_read("r", stop_bytes=1 << 20)])
print("held", os.getpid(), flush=True)
time.sleep(120)
"""






@pytest.fixture
def shared_dev(loops):
    """A loop device the other account may read (or, `shared_dev(write=True)`, write) and
    a directory of theirs for their store."""
    made: list[tuple[str, int, int]] = []
    theirs = Path(tempfile.mkdtemp(prefix="ssdlab-theirs-", dir="/tmp"))
    os.chmod(theirs, 0o755)
    (theirs / "db").mkdir()
    shutil.chown(theirs / "db", NOBODY)

    def make(write: bool = False) -> tuple[str, Path, Path]:
        dev, backing = loops.make(32 * MIB)
        st = os.stat(dev)
        made.append((dev, st.st_uid, st.st_mode))
        if write:
            shutil.chown(dev, NOBODY)
        else:
            os.chmod(dev, st.st_mode | 0o004)
        return dev, backing, theirs / "db"

    try:
        yield make
    finally:
        for dev, uid, mode in made:
            os.chown(dev, uid, -1)
            os.chmod(dev, mode & 0o7777)
        shutil.rmtree(theirs, ignore_errors=True)


def test_another_users_read_run_is_refused_while_a_run_writes(shared_dev, tmp_path):
    dev, backing, theirs = shared_dev()
    with open_target(dev, destroy_data=dev) as t:
        t.preflight([P.seq_write("w", stop_bytes=MIB)])  # a write run, from its checks on
        before = sha(backing)
        r = ssdlab_as_nobody("run", "working-set", "--drive", dev, "--no-precondition", "--seconds", "1",
                             "--db", str(theirs / "r.sqlite"))
        one_line_error(r, f"refusing {dev}: ", "is writing it", "wait for it to finish")
        assert not (theirs / "r.sqlite").exists()  # refused before the run was stored
        assert sha(backing) == before
        with pytest.raises(safety.DeviceLocked, match="this run already uses it"):
            open_target(dev)  # this user's second run: its own lock file says so, as before
    # the write run has ended: the other user reads
    with held_as_nobody(HOLD, dev, "read"):
        pass


def test_a_write_run_is_refused_while_another_user_reads(shared_dev, tmp_path):
    dev, backing, _ = shared_dev()
    before = sha(backing)
    with held_as_nobody(HOLD, dev, "read") as pid:
        db = tmp_path / "r.sqlite"
        r = clirun.cli("run", "fill", "--drive", dev, "--destroy-data", dev, "--db", str(db))
        one_line_error(r, f"refusing {dev}: pid {pid} (", f"uid {os.stat(f'/proc/{pid}').st_uid}",
                       "is reading it", "wait for it to finish")
        assert not db.exists() and sha(backing) == before
        with open_target(dev, destroy_data=dev) as t:  # reading beside another reader is fine
            t.preflight([P.seq_read("r", stop_bytes=MIB)])
            assert t.run(P.seq_read("r", stop_bytes=MIB)).totals["read_bytes"] == MIB
            with pytest.raises(safety.DeviceLocked, match="is reading it"):
                t.allow_writes()  # a read run that turns to writing is refused the same way
    assert sha(backing) == before
    with open_target(dev, destroy_data=dev) as t:  # the reader gone, the write run goes ahead
        t.preflight([P.seq_write("w", stop_bytes=MIB)])


def test_another_users_write_run_keeps_a_read_run_out(shared_dev, tmp_path):
    """The other way round: the other user writes (their device), this user's read run
    is refused, by the CLI as in Python."""
    dev, _, _ = shared_dev(write=True)
    with held_as_nobody(HOLD, dev, "write") as pid:
        r = clirun.cli("run", "working-set", "--drive", dev, "--no-precondition", "--seconds", "1", "--plan")
        assert r.returncode == 0, r.stderr  # --plan holds nothing
        db = tmp_path / "r.sqlite"
        r = clirun.cli("run", "working-set", "--drive", dev, "--no-precondition", "--seconds", "1", "--db", str(db))
        one_line_error(r, f"refusing {dev}: pid {pid} (", "is writing it")
        assert not db.exists()
        with pytest.raises(safety.DeviceLocked, match=f"pid {pid} .*is writing it"):
            open_target(dev)
    with open_target(dev):
        pass


def test_the_lock_is_on_the_device_whatever_names_it(loops, tmp_path):
    """A link to the device, or another node of it, leads to the one node locked: /dev/NAME."""
    dev, _ = loops.make(32 * MIB)
    link = tmp_path / "disk"
    link.symlink_to(dev)
    a = device_lock.NodeLock(str(link), str(link)).acquire()
    try:
        assert a.node == dev
        other = device_lock.NodeLock(dev, dev).acquire()  # another reader: shared
        with pytest.raises(safety.DeviceLocked, match="is reading it"):
            other.exclusive()
        other.release()
        a.exclusive()
        with pytest.raises(safety.DeviceLocked, match=f"pid {os.getpid()} .*is writing it"):
            device_lock.NodeLock(dev, dev).acquire()
    finally:
        a.release()
    device_lock.NodeLock(dev, dev).acquire().release()


def test_a_node_made_elsewhere_with_mknod_locks_the_devices_own_node(loops, tmp_path):
    """A node of the same device made with mknod under another directory (another inode,
    whose own flock /dev/NAME's holders never see) is locked as /dev/NAME, found from its
    major:minor through /sys/dev/block: either way round, a writer keeps the other out."""
    dev, _ = loops.make(32 * MIB)
    node = tmp_path / "mine"
    os.mknod(node, 0o600 | stat.S_IFBLK, os.stat(dev).st_rdev)
    assert os.stat(node).st_ino != os.stat(dev).st_ino
    a = device_lock.NodeLock(str(node), str(node)).acquire()
    try:
        assert a.node == dev
        a.exclusive()
        with pytest.raises(safety.DeviceLocked, match=f"refusing {dev}: pid {os.getpid()} .*is writing it"):
            device_lock.NodeLock(dev, dev).acquire()
    finally:
        a.release()
    with open(dev, "rb") as held:  # what util-linux's flock(1) or udev hold: /dev/NAME's lock
        fcntl.flock(held, fcntl.LOCK_SH)
        b = device_lock.NodeLock(str(node), str(node)).acquire()
        with pytest.raises(safety.DeviceLocked, match=f"refusing {node}: .*is reading it"):
            b.exclusive()
        b.release()


def test_a_user_who_may_not_read_the_device_is_refused_before_the_run(loops, shared_dev):
    """Taking the lock opens the device: without read access, one line before the run
    (fio failed on it mid-run, leaving a failed run in the store)."""
    _, _, theirs = shared_dev()
    dev, _ = loops.make(32 * MIB)  # root's alone (mode 0660)
    r = ssdlab_as_nobody("run", "working-set", "--drive", dev, "--no-precondition", "--seconds", "1",
                         "--db", str(theirs / "r.sqlite"))
    one_line_error(r, f"refusing {dev}: cannot open {dev}: Permission denied", "read access")
    assert not (theirs / "r.sqlite").exists()


def test_a_partition_and_its_disk_share_the_disks_lock(loops):
    """udev and util-linux lock a partition on its disk's node: a run that writes a
    partition keeps out runs on the disk and on its other partitions, and a run that reads
    the disk keeps a partition's writer out (each had a node of its own)."""
    dev, _ = loops.make(64 * MIB, None, "--partscan")
    with partitioned(dev, "label: gpt\n,24M\n,24M\n"):
        p1 = device_lock.NodeLock(f"{dev}p1", f"{dev}p1").acquire()
        assert p1.node == dev
        p1.exclusive()
        for other in (dev, f"{dev}p2"):
            with pytest.raises(safety.DeviceLocked, match=f"pid {os.getpid()} .*is writing it"):
                device_lock.NodeLock(other, other).acquire()
        with pytest.raises(safety.DeviceLocked, match=f"or another partition of its disk {dev}"):
            device_lock.NodeLock(f"{dev}p2", f"{dev}p2").acquire()
        p1.release()
        disk = device_lock.NodeLock(dev, dev).acquire()  # a reader of the whole disk
        p2 = device_lock.NodeLock(f"{dev}p2", f"{dev}p2").acquire()  # readers share
        with pytest.raises(safety.DeviceLocked, match="is reading it"):
            p2.exclusive()
        disk.release()
        p2.exclusive()  # the disk's reader gone
        p2.release()
