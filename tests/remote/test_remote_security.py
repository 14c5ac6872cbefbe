"""Who can reach a drive on another host while ssdlab drives it: only the user whose ssh
key the drive host accepts. An unprivileged user of either machine and a machine on the
drive host's network try what fio's server allowed (a job with `exec_prerun` and a
`filename` of another device, sent to fio's port) and what ssh allows without a key;
nothing runs and nothing is written. Root, fio, losetup, OpenSSH and iproute2 needed."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import clirun
import pytest
from loopdevs import REASON, loops, wait_for_new_writes  # noqa: F401  (loops: a fixture)
from sshhosts import ROOT, sshhost  # noqa: F401  (a fixture)

pytestmark = [pytest.mark.realdev, pytest.mark.skipif(bool(REASON), reason=REASON or "")]
SIZE = 64 << 20
OLD_FIO_PORT = 8765


def tree(pid: int) -> set[int]:
    """`pid` and its descendants."""
    kids: dict[int, list[int]] = {}
    for d in filter(str.isdigit, os.listdir("/proc")):
        try:
            ppid = int(Path(f"/proc/{d}/stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        kids.setdefault(ppid, []).append(int(d))
    out, todo = {pid}, [pid]
    while todo:
        for k in kids.get(todo.pop(), []):
            out.add(k)
            todo.append(k)
    return out


def agent_of(dev: str) -> int:
    """The agent holding `dev` on the drive host."""
    real = os.path.realpath(dev)
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if b"agent" not in Path(f"/proc/{pid}/cmdline").read_bytes():
                continue
            if any(os.readlink(f"/proc/{pid}/fd/{fd}") == real for fd in os.listdir(f"/proc/{pid}/fd")):
                return int(pid)
        except OSError:
            continue
    raise AssertionError(f"no agent holds {dev}")


def run(*cmd: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(list(cmd), capture_output=True, text=True, timeout=120, cwd=cwd)


def test_nobody_and_another_network_can_neither_run_a_command_nor_write(sshhost, loops, tmp_path):
    dev, _ = loops.make(SIZE)
    sshhost.allow(dev)
    victim, victim_file = loops.make(SIZE)  # another drive of the host, never named by the run
    before = os.urandom(1 << 20)
    with open(victim_file, "r+b") as fh:
        fh.write(before)
    pub = Path(tempfile.mkdtemp(prefix="ssdlab-attack-"))  # readable by nobody
    os.chmod(pub, 0o755)
    marks = [pub / f"ran-{i}" for i in range(3)]
    job = pub / "attack.fio"  # what got root through `ssdlab fio-server`
    job.write_text(f"[attack]\nexec_prerun=touch {marks[0]}\nfilename={victim}\nrw=write\nbs=4k\n"
                   "size=1m\ndirect=1\n")
    os.chmod(job, 0o644)
    spec = f"lab1:{dev}"
    p = subprocess.Popen([sys.executable, "-m", "ssdlab.cli", "run", "consistency", "--seconds", "600",
                          "--drive", spec, "--destroy-data", spec, "--db", str(tmp_path / "r.db")],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=sshhost.env(), cwd=ROOT)
    try:
        wait_for_new_writes(dev, p)  # the run writes its drive now
        # nothing listens on the drive host but its sshd, and nothing of the run listens here
        lines = sshhost.listening()
        assert lines and all(x.split()[0] == "tcp" and x.split()[4].endswith(":22") for x in lines), lines
        mine = tree(p.pid)
        here = subprocess.run(["ss", "-Htulnp"], capture_output=True, text=True).stdout.splitlines()
        assert not [x for x in here if any(f"pid={pid}," in x for pid in mine)]
        other_ns, addr = sshhost.attacker()
        in_other = ["nsenter", f"--net=/run/netns/{other_ns}"]
        nobody = ["runuser", "-u", "nobody", "--"]
        # fio's old port: refused, from this host as nobody and from another network
        for cmd in (nobody + ["fio", f"--client={sshhost.addr},{OLD_FIO_PORT}", str(job)],
                    in_other + ["fio", f"--client={addr},{OLD_FIO_PORT}", str(job)]):
            r = run(*cmd, cwd=pub)  # fio's client writes <job>.prerun.txt where it runs
            assert r.returncode != 0 and "Connection refused" in r.stdout + r.stderr, (cmd, r.stdout, r.stderr)
        # ssh without an authorized key: no command runs
        noprompt = ["-o", "BatchMode=yes", "-o", "StrictHostKeyChecking=no", "-o", "UserKnownHostsFile=/dev/null"]
        for cmd in (nobody + ["ssh", *noprompt, f"root@{sshhost.addr}", f"touch {marks[1]}"],
                    in_other + ["ssh", *noprompt, "-F", str(sshhost.config_without_key()), f"root@{addr}",
                                f"touch {marks[2]}"]):
            r = run(*cmd)
            assert r.returncode == 255 and "Permission denied" in r.stderr, (cmd, r.stderr)
        # the agent has no address at all: its pipes are sshd's, out of nobody's reach
        agent = agent_of(dev)
        r = run(*nobody, "sh", "-c", f'echo \'{{"op": "run"}}\' > /proc/{agent}/fd/0')
        assert r.returncode != 0 and "Permission denied" in r.stderr, r.stderr
        assert p.poll() is None  # the run went on undisturbed
    finally:
        p.send_signal(signal.SIGINT)
        p.communicate(timeout=120)
        shutil.rmtree(pub, ignore_errors=True)
    assert p.returncode == 130
    assert not [m for m in marks if m.exists()]
    with open(victim_file, "rb") as fh:
        assert fh.read(len(before)) == before


def test_a_key_restricted_to_the_agent_runs_tests_and_nothing_else(sshhost, loops, tmp_path):
    """authorized_keys `restrict,command="ssdlab agent --drives /dev/X"` (docs/real-drives-remote.md
    "Security model"): sshd runs the agent whatever is asked, and the agent tests the
    drives its command line lists and nothing else, whatever the client consents to."""
    dev, _ = loops.make(SIZE)
    other, other_file = loops.make(SIZE)
    sshhost.restrict_agent(f"--drives {dev}")
    env = sshhost.env(SSDLAB_REMOTE_COMMAND="ignored")
    spec = f"lab1-agent-only:{dev}"
    r = clirun.cli("run", "fill", "--drive", spec, "--destroy-data", spec, "--db", str(tmp_path / "r.db"), env=env)
    assert r.returncode == 0, r.stderr
    spec = f"lab1-agent-only:{other}"  # consent given here, but not the host's
    r = clirun.cli("run", "fill", "--drive", spec, "--destroy-data", spec, "--db", str(tmp_path / "r.db"), env=env)
    assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr
    assert f"refusing {spec}: this host's ssdlab agent may not test it (not in --drives)" in r.stderr
    f = tmp_path / "over-ssh.bin"  # a file target is a drive like any other: not listed, refused
    spec = f"lab1-agent-only:{f}:64M"
    r = clirun.cli("run", "fill", "--drive", spec, "--destroy-data", spec, "--db", str(tmp_path / "r.db"), env=env)
    assert r.returncode == 2 and "may not test it" in r.stderr and not f.exists(), r.stderr
    assert os.stat(other_file).st_blocks == 0
    mark = tmp_path / "ran"
    r = subprocess.run(["ssh", "-F", str(sshhost.config), "-o", "BatchMode=yes", "lab1-agent-only",
                        f"touch {mark}"], capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=120)
    assert not mark.exists()  # the agent ran instead, found no request and exited


def test_the_restricted_keys_holder_writing_its_own_requests_reaches_only_the_listed_drive(sshhost, loops, tmp_path):
    """The holder of the restricted key speaks the protocol itself (no ssdlab client, no
    --destroy-data check on its side): a file anywhere, another drive of the host, with any
    consent it likes, are refused by the agent and stay as they were."""
    dev, _ = loops.make(SIZE)
    other, other_file = loops.make(SIZE)
    sshhost.restrict_agent(f"--drives {dev}")
    planted = tmp_path / "planted"
    planted.write_bytes(os.urandom(64 << 10))
    before = planted.read_bytes()
    cron = tmp_path / "cron.d"
    cron.mkdir()
    write = {"op": "run", "phase": {"kind": "io", "read_pct": 0, "pattern": "seq", "block_size": 65536,
                                    "stop_bytes": 65536}}
    ssh = ["ssh", "-F", str(sshhost.config), "-o", "BatchMode=yes", "lab1-agent-only"]
    for spec, consent in ((f"file:{planted}:64K", None), (f"file:{planted}:64K", f"file:{planted}:64K"),
                          (f"file:{cron}/job:64K", str(cron / "job")), (other, other), ("/dev/../dev/" + other[5:], other)):
        answers, r = clirun.converse(ssh, [{"op": "hello", "proto": 1, "spec": spec},
                                           {"op": "open", "spec": spec, "destroy_data": consent}, write])
        assert answers[0]["type"] == answers[1]["type"] == "unsafe", (spec, answers, r.stderr)
        assert answers[2] == {"error": "no drive is open on this connection", "type": "value"}
    assert planted.read_bytes() == before and not list(cron.iterdir())
    assert os.stat(other_file).st_blocks == 0
    # the listed drive: the host's consent, whatever the client says
    answers, r = clirun.converse(ssh, [{"op": "open", "spec": dev, "destroy_data": None}, write])
    assert any("result" in a for a in answers), (answers, r.stderr)  # its close may race the end of input
