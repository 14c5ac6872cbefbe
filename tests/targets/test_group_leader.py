"""A command ssdlab starts under a group leader ends with ssdlab, grandchildren included, even
when ssdlab is killed with SIGKILL (an emulated NVMe VM: vng forks virtme-run, which forks
QEMU); a parent-death signal alone reaches only the child."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from ssdlab.serve import nvme_vm
from ssdlab.targets import group_leader

# the owner (ssdlab's part): starts a shell that forks a long sleep, says the sleep's pid,
# and waits to be killed
OWNER = textwrap.dedent("""
    import subprocess, sys, time
    from ssdlab.targets import child, group_leader
    cmd = ["sh", "-c", "sleep 300 & echo $! > " + sys.argv[2] + "; wait"]
    if sys.argv[1] == "leader":
        cmd = group_leader.command(cmd)
    subprocess.Popen(cmd, start_new_session=True, preexec_fn=child.die_with_parent())
    time.sleep(300)
""")


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def _grandchild_after_owner_killed(tmp_path: Path, how: str) -> int:
    """The sleep's pid, 3 s after its owner was SIGKILLed (0: the sleep never started)."""
    said = tmp_path / f"{how}.pid"
    owner = subprocess.Popen([sys.executable, "-c", OWNER, how, str(said)])
    try:
        end = time.monotonic() + 60
        while not (said.exists() and said.read_text().strip()) and time.monotonic() < end:
            time.sleep(0.05)
        pid = int(said.read_text())
    finally:
        owner.send_signal(signal.SIGKILL)
        owner.wait()
    end = time.monotonic() + 3
    while _alive(pid) and time.monotonic() < end:
        time.sleep(0.05)
    return pid


def test_a_grandchild_ends_with_its_sigkilled_owner_only_under_the_group_leader(tmp_path):
    # without the leader, the parent-death signal ends the shell and the sleep stays
    alive = {}
    for how in ("leader", "plain"):
        pid = _grandchild_after_owner_killed(tmp_path, how)
        alive[how] = _alive(pid)
        if alive[how]:
            os.kill(pid, signal.SIGKILL)
    assert alive == {"leader": False, "plain": True}


def test_the_leader_passes_on_the_commands_exit_status():
    run = lambda *cmd: subprocess.run(group_leader.command(list(cmd)), start_new_session=True).returncode  # noqa: E731
    assert run("sh", "-c", "exit 3") == 3
    assert run("sh", "-c", "kill -TERM $$") == 128 + signal.SIGTERM


def test_the_leader_refuses_to_run_in_its_owners_process_group():
    r = subprocess.run(group_leader.command(["true"]), capture_output=True, text=True)
    assert r.returncode == 2 and "process group of its own" in r.stderr


@pytest.mark.parametrize("acc", ["tcg", "kvm"])
def test_the_vm_starts_under_the_group_leader(acc):
    argv = nvme_vm.launch(["vng", "--run"], acc)
    assert argv[argv.index("-m") + 1] == "ssdlab.targets.group_leader"
    assert argv[-2:] == ["vng", "--run"]
