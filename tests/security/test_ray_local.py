"""The local Ray instance `--ray` starts is its user's alone: its files (logs, session
directories Ray makes mode 0777, the raylet's and object store's sockets) live in a
private directory of its own, never in a shared `$TMPDIR/ray` another user may have made
first; and the token that guards its ports (which listen on every interface) is a new
secret of the run, passed in the environment, never `~/.ray/auth_token` (which Ray writes
mode 0644, readable by anyone who may enter the home directory, and shares with every
other cluster of that user)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from otheruser import as_nobody, needs_other_user, sticky  # noqa: F401 (a fixture)

pytest.importorskip("ray")

START = """
from ssdlab.executor import open_executor
ex = open_executor(ray="local", jobs=1)
print(ex.describe(), flush=True)
ex.close()
"""


@needs_other_user
def test_the_local_instance_keeps_its_files_and_its_token_to_itself(tmp_path, sticky):
    home = tmp_path / "home"
    home.mkdir()
    theirs = sticky / "ray"
    as_nobody("mkdir", "-m", "777", str(theirs))  # made first by another user
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_")}
    env.update(HOME=str(home), TMPDIR=str(sticky), PYTHONPATH=os.pathsep.join(sys.path))
    r = subprocess.run([sys.executable, "-c", START], env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and "a local Ray instance" in r.stdout, r.stderr[-3000:]
    assert not (home / ".ray").exists(), sorted(p.name for p in (home / ".ray").iterdir())
    assert sorted(os.listdir(theirs)) == [], "Ray wrote into another user's directory"
    assert sorted(os.listdir(sticky)) == ["ray"], "the private directory was left behind"


CLEAN = """
import tempfile
tempfile.tempdir = {tmp!r}
from ssdlab.ray_local import LocalInstance
inst = LocalInstance()
print(inst.dir, flush=True)
inst.close()
"""
HOLD = """
import fcntl, os, sys
fd = os.open(sys.argv[1], os.O_RDONLY | os.O_DIRECTORY)
fcntl.flock(fd, fcntl.LOCK_EX)
print("held", flush=True)
sys.stdin.read()
"""


@needs_other_user
def test_a_killed_runs_private_directory_is_removed_by_the_next(tmp_path, sticky):
    """A run killed with SIGKILL cannot remove its private directory (Ray's session logs);
    the next local instance removes it: a directory of this user's, not held by a live
    run, not a link, not made in the last minute. Another user's, a live run's and a
    young one are left alone."""
    old = os.path.getmtime(sticky) - 600

    def made(name: str, *, mine: bool = True, age: float = old) -> str:
        p = sticky / name
        if mine:
            p.mkdir(mode=0o700)
            (p / "r").mkdir()
            (p / "r" / "log").write_text("x")
        else:
            as_nobody("mkdir", "-m", "700", str(p))
        os.utime(p, (age, age))
        return name

    killed = made("ssdlab-ray-killed")
    theirs = made("ssdlab-ray-theirs", mine=False)
    young = made("ssdlab-ray-young", age=os.path.getmtime(sticky))
    live = made("ssdlab-ray-live")
    target = tmp_path / "target"
    target.mkdir()
    (target / "keep").write_text("keep")
    (sticky / "ssdlab-ray-link").symlink_to(target)
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(sticky / live)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_")}
        env.update(PYTHONPATH=os.pathsep.join(sys.path))
        r = subprocess.run([sys.executable, "-c", CLEAN.format(tmp=str(sticky))], env=env, capture_output=True,
                           text=True, timeout=300)
        assert r.returncode == 0, r.stderr[-3000:]
    finally:
        holder.communicate("", timeout=30)
    left = sorted(os.listdir(sticky))
    assert left == sorted([theirs, young, live, "ssdlab-ray-link"]), left
    assert killed not in left
    assert (target / "keep").read_text() == "keep"
