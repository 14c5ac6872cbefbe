"""Drives on other hosts: `--drive HOST[:PORT]:/dev/X` through fio's client/server mode,
with `ssdlab fio-server` (the guard) on 127.0.0.1 and loop devices (root, losetup, fio).
The parsing and fio --client output handling are tested without root."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace
from urllib.parse import unquote

import pytest

from loopdevs import REASON, SIZE, loops, sh  # noqa: F401  (loops: a fixture)
from ssdlab.targets import is_real, is_remote
from ssdlab.targets.remote import (FACTS_JOB, PERMIT_DIR, client_reports, collect_logs,
                                   parse_remote, permit_key)

ROOT = Path(__file__).resolve().parents[2]
needs_root = pytest.mark.skipif(bool(REASON), reason=REASON or "")


# ------------------------------------------------------------------ without root
@pytest.mark.parametrize("spec,host,port,path,v6", [
    ("h1:/dev/nvme1n1", "h1", 8765, "/dev/nvme1n1", False),
    ("lab-07.example.com:9000:/dev/sdb", "lab-07.example.com", 9000, "/dev/sdb", False),
    ("10.0.0.5:/srv/test.bin", "10.0.0.5", 8765, "/srv/test.bin", False),
    ("[::1]:8766:/dev/loop3", "::1", 8766, "/dev/loop3", True),
    ("[fe80::1]:/dev/sdc", "fe80::1", 8765, "/dev/sdc", True),
])
def test_remote_specs_parse(spec, host, port, path, v6):
    assert is_remote(spec) and is_real(spec)
    rs = parse_remote(spec)
    assert (rs.host, rs.port, rs.path, rs.ipv6) == (host, port, path, v6)
    assert rs.client == f"{'ip6' if v6 else 'ip'}:{host},{port}"


@pytest.mark.parametrize("spec", ["/dev/sdb", "file:/tmp/x.bin:1G", "nbd:/tmp/s.sock", "sim:tlc-256",
                                  "profiles/x.toml", "h1:dev/sdb", "h_1:/dev/sdb"])
def test_local_specs_are_not_remote(spec):
    assert not is_remote(spec)


@pytest.mark.parametrize("spec,why", [("h1:0:/dev/x", "port"), ("h1:70000:/dev/x", "port"),
                                      ("h1:/dev/../x", "'..'"), ("h1:/dev//x", "'//'"),
                                      ("h1:/dev/x/", "trailing"), ("h1:/dev/$x", "not allowed")])
def test_malformed_remote_specs_say_what_is_wrong(spec, why):
    with pytest.raises(ValueError, match=why.replace("$", r"\$")):
        parse_remote(spec)


def test_permit_keys_differ_by_path():
    assert permit_key("/dev/sdb") == permit_key("/dev/sdb")
    assert permit_key("/dev/sdb") != permit_key("/dev/disk/by-id/x-sdb")
    assert permit_key("/dev/nvme0n1").startswith("nvme0n1-")


def _entry(name: str, nbytes: int, runtime: int, group: int = 0) -> dict:
    return {"jobname": name, "groupid": group, "error": 0, "hostname": "h1", "port": 8765,
            "job_runtime": runtime, "write": {"io_bytes": nbytes, "total_ios": nbytes // 4096,
                                              "runtime": runtime}}


def test_client_json_becomes_local_reports():
    # fio --client --status-interval=1: one document, the status reports then the final one
    doc = {"client_stats": [_entry("fill", 100 << 20, 1000), _entry("fill", 200 << 20, 2000),
                            _entry("fill", 250 << 20, 2500)]}
    reps = client_reports(doc)
    assert [r["jobs"][0]["write"]["io_bytes"] for r in reps] == [100 << 20, 200 << 20, 250 << 20]
    # two jobs in two groups: each report holds both
    doc = {"client_stats": [_entry("a", 1, 1000), _entry("b", 2, 1000, 1),
                            _entry("a", 3, 1500), _entry("b", 4, 1500, 1)]}
    reps = client_reports(doc)
    assert [[j["write"]["io_bytes"] for j in r["jobs"]] for r in reps] == [[1, 2], [3, 4]]
    assert client_reports({"jobs": [{"jobname": "x"}]}) == [{"jobs": [{"jobname": "x"}]}]
    assert client_reports({"client_stats": []}) == []


def test_logs_sent_back_by_the_server_get_their_local_names(tmp_path):
    for f in ("p1_bw.1.log.127.0.0.1", "p1_iops.2.log.h1", "p1_clat_hist.1.log.h1", "p10_bw.1.log.h1"):
        (tmp_path / f).write_text("1000, 5, 1, 0, 0\n")
    collect_logs(str(tmp_path / "p1"))
    assert sorted(os.listdir(tmp_path)) == ["p10_bw.1.log.h1", "p1_bw.1.log", "p1_clat_hist.1.log",
                                            "p1_iops.2.log"]


def test_facts_survive_fio_description_limits():
    from ssdlab.targets import remote_guard

    served = SimpleNamespace(path="/dev/x")
    facts = {"path": "/dev/x", "capacity": 123, "info": {"model": "M" * 700, "serial": "a b\"c$"}}
    text = remote_guard.facts_job(served, facts)
    parts = {}
    name = None
    for line in text.splitlines():
        if line.startswith(f"[{FACTS_JOB}."):
            name = line.strip("[]")
        elif line.startswith("description="):
            value = line.split("=", 1)[1]
            assert len(value) < 256 and "$" not in value and '"' not in value
            parts[int(name.split(".")[1])] = value
    assert len(parts) > 3
    assert json.loads(unquote("".join(parts[i] for i in sorted(parts)))) == facts


# ------------------------------------------------------------------ with fio --server on 127.0.0.1
def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _listening(host: str, port: int) -> bool:
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as s:
        return s.connect_ex((host, port)) == 0


def _wait_listening(host: str, port: int, proc: subprocess.Popen, want: bool = True,
                    timeout: float = 60) -> None:
    """Until something listens on host:port (or, want=False, nothing does): a condition
    with a generous deadline, not a fixed wait (fio starts slowly on a loaded machine)."""
    deadline = time.monotonic() + timeout
    while _listening(host, port) != want and time.monotonic() < deadline:
        if want and proc.poll() is not None:
            break
        time.sleep(0.1)
    assert _listening(host, port) == want, f"port {port} on {host}: listening is not {want}"


def _wait_gone(path: str, timeout: float = 60) -> None:
    """Until the guard's re-check (every RECHECK_S) has withdrawn the permit `path`."""
    deadline = time.monotonic() + timeout
    while os.path.lexists(path) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not os.path.lexists(path), f"{path} still there after {timeout:g} s"


def _env() -> dict:
    return dict(os.environ, PYTHONPATH=str(ROOT / "python"))


def _cli(*args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ssdlab.cli", *args], capture_output=True, text=True,
                          env=_env(), timeout=timeout, cwd=ROOT)


class Guard:
    """`ssdlab fio-server` on 127.0.0.1 and a free port; stopped (Ctrl-C) at teardown."""

    def __init__(self) -> None:
        self.procs: list[subprocess.Popen] = []

    def start(self, *args: str, listen: str = "127.0.0.1") -> tuple[int, subprocess.Popen]:
        port = _free_port()
        p = subprocess.Popen([sys.executable, "-m", "ssdlab.cli", "fio-server", *args, "--listen",
                              listen, "--port", str(port)], stderr=subprocess.PIPE, text=True,
                             env=_env(), cwd=ROOT, start_new_session=True)
        self.procs.append(p)
        lines = []
        while True:  # ready once it says it started fio --server
            line = p.stderr.readline()
            if not line:
                pytest.fail(f"ssdlab fio-server exited: {''.join(lines)}")
            lines.append(line)
            if "fio --server=" in line:
                break
        p.lines = lines  # type: ignore[attr-defined]
        _wait_listening(listen, port, p)  # and fio listens
        return port, p

    def stop(self, p: subprocess.Popen) -> int:
        if p.poll() is None:
            p.send_signal(signal.SIGINT)
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()
        return p.returncode


@pytest.fixture
def guard():
    g = Guard()
    try:
        yield g
    finally:
        for p in g.procs:
            g.stop(p)


def _runs(db: Path) -> int:
    if not db.exists():
        return 0
    import sqlite3

    with sqlite3.connect(db) as c:
        return c.execute("SELECT COUNT(*) FROM runs").fetchone()[0]


@needs_root
@pytest.mark.realdev
def test_fill_on_a_loop_device_through_fio_server(loops, guard, tmp_path):
    dev, backing = loops.make()
    port, g = guard.start(dev, f"--destroy-data={dev}")
    spec = f"127.0.0.1:{port}:{dev}"
    db = tmp_path / "results.db"
    r = _cli("run", "fill", "--drive", spec, "--db", str(db), "--json")  # no consent here
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and f"--destroy-data={spec}" in r.stderr
    assert _runs(db) == 0
    r = _cli("run", "fill", "--drive", spec, "--destroy-data", dev, "--db", str(db))
    assert r.returncode == 2, r.stderr  # consent must name HOST:PORT:PATH as --drive does
    r = _cli("run", "fill", "--drive", spec, "--destroy-data", spec, "--db", str(db), "--json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["drives"][0]["status"] == "complete" and doc["drives"][0]["metrics"]["avg_mbps"] > 0
    shown = json.loads(_cli("results", "show", str(doc["run_id"]), "--db", str(db), "--json").stdout)
    d = shown["drives"][0]
    ident = d["identity"]
    assert ident["kind"] == "block" and ident["capacity"] == SIZE
    assert ident["extra"]["host"] == "127.0.0.1" and ident["extra"]["name"].startswith("loop")
    assert [p["name"] for p in d["phases"]][:2] == ["purge", "fill"]
    assert d["phases"][0]["totals"]["purge_method_code"] == 8  # remote-trim
    assert d["phases"][1]["totals"]["write_bytes"] == SIZE
    assert os.stat(backing).st_blocks * 512 >= SIZE * 0.95  # the device really was written
    # a timed phase: the per-second logs came back from the server and were parsed
    r = _cli("run", "consistency", "--seconds", "3", "--drive", spec, "--destroy-data", spec,
             "--db", str(db), "--json")
    assert r.returncode == 0, r.stderr
    rid = json.loads(r.stdout)["run_id"]
    shown = json.loads(_cli("results", "show", str(rid), "--db", str(db), "--json").stdout)
    phases = shown["drives"][0]["phases"]
    rnd = next(p for p in phases if p["name"] == "random")
    assert rnd["totals"]["write_ios"] > 0
    import sqlite3

    with sqlite3.connect(db) as c:
        n = c.execute("SELECT s.n FROM series s JOIN phases p ON p.id = s.phase_id "
                      "WHERE p.run_drive_id = (SELECT MAX(id) FROM run_drives) AND p.name = 'random' "
                      "AND s.name = 'iops'").fetchone()[0]
    assert n >= 2
    # stopping the guard withdraws its permits: nothing left to write through
    key = permit_key(dev)
    assert os.path.islink(f"{PERMIT_DIR}/{key}.dev")
    assert guard.stop(g) in (0, 130)
    assert not os.path.lexists(f"{PERMIT_DIR}/{key}.dev")
    assert not os.path.lexists(f"{PERMIT_DIR}/{key}.fio")


@needs_root
@pytest.mark.realdev
def test_mounted_device_is_refused_on_the_remote_host(loops, guard, tmp_path):
    dev, _ = loops.make()
    sh("mkfs.ext4", "-q", "-F", dev)
    loops.mount(dev)
    port, g = guard.start(dev, f"--destroy-data={dev}")
    assert any("read-only" in x and "mounted" in x for x in g.lines)
    spec = f"127.0.0.1:{port}:{dev}"
    db = tmp_path / "results.db"
    r = _cli("run", "fill", "--drive", spec, "--destroy-data", spec, "--db", str(db))
    assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr
    assert "mounted" in r.stderr and "on 127.0.0.1" in r.stderr
    assert _runs(db) == 0
    assert not os.path.lexists(f"{PERMIT_DIR}/{permit_key(dev)}.dev")


@needs_root
@pytest.mark.realdev
def test_served_device_cannot_be_mounted_and_a_new_writer_withdraws_the_permit(loops, guard, tmp_path):
    dev, _ = loops.make()
    port, g = guard.start(dev, f"--destroy-data={dev}")
    spec = f"127.0.0.1:{port}:{dev}"
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    assert sh("mount", dev, str(mnt), check=False).returncode != 0  # held exclusively
    # another program opens it for writing: the guard's re-check withdraws the permit
    w = subprocess.Popen([sys.executable, "-c", "import os,sys,time; fd=os.open(sys.argv[1], os.O_WRONLY); "
                          "print('open', flush=True); time.sleep(120)", dev], stdout=subprocess.PIPE,
                         text=True)
    loops.holders.append(w)
    assert w.stdout.readline().strip() == "open"
    key = f"{PERMIT_DIR}/{permit_key(dev)}.dev"
    _wait_gone(key)
    r = _cli("run", "fill", "--drive", spec, "--destroy-data", spec, "--db", str(tmp_path / "r.db"))
    assert r.returncode == 2 and "open for writing by another process" in r.stderr, r.stderr


@needs_root
@pytest.mark.realdev
def test_bad_host_plain_fio_server_and_unserved_device_are_refused(loops, tmp_path):
    dev, _ = loops.make()
    db = tmp_path / "results.db"
    port = _free_port()  # nothing listens there
    r = _cli("run", "fill", "--drive", f"127.0.0.1:{port}:{dev}", "--db", str(db))
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "cannot reach a fio server" in r.stderr
    r = _cli("run", "fill", "--drive", f"no-such-host.invalid:{dev}", "--db", str(db))
    assert r.returncode == 2 and "cannot reach a fio server" in r.stderr
    r = _cli("run", "fill", "--drive", "127.0.0.1:99999:/dev/x", "--db", str(db))
    assert r.returncode == 2 and "port" in r.stderr
    # a plain fio server (no guard): never written to
    p = subprocess.Popen(["fio", f"--server=ip:127.0.0.1,{port}"], stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    try:
        _wait_listening("127.0.0.1", port, p)  # a fixed 1 s: "cannot reach" on a slow machine
        spec = f"127.0.0.1:{port}:{dev}"
        r = _cli("run", "fill", "--drive", spec, "--destroy-data", spec, "--db", str(db))
        assert r.returncode == 2 and "does not serve" in r.stderr and "ssdlab fio-server" in r.stderr
    finally:
        p.terminate()
        p.wait()
    assert _runs(db) == 0


@needs_root
@pytest.mark.realdev
def test_fleet_runs_drives_on_two_hosts_at_once_each_its_own_run(loops, guard, tmp_path):
    a, _ = loops.make()
    b, _ = loops.make()
    pa, _ = guard.start(a, f"--destroy-data={a}")  # two guards: two "hosts"
    pb, _ = guard.start(b, f"--destroy-data={b}")
    sa, sb = f"127.0.0.1:{pa}:{a}", f"127.0.0.1:{pb}:{b}"
    db = tmp_path / "results.db"
    # one drive without consent: refused before anything runs or is stored
    r = _cli("run", "consistency", "--seconds", "2", "--fleet", "--drive", sa, "--drive", sb,
             "--destroy-data", sa, "--db", str(db))
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and sb in r.stderr, r.stderr
    assert _runs(db) == 0
    r = _cli("run", "consistency", "--seconds", "3", "--fleet", "--drive", sa, "--drive", sb,
             "--destroy-data", f"{sa},{sb}", "--db", str(db), "--json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert [d["drives"][0]["drive"] for d in doc["runs"]] == [sa, sb]
    assert all(d["drives"][0]["status"] == "complete" for d in doc["runs"])
    assert len({d["run_id"] for d in doc["runs"]}) == 2
    import sqlite3

    with sqlite3.connect(db) as c:
        spans = c.execute("SELECT MIN(p.recorded), MAX(p.recorded) FROM phases p JOIN run_drives d "
                          "ON d.id = p.run_drive_id GROUP BY d.run_id").fetchall()
    assert len(spans) == 2
    # at the same time: each run's first phase was stored before the other's last one
    (a0, a1), (b0, b1) = spans
    assert a0 < b1 and b0 < a1


@needs_root
@pytest.mark.realdev
def test_a_writing_job_without_its_permit_writes_nothing_anywhere(loops, monkeypatch):
    """Even if the client believed a drive writable, its jobs name the permit: against a
    plain fio server (no guard, no permit) fio fails and creates no file in its place."""
    from ssdlab import phase as P
    from ssdlab.targets import remote
    from ssdlab.targets.fio import FioFailed

    dev, backing = loops.make()
    port = _free_port()
    spec = f"127.0.0.1:{port}:{dev}"
    facts = {"path": dev, "kind": "block", "dev": dev, "capacity": SIZE, "engine": "psync",
             "writable": True, "info": {"name": "loopX", "discard": True}}
    monkeypatch.setattr(remote, "read_facts", lambda rs, fio: dict(facts))
    p = subprocess.Popen(["fio", f"--server=ip:127.0.0.1,{port}"], stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    permit = f"{PERMIT_DIR}/{permit_key(dev)}.dev"
    try:
        _wait_listening("127.0.0.1", port, p)  # else fio fails for want of a server, not a permit
        assert not os.path.lexists(permit)
        t = remote.RemoteFioTarget(spec, destroy_data=spec)
        try:
            with pytest.raises(FioFailed):
                t.run(P.seq_write("fill", stop_bytes=4 << 20))
        finally:
            t.close()
    finally:
        p.terminate()
        p.wait()
    assert not os.path.lexists(permit)
    assert os.stat(backing).st_blocks == 0  # the device was not written either


def _ipv6_loopback() -> bool:
    try:
        with socket.socket(socket.AF_INET6) as s:
            s.bind(("::1", 0))
        return True
    except OSError:
        return False


@needs_root
@pytest.mark.realdev
def test_ipv6_guard_and_a_killed_guard_leaves_nothing_to_write_through(loops, guard, tmp_path):
    dev, _ = loops.make()
    listen = "::1" if _ipv6_loopback() else "127.0.0.1"
    port, g = guard.start(dev, f"--destroy-data={dev}", listen=listen)
    host = f"[{listen}]" if ":" in listen else listen
    spec = f"{host}:{port}:{dev}"
    r = _cli("run", "fill", "--drive", spec, "--destroy-data", spec, "--plan")
    assert r.returncode == 0, r.stderr
    assert "safety: writing is allowed" in r.stdout and "--client=ip" in r.stdout
    # a port something listens on is refused (fio's server would share it)
    r = _cli("fio-server", dev, "--listen", listen, "--port", str(port))
    assert r.returncode == 2 and "in use" in r.stderr, r.stderr
    # the guard killed outright: its fio server dies with it, the client finds nothing
    os.kill(g.pid, signal.SIGKILL)  # the guard only: its fio server must go by itself
    g.wait()
    _wait_listening(listen, port, g, want=False)
    r = _cli("run", "fill", "--drive", spec, "--destroy-data", spec, "--db", str(tmp_path / "r.db"))
    assert r.returncode == 2 and "cannot reach a fio server" in r.stderr, r.stderr
    # its permit is left behind, and removed by the next guard
    key = f"{PERMIT_DIR}/{permit_key(dev)}"
    assert os.path.lexists(key + ".dev")
    port2, g2 = guard.start(dev)  # read-only this time: no permit at all
    assert not os.path.lexists(key + ".dev") and os.path.exists(key + ".fio")
    spec2 = f"127.0.0.1:{port2}:{dev}"
    r = _cli("run", "fill", "--drive", spec2, "--destroy-data", spec2, "--db", str(tmp_path / "r.db"))
    assert r.returncode == 2 and "read-only" in r.stderr, r.stderr


@needs_root
@pytest.mark.realdev
def test_permit_withdrawn_between_phases_stops_the_run_with_the_reason(loops, guard):
    from ssdlab import phase as P
    from ssdlab.targets import open_target, safety

    dev, _ = loops.make()
    port, _g = guard.start(dev, f"--destroy-data={dev}")
    spec = f"127.0.0.1:{port}:{dev}"
    t = open_target(spec, destroy_data=spec)
    try:
        t.preflight([P.seq_write("fill", stop_bytes=8 << 20)])
        r = t.run(P.seq_write("fill", stop_bytes=8 << 20))
        assert r.totals["write_bytes"] == 8 << 20
        w = subprocess.Popen([sys.executable, "-c", "import os,sys,time; fd=os.open(sys.argv[1], "
                              "os.O_WRONLY); print('open', flush=True); time.sleep(120)", dev],
                             stdout=subprocess.PIPE, text=True)
        loops.holders.append(w)
        assert w.stdout.readline().strip() == "open"
        _wait_gone(f"{PERMIT_DIR}/{permit_key(dev)}.dev")
        with pytest.raises(safety.UnsafeTarget, match="open for writing by another process"):
            t.run(P.seq_write("again", stop_bytes=8 << 20))
    finally:
        t.close()


@needs_root
@pytest.mark.realdev
def test_file_target_on_another_host(guard, tmp_path):
    f = tmp_path / "remote.bin"
    port, _g = guard.start(f"file:{f}:64M", f"--destroy-data={f}")
    assert f.stat().st_size == 64 << 20  # the guard made the file, at its size
    spec = f"127.0.0.1:{port}:{f}"
    db = tmp_path / "results.db"
    r = _cli("run", "fill", "--drive", spec, "--destroy-data", spec, "--db", str(db), "--json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    shown = json.loads(_cli("results", "show", str(doc["run_id"]), "--db", str(db), "--json").stdout)
    d = shown["drives"][0]
    assert d["identity"]["kind"] == "file" and d["identity"]["capacity"] == 64 << 20
    assert d["phases"][0]["totals"]["purge_method_code"] == 6  # none: no trim of a file via fio
    assert d["phases"][1]["totals"]["write_bytes"] == 64 << 20
    assert f.stat().st_size == 64 << 20 and f.stat().st_blocks * 512 >= 60 << 20
