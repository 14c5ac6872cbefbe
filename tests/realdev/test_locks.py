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
    names is refused as a drive given twice."""
    import clirun

    from ssdlab.targets import open_target

    a, b = tmp_path / "a.bin", tmp_path / "b.bin"
    code = ("import sys, time; from ssdlab.targets import open_target; "
            "t = open_target(f'file:{sys.argv[1]}:1M'); t.allow_writes(); "
            "print('held', flush=True); time.sleep(120)")
    for new in (True, False):  # the holder creates a.bin, then finds it
        p = subprocess.Popen([sys.executable, "-c", code, str(a)], stdout=subprocess.PIPE, text=True)
        try:
            assert p.stdout.readline().strip() == "held"
            if new:
                os.link(a, b)
            for name in (b, a):
                with pytest.raises(safety.DeviceLocked, match=f"another ssdlab run \\(pid {p.pid}\\)"):
                    open_target(f"file:{name}:1M")
        finally:
            p.kill()
            p.wait()
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
