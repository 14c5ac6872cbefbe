"""Drives on other hosts over a real ssh connection: sshd in a network namespace of its
own (sshhosts.py) and loop devices (loopdevs.py) as that host's drives. Root, fio,
losetup, OpenSSH and iproute2 needed."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import time
from pathlib import Path

import clirun
import pytest
from loopdevs import REASON, loops, sectors_written, sh, wait_for_new_writes  # noqa: F401  (loops: a fixture)
from ssdlab.store import Store
from ssdlab.targets.guard.purge import CODES
from sshhosts import ROOT, sshhost  # noqa: F401  (a fixture)

pytestmark = [pytest.mark.realdev, pytest.mark.skipif(bool(REASON), reason=REASON or "")]
SIZE = 64 << 20


def cli(host, *args: str, timeout: float = 300, **env: str) -> subprocess.CompletedProcess:
    return clirun.cli(*args, env=host.env(**env), timeout=timeout)


def start(host, *args: str) -> subprocess.Popen:
    return clirun.start(*args, env=host.env())


def runs(db: Path) -> list[tuple]:
    if not db.exists():
        return []
    with sqlite3.connect(db) as c:
        return c.execute("SELECT id, status FROM runs ORDER BY id").fetchall()


def stored(db: Path, run_id: int) -> dict:
    """The run's (only) drive as `results show --json` has it."""
    store = Store(db)
    try:
        d = store.run(run_id)["drives"][0]
        d["phases"] = store.phases(d["id"], with_data=False)
        return d
    finally:
        store.close()


def one_line(r: subprocess.CompletedProcess, status: int = 2) -> str:
    assert r.returncode == status and r.stderr.count("\n") == 1, (r.returncode, r.stderr)
    return r.stderr


def openers(dev: str) -> list[int]:
    """Processes holding `dev` open (fio, the agent's exclusive claim)."""
    real, pids = os.path.realpath(dev), []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            fds = os.listdir(f"/proc/{pid}/fd")
        except OSError:
            continue
        for fd in fds:
            try:
                if os.readlink(f"/proc/{pid}/fd/{fd}") == real:
                    pids.append(int(pid))
                    break
            except OSError:
                continue
    return pids


def wait_unused(dev: str, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while openers(dev) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not openers(dev), f"{dev} still open by {openers(dev)} after {timeout:g} s"


def test_fill_over_ssh_stores_the_run_and_consent_names_the_remote_drive(sshhost, loops, tmp_path):
    dev, backing = loops.make(SIZE)
    sshhost.allow(dev)
    spec, db = f"lab1:{dev}", tmp_path / "r.db"
    msg = one_line(cli(sshhost, "run", "fill", "--drive", spec, "--db", str(db)))
    assert f"--destroy-data={spec}" in msg
    one_line(cli(sshhost, "run", "fill", "--drive", spec, "--destroy-data", dev, "--db", str(db)))
    assert runs(db) == [] and os.stat(backing).st_blocks == 0
    r = cli(sshhost, "run", "fill", "--drive", spec, "--destroy-data", spec, "--db", str(db), "--json")
    assert r.returncode == 0, r.stderr
    rid = json.loads(r.stdout)["run_id"]
    d = stored(db, rid)
    ident = d["identity"]
    assert d["status"] == "complete" and ident["kind"] == "block" and ident["capacity"] == SIZE
    assert ident["extra"]["host"] == "lab1" and ident["extra"]["name"].startswith("loop")
    assert ident["extra"]["remote_uid"] == 0 and ident["extra"]["remote_path"] == dev
    assert [p["name"] for p in d["phases"]] == ["purge", "fill"]
    assert d["phases"][0]["totals"]["purge_method_code"] == CODES["blkdiscard"]  # decided on that host
    assert d["phases"][1]["totals"]["write_bytes"] == SIZE and d["metrics"]["avg_mbps"] > 0
    assert os.stat(backing).st_blocks * 512 >= SIZE * 0.95  # the device really was written
    with sqlite3.connect(db) as c:  # the per-second series came back through the connection
        assert c.execute("SELECT COUNT(*) FROM series s JOIN phases p ON p.id = s.phase_id "
                         "WHERE p.name = 'fill' AND s.axis = 'time' AND s.name = 'mbps' AND s.n >= 1").fetchone()[0] == 1
    wait_unused(dev)  # the agent let go of the device when the run ended


def test_refusals_on_the_drive_host_come_back_as_one_line(sshhost, loops, tmp_path):
    db = tmp_path / "r.db"
    mounted, _ = loops.make(SIZE)
    sh("mkfs.ext4", "-q", "-F", mounted)
    loops.mount(mounted)
    sshhost.allow(mounted)
    spec = f"lab1:{mounted}"
    msg = one_line(cli(sshhost, "run", "fill", "--drive", spec, "--destroy-data", spec, "--db", str(db)))
    assert msg.startswith(f"ssdlab: error: refusing {spec}: mounted") and "unmount it first" in msg
    held, _ = loops.make(SIZE)
    loops.hold_exclusive(held)
    sshhost.allow(held)
    spec = f"lab1:{held}"
    msg = one_line(cli(sshhost, "run", "fill", "--drive", spec, "--destroy-data", spec, "--db", str(db)))
    assert f"refusing {spec}: it is in use" in msg
    # a path the host does not list: the one refusal, whether it exists or not; one it
    # lists: why it cannot be tested
    msg = one_line(cli(sshhost, "run", "fill", "--drive", "lab1:/dev/ssdlab-none", "--db", str(db)))
    assert "refusing lab1:/dev/ssdlab-none: this host's ssdlab agent may not test it" in msg
    sshhost.allow("/dev/ssdlab-none")
    msg = one_line(cli(sshhost, "run", "fill", "--drive", "lab1:/dev/ssdlab-none", "--db", str(db)))
    assert "lab1:/dev/ssdlab-none" in msg and "No such file" in msg
    assert runs(db) == []
    # no host, no key, no ssdlab there: why, and the command that shows it
    msg = one_line(cli(sshhost, "run", "fill", "--drive", f"{sshhost.local}:{held}", "--db", str(db)))
    assert "cannot run ssdlab on" in msg and "ssh: connect to host" in msg and "--help'` works" in msg
    msg = one_line(cli(sshhost, "run", "fill", "--drive", f"lab1:{held}", "--db", str(db),
                       SSDLAB_SSH=f"ssh -F {sshhost.config_without_key()}"))
    assert "cannot run ssdlab on" in msg and "Permission denied (publickey)" in msg
    msg = one_line(cli(sshhost, "run", "fill", "--drive", f"lab1:{held}", "--db", str(db),
                       SSDLAB_REMOTE_COMMAND="/nonexistent/ssdlab"))
    assert "ssdlab is not installed" in msg and "SSDLAB_REMOTE_COMMAND" in msg
    assert runs(db) == []


def test_a_killed_client_leaves_nothing_writing_on_the_drive_host(sshhost, loops, tmp_path):
    dev, _ = loops.make(SIZE)
    sshhost.allow(dev)
    spec = f"lab1:{dev}"
    p = start(sshhost, "run", "consistency", "--seconds", "600", "--drive", spec, "--destroy-data", spec,
              "--db", str(tmp_path / "r.db"))
    with clirun.reaped(p):
        wait_for_new_writes(dev, p)
        assert openers(dev)
        os.kill(p.pid, signal.SIGKILL)  # no cleanup of its own: ssh dies with it
        p.wait()
    wait_unused(dev)  # fio and the agent are gone on the drive host
    before = sectors_written(dev)
    r = cli(sshhost, "run", "fill", "--drive", spec, "--destroy-data", spec, "--db", str(tmp_path / "r.db"))
    assert r.returncode == 0, r.stderr  # the device lock went with the agent
    assert sectors_written(dev) > before


def test_ctrl_c_keeps_the_partial_phase_and_a_dead_agent_is_one_line(sshhost, loops, tmp_path):
    dev, _ = loops.make(SIZE)
    sshhost.allow(dev)
    spec, db = f"lab1:{dev}", tmp_path / "r.db"
    p = start(sshhost, "run", "consistency", "--seconds", "600", "--drive", spec, "--destroy-data", spec,
              "--db", str(db))
    wait_for_new_writes(dev, p)
    p.send_signal(signal.SIGINT)  # the agent stops fio and sends back what it recorded
    _out, err = p.communicate(timeout=120)
    assert p.returncode == 130, err
    assert runs(db)[-1][1] == "interrupted"
    with sqlite3.connect(db) as c:
        assert c.execute("SELECT COUNT(*) FROM phases WHERE status = 'partial'").fetchone()[0] == 1
    wait_unused(dev)
    # the agent killed on the drive host during a phase: the run fails with one line, the cause
    p = start(sshhost, "run", "consistency", "--seconds", "600", "--drive", spec, "--destroy-data", spec,
              "--db", str(db))
    wait_for_new_writes(dev, p)
    agents = [pid for pid in openers(dev) if b"agent" in Path(f"/proc/{pid}/cmdline").read_bytes()]
    assert len(agents) == 1
    os.kill(agents[0], signal.SIGKILL)
    _out, err = p.communicate(timeout=120)
    assert p.returncode == 1 and err.count("\n") == 1, err
    assert f"RemoteFailed: drive {spec}: the connection to ssdlab on lab1 ended during phase" in err
    assert "the agent on that host was killed" in err
    assert "fio --client" not in err and not err.rstrip().endswith("}")
    assert runs(db)[-1][1] == "failed"
    wait_unused(dev)  # its fio died with it


def test_fleet_refuses_one_drive_by_two_names_and_runs_two_drives_at_once(sshhost, loops, tmp_path):
    a, _ = loops.make(SIZE)
    b, _ = loops.make(SIZE)
    sshhost.allow(a, b)
    db = tmp_path / "r.db"
    sa = f"lab1:{a}"
    for fleet, other in ((["--fleet"], f"root@[{sshhost.addr6}]:22:{a}"), ([], a)):  # by address; here
        msg = one_line(cli(sshhost, "run", "fill", *fleet, "--drive", sa, "--drive", other,
                           "--destroy-data", f"{sa},{other}", "--db", str(db)))
        assert f"refusing {other}: this run already uses it (as {sa})" in msg
    assert runs(db) == []
    sa, sb = f"lab1:{a}", f"{sshhost.addr}:{b}"
    r = cli(sshhost, "run", "fill", "--fleet", "--drive", sa, "--drive", sb, "--destroy-data", f"{sa},{sb}",
            "--db", str(db), "--json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert [d["drives"][0]["drive"] for d in doc["runs"]] == [sa, sb]
    assert all(d["drives"][0]["status"] == "complete" for d in doc["runs"])
    assert len({d["run_id"] for d in doc["runs"]}) == 2


def test_file_target_and_plan_on_another_host(sshhost, tmp_path):
    f = tmp_path / "remote.bin"
    sshhost.allow(f"file:{f}:64M")
    spec, db = f"lab1:{f}:64M", tmp_path / "r.db"
    r = cli(sshhost, "run", "fill", "--drive", spec, "--destroy-data", spec, "--plan")
    assert r.returncode == 0 and "# safety: writing is allowed" in r.stdout, r.stderr
    assert "over ssh" in r.stdout and not f.exists()
    r = cli(sshhost, "run", "fill", "--drive", spec, "--destroy-data", spec, "--db", str(db), "--json")
    assert r.returncode == 0, r.stderr
    rid = json.loads(r.stdout)["run_id"]
    d = stored(db, rid)
    assert d["identity"]["kind"] == "file" and d["identity"]["capacity"] == 64 << 20
    assert d["phases"][1]["totals"]["write_bytes"] == 64 << 20
    assert f.stat().st_size == 64 << 20 and f.stat().st_blocks * 512 >= 60 << 20
