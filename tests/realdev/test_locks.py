"""One run per device: lock files in a directory only their owner can write, opened
without following symlinks (a symlink planted in world-writable
/run/lock made a root run truncate its target, and any user could hold a lock)."""

from __future__ import annotations

import os
import stat
import subprocess
import sys

import pytest

from ssdlab.targets.guard import locks, safety


@pytest.fixture
def lockdir(tmp_path, monkeypatch):
    d = tmp_path / "locks"
    monkeypatch.setattr(locks, "lock_dir", lambda: locks._private_dir(d))
    return d


def test_lock_is_exclusive_across_processes(lockdir):
    a = locks.DeviceLock("dev:7:99", "/dev/loop99").acquire()
    try:
        # the same device twice in one run
        with pytest.raises(safety.DeviceLocked, match="this run already uses it"):
            locks.DeviceLock("dev:7:99", "/dev/loop99").acquire()
        # another process
        code = ("import sys; sys.path.insert(0, sys.argv[1]); from ssdlab.targets.guard import locks; "
                "locks.lock_dir = lambda: locks._private_dir(__import__('pathlib').Path(sys.argv[2])); "
                "locks.DeviceLock('dev:7:99', '/dev/loop99').acquire()")
        r = subprocess.run([sys.executable, "-c", code, os.path.dirname(locks.__file__) + "/../../..",
                            str(lockdir)], capture_output=True, text=True, timeout=60)
        assert r.returncode != 0 and f"another ssdlab run (pid {os.getpid()})" in r.stderr
    finally:
        a.release()
    with locks.DeviceLock("dev:7:99", "/dev/loop99"):
        pass


def test_lock_dir_is_private(lockdir):
    d = locks.lock_dir()
    st = os.lstat(d)
    assert stat.S_ISDIR(st.st_mode) and st.st_uid == os.geteuid() and st.st_mode & 0o077 == 0
    os.chmod(d, 0o1777)  # world-writable, as /run/lock is
    with pytest.raises(safety.UnsafeTarget, match="writable only by it"):
        locks.lock_dir()


def test_planted_symlink_is_not_followed(lockdir, tmp_path):
    victim = tmp_path / "victim"
    victim.write_text("IMPORTANT")
    path = locks.lock_path("dev:7:98")
    path.symlink_to(victim)
    with pytest.raises(safety.UnsafeTarget, match="cannot open its lock file"):
        locks.DeviceLock("dev:7:98", "/dev/loop98").acquire()
    assert victim.read_text() == "IMPORTANT"
    path.unlink()
    os.link(victim, path)  # a hard link to someone's file: not a lock file of ours
    with pytest.raises(safety.UnsafeTarget, match="is not ssdlab's"):
        locks.DeviceLock("dev:7:98", "/dev/loop98").acquire()
    assert victim.read_text() == "IMPORTANT"


@pytest.mark.skipif(os.geteuid() != 0, reason="root's lock directory")  # CI runs as root
def test_root_locks_live_in_run_ssdlab():
    d = locks.lock_dir()
    assert d == __import__("pathlib").Path("/run/ssdlab")
    st = os.lstat(d)
    assert st.st_uid == 0 and stat.S_IMODE(st.st_mode) == 0o700
    # another user cannot create anything there (nor hold a lock to block runs)
    r = subprocess.run(["runuser", "-u", "nobody", "--", "touch", str(d / "x.lock")],
                       capture_output=True, text=True)
    assert r.returncode != 0 and not (d / "x.lock").exists()


def test_file_target_never_follows_a_symlink_planted_after_its_check(lockdir, tmp_path, monkeypatch):
    """The file is created (O_EXCL) or opened (O_NOFOLLOW) by ssdlab itself: a symlink
    that appears between the check and the open is refused, its target untouched."""
    from ssdlab.targets import open_target

    victim = tmp_path / "victim"
    victim.write_text("IMPORTANT")
    path = tmp_path / "t.bin"
    real_check = safety.check_file_write

    def check_then_plant(p, dd, name=None):
        r = real_check(p, dd, name)
        if not os.path.lexists(path):
            path.symlink_to(victim)  # someone is quicker than us
        return r

    monkeypatch.setattr(safety, "check_file_write", check_then_plant)
    with open_target(f"file:{path}:1M") as t:
        with pytest.raises(safety.UnsafeTarget, match="changed into a symlink"):
            t.allow_writes()
    assert victim.read_text() == "IMPORTANT" and os.path.islink(path)


def test_one_file_under_two_names_is_one_drive(tmp_path):
    """A hard link names the same file: a run through it is refused while another run
    holds the file, whether that run created the file or found it, and one run given both
    names is refused as a drive given twice. (The holder writes it while it has one name:
    a file with two is never written, test_hard_links.py.)"""
    import clirun

    from ssdlab.targets import open_target

    a, b = tmp_path / "a.bin", tmp_path / "b.bin"
    code = ("import sys, time; from ssdlab.targets import open_target; "
            "t = open_target(f'file:{sys.argv[1]}:1M'); t.allow_writes(); "
            "print('held', flush=True); time.sleep(120)")
    for _ in ("created", "found"):  # the holder creates a.bin, then finds it
        p = subprocess.Popen([sys.executable, "-c", code, str(a)], stdout=subprocess.PIPE, text=True)
        try:
            assert p.stdout.readline().strip() == "held"
            os.link(a, b)
            for name in (b, a):
                with pytest.raises(safety.DeviceLocked, match=f"another ssdlab run \\(pid {p.pid}\\)"):
                    open_target(f"file:{name}:1M")
        finally:
            p.kill()
            p.wait()
        os.unlink(b)
    os.link(a, b)
    r = clirun.cli("run", "fill", "--drive", f"file:{a}:1M", "--drive", f"file:{b}:1M", "--plan")
    assert r.returncode == 2 and "the same drive" in r.stderr and r.stderr.count("\n") == 1, r.stderr


def test_only_our_own_work_directories_of_dead_runs_are_removed(tmp_path, monkeypatch):
    """The fio work directories of killed runs are removed by the next run; one with such
    a name that another user made (in /tmp anyone can) is theirs, and left alone."""
    import tempfile

    from ssdlab.targets import child

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    p = subprocess.Popen(["true"])
    p.wait()  # a pid that is gone
    ours, theirs = tmp_path / f"ssdlab-fio-{p.pid}-a", tmp_path / f"ssdlab-fio-{p.pid}-b"
    for d in (ours, theirs):
        d.mkdir()
        (d / "p1.fio").write_text("[job]\n")
    os.chown(theirs, 65534, 65534)
    child.clean_workdirs()
    assert not ours.exists() and (theirs / "p1.fio").exists()


def test_lock_files_do_not_accumulate(lockdir):
    """A run removes its lock file when it lets go, and those of killed runs (no run holds
    them) on the way; a file another run holds stays."""
    for i in range(20):
        with locks.DeviceLock(f"dev:7:{i}", f"/dev/loop{i}"):
            assert locks.lock_path(f"dev:7:{i}").exists()
    assert os.listdir(lockdir) == []
    stale = [locks.lock_path(f"dev:8:{i}") for i in range(5)]
    for p in stale:
        p.write_text("12345\n")  # left by a killed run
    victim = lockdir.parent / "victim"
    victim.write_text("IMPORTANT")
    (lockdir / "ssdlab-0123456789abcdef.lock").symlink_to(victim)  # never followed nor removed
    held = locks.lock_path("dev:9:1")
    fd = os.open(held, os.O_RDWR | os.O_CREAT, 0o600)
    import fcntl
    fcntl.flock(fd, fcntl.LOCK_EX)  # another run's, held (a descriptor of its own)
    try:
        with locks.DeviceLock("dev:7:1", "/dev/loop1"):
            pass
        assert sorted(os.listdir(lockdir)) == sorted([held.name, "ssdlab-0123456789abcdef.lock"])
        assert victim.read_text() == "IMPORTANT"
    finally:
        os.close(fd)


class _RemovedBeforeFlock:
    """fcntl with a flock that lets another run remove the lock file (and, with
    `recreate`, make and hold a new one under the name) just before the first flock."""

    def __init__(self, path, recreate: bool):
        import fcntl

        self.fcntl, self.path, self.recreate, self.other = fcntl, path, recreate, None
        self.LOCK_EX, self.LOCK_NB, self.LOCK_UN = fcntl.LOCK_EX, fcntl.LOCK_NB, fcntl.LOCK_UN

    def flock(self, fd, op):
        if self.other is None:
            os.unlink(self.path)
            self.other = -1
            if self.recreate:
                self.other = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
                self.fcntl.flock(self.other, self.fcntl.LOCK_EX)
                os.write(self.other, b"4242\n")
        return self.fcntl.flock(fd, op)


@pytest.mark.parametrize("recreate", [False, True])
def test_a_lock_file_removed_before_its_flock_is_not_trusted(lockdir, monkeypatch, recreate):
    """The flock race of removable lock files: a run opens the file, its holder removes it,
    then the run's flock succeeds on a file with no name while another run locks the name.
    The run opens the name again: it gets the lock of the file the name leads to, or is
    refused while another run holds that one."""
    path = locks.lock_path("dev:7:97")
    path.write_text("")
    shim = _RemovedBeforeFlock(path, recreate)
    monkeypatch.setattr(locks, "fcntl", shim)
    monkeypatch.setattr(locks, "_BUSY_WAIT_S", 0.05)
    try:
        if recreate:
            with pytest.raises(safety.DeviceLocked, match=r"another ssdlab run \(pid 4242\)"):
                locks.DeviceLock("dev:7:97", "/dev/loop97").acquire()
        else:
            lk = locks.DeviceLock("dev:7:97", "/dev/loop97").acquire()
            assert os.fstat(lk.fd).st_ino == os.stat(path).st_ino
            lk.release()
            assert not path.exists()
    finally:
        if shim.other and shim.other > 0:
            os.close(shim.other)


_CHURN = r"""
import os, sys, time
sys.path.insert(0, sys.argv[1])
from pathlib import Path
from ssdlab.targets.guard import locks, safety
locks.lock_dir = lambda: locks._private_dir(Path(sys.argv[2]))
inside, got, clash = Path(sys.argv[3]), 0, 0
end = time.monotonic() + float(sys.argv[4])
while time.monotonic() < end:
    try:
        lk = locks.DeviceLock("dev:7:96", "/dev/loop96").acquire()
    except safety.DeviceLocked:
        continue
    try:
        os.mkdir(inside)  # only one holder at a time can make it
    except FileExistsError:
        clash += 1
    else:
        got += 1
        os.rmdir(inside)
    lk.release()
print(got, clash)
"""


def test_removed_lock_files_keep_one_holder_at_a_time(lockdir, tmp_path):
    """Runs that take and let go of one device's lock as fast as they can (each removal a
    chance for the flock race) never hold it at once."""
    locks.lock_dir()
    root = os.path.dirname(locks.__file__) + "/../../.."
    ps = [subprocess.Popen([sys.executable, "-c", _CHURN, root, str(lockdir), str(tmp_path / "inside"),
                            "3"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
          for _ in range(3)]
    outs = [p.communicate(timeout=120) for p in ps]
    assert all(p.returncode == 0 for p in ps), [e for _, e in outs]
    got, clash = (sum(int(o.split()[i]) for o, _ in outs) for i in (0, 1))
    assert clash == 0 and got > 10, outs
    assert os.listdir(lockdir) == []
