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
