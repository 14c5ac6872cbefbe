"""Drives on other hosts without a host: the `--drive` syntax, the ssh command ssdlab
builds, what travels on the connection, the agent's answers to a bad or silent client,
and `ssdlab fio-server`, which serves nothing."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import clirun
import pytest
from ssdlab import phase as P
from ssdlab.phase import PhaseResult
from ssdlab.targets import parse_drive
from ssdlab.targets.remote import ssh
from ssdlab.targets.spec import looks_remote, parse_remote
from ssdlab.targets.remote.wire import PROTOCOL, result_doc, result_of

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("spec,user,host,port,path,size,v6", [
    ("h1:/dev/nvme1n1", None, "h1", None, "/dev/nvme1n1", None, False),
    ("lab-07.example.com:2222:/dev/sdb", None, "lab-07.example.com", 2222, "/dev/sdb", None, False),
    ("ops@10.0.0.5:/dev/sdc", "ops", "10.0.0.5", None, "/dev/sdc", None, False),
    ("10.0.0.5:/srv/test.bin:1G", None, "10.0.0.5", None, "/srv/test.bin", 1 << 30, False),
    ("[::1]:8766:/dev/loop3", None, "::1", 8766, "/dev/loop3", None, True),
    ("root@[fe80::1]:/dev/sdc", "root", "fe80::1", None, "/dev/sdc", None, True),
    ("h1:/dev/disk/by-path/pci-0000:01:00.0-nvme-1", None, "h1", None,
     "/dev/disk/by-path/pci-0000:01:00.0-nvme-1", None, False),
])
def test_remote_specs_parse(spec, user, host, port, path, size, v6):
    rs = parse_drive(spec)
    assert rs.remote and rs.real and rs.kind == "remote"
    assert (rs.user, rs.host, rs.port, rs.path, rs.size, rs.ipv6) == (user, host, port, path, size, v6)
    assert rs.local_text == (f"file:{path}:{size}" if size else path)


@pytest.mark.parametrize("spec", ["/dev/sdb", "file:/tmp/x.bin:1G", "nbd:/tmp/s.sock", "sim:tlc-256",
                                  "profiles/x.toml", "h1:dev/sdb", "h_1:/dev/sdb", "-oProxyCommand=x:/dev/sdb",
                                  "-lroot@h1:/dev/sdb"])
def test_local_specs_are_not_remote(spec):
    assert not looks_remote(spec)


@pytest.mark.parametrize("spec,why", [("h1:0:/dev/x", "port"), ("h1:70000:/dev/x", "port"),
                                      ("h1:/dev/../x", "'..'"), ("h1:/dev//x", "'//'"),
                                      ("h1:/dev/x/", "trailing"), ("h1:/dev/$x", "not allowed"),
                                      ("h1:/srv/t.bin", "needs its size"), ("h1:/srv/t.bin:1K", "too small"),
                                      ("-x@h1:/dev/sdb", "another host is")])
def test_malformed_remote_specs_say_what_is_wrong(spec, why):
    with pytest.raises(ValueError, match=why.replace("$", r"\$")):
        parse_remote(spec)


def test_ssh_command_is_batch_mode_with_no_forwarding_and_carries_no_input(monkeypatch):
    monkeypatch.delenv(ssh.SSH_ENV, raising=False)
    monkeypatch.delenv(ssh.REMOTE_ENV, raising=False)
    cmd = ssh.ssh_command("h1", "ops", 2222)
    assert cmd[0] == "ssh" and cmd[-3:] == ["--", "h1", "ssdlab agent"]
    opts = " ".join(cmd)
    for o in ("BatchMode=yes", "ClearAllForwardings=yes", " -T ", " -x ", " -a ", "-p 2222", "-l ops"):
        assert o in opts
    # the user's own ssh command line comes first (its options win); the remote command is fixed
    monkeypatch.setenv(ssh.SSH_ENV, "ssh -F '/home/me/lab conf' -o BatchMode=no")
    monkeypatch.setenv(ssh.REMOTE_ENV, "sudo -n /opt/ssdlab/bin/ssdlab")
    cmd = ssh.ssh_command("h1")
    assert cmd[:5] == ["ssh", "-F", "/home/me/lab conf", "-o", "BatchMode=no"]
    assert cmd[-1] == "sudo -n /opt/ssdlab/bin/ssdlab agent" and "-p" not in cmd
    monkeypatch.setenv(ssh.SSH_ENV, "ssh -F 'unclosed")
    with pytest.raises(ValueError, match="SSDLAB_SSH"):
        ssh.ssh_command("h1")


def test_results_cross_the_wire_whole():
    ph = P.seq_write("fill", stop_bytes=1 << 20)
    r = PhaseResult(ph, {"t_s": np.array([1.0, 2.0]), "iops": np.array([5.0, math.nan])},
                    {"gb": np.zeros(0)}, {"p99_us": math.nan, "edges_us": np.array([1.0, 2.0]),
                                          "counts": np.array([3, 4])}, {"write_bytes": 1048576.0})
    r.purge_method = "blkdiscard"  # type: ignore[attr-defined]
    back = result_of(json.loads(json.dumps(result_doc(r))))
    assert back.phase == ph and back.totals == r.totals and back.purge_method == "blkdiscard"
    assert back.series["t_s"].tolist() == [1.0, 2.0] and math.isnan(back.series["iops"][1])
    assert back.latency["counts"].tolist() == [3, 4] and math.isnan(back.latency["p99_us"])
    assert back.segments["gb"].shape == (0,)


def _agent(*lines: dict, timeout: float = 120) -> list[dict]:
    """`ssdlab agent --drives /dev/null` on pipes, as ssh would start it: each request and
    its answer, then end of input (which ends it)."""
    p = subprocess.Popen([sys.executable, "-m", "ssdlab.cli", "agent", "--drives", "/dev/null"], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT, text=True,
                         env=dict(os.environ, PYTHONPATH=str(ROOT / "python")))
    got = []
    for x in lines:
        p.stdin.write(json.dumps(x) + "\n")
        p.stdin.flush()
        got.append(json.loads(p.stdout.readline()))
    p.stdin.close()
    assert p.wait(timeout=timeout) == 0 and p.stdout.read() == ""
    return got


def test_agent_refuses_what_it_does_not_drive_and_exits_at_end_of_input():
    got = _agent({"op": "hello", "proto": PROTOCOL + 1, "spec": "/dev/null"},
                 {"op": "hello", "proto": PROTOCOL, "spec": "nbd:/tmp/x.sock"},
                 {"op": "hello", "proto": PROTOCOL, "spec": "sim:tlc-256"},
                 {"op": "open", "spec": "/etc/passwd"},
                 {"op": "run", "phase": {"kind": "idle", "seconds": 1}},
                 {"op": "exec", "argv": ["touch", "/tmp/x"]},
                 {"op": "hello", "proto": PROTOCOL, "spec": "/dev/null"})
    assert "protocol" in got[0]["error"] and "same ssdlab version" in got[0]["error"]
    assert all("block device /dev/... or file:PATH:SIZE" in g["error"] for g in got[1:4])
    assert "no drive is open" in got[4]["error"]
    assert got[5] == {"error": "unknown request 'exec'", "type": "value"}
    assert got[6]["type"] == "unsafe" and "not a block device" in got[6]["error"]


def test_fio_server_serves_nothing_and_says_what_to_do():
    for args in ([], ["/dev/sdb", "--destroy-data=/dev/sdb", "--listen", "0.0.0.0", "--port", "8765"], ["--help"]):
        r = clirun.cli("fio-server", *args, timeout=120)
        assert r.returncode == 2 and r.stdout == "" and r.stderr.count("\n") == 1, r.stderr
        assert "--drive THISHOST:/dev/X" in r.stderr and "ssh" in r.stderr
