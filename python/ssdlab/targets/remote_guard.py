"""`ssdlab fio-server`: the remote host's half of `--drive HOST:/dev/X` (remote.py).

Run as root on the host that has the drives. For each drive it
1. opens it as a local run would (FioTarget: a block device or file:PATH:SIZE) and, when
   --destroy-data names it, runs the local write checks there (safety.py: consent, not
   mounted, nothing stacked, not in use, not read-only, not the root device) and keeps
   the exclusive claim (O_EXCL: no mount, RAID, LVM or dm can take it meanwhile) and the
   one-run-per-device lock for as long as it serves;
2. publishes its facts (capacity, identity, the I/O engine fio may use here, the verdict)
   as a fio job file in PERMIT_DIR, which a client reads through fio (`--remote-config`);
3. makes the permit `<key>.dev` (a link to the device) only when writing is allowed:
   clients write through that link, so a device that was not checked has no path that
   ssdlab writes to.
Then it runs `fio --server` as its child (which dies with it) and removes the permits
when it stops. A refused device is served read-only, its refusal in the facts (so the
client names the reason). The checks are repeated every few seconds while it serves; a
device that fails them loses its permit (running jobs finish; the next phase is refused).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path
from typing import Any
from urllib.parse import quote

from . import child, fio_job, safety
from .fio import FioTarget
from .remote import FACTS_JOB, PERMIT_DIR, permit_key

RECHECK_S = 2.0
INFO_KEYS = ("name", "kind", "model", "serial", "firmware", "discard", "logical_block",
             "physical_block", "rotational", "capacity", "file")
CHUNK = 240  # < the 256 bytes fio's protocol keeps of a job description


class Served:
    """One drive the guard serves."""

    def __init__(self, spec: str, destroy_data: str | None):
        self.spec = spec
        self.target = FioTarget(spec, destroy_data=destroy_data)  # takes the device lock
        self.path = self.target.path
        self.key = permit_key(self.path)
        self.refused = ""
        self.writable = False
        if destroy_data:
            try:
                self.target.allow_writes()  # the local checks, here; holds O_EXCL on success
                self.writable = True
            except safety.UnsafeTarget as e:
                self.refused = str(e)
        self.dev_info = self.target.info

    def facts(self, engine: str, fio_version: str) -> dict[str, Any]:
        info = {k: v for k, v in self.dev_info.items() if k in INFO_KEYS}
        return {"path": self.path, "kind": self.target.kind, "dev": self.target.dev,
                "capacity": self.target.capacity, "info": info, "engine": engine,
                "fio": fio_version, "writable": self.writable, "refused": self.refused,
                "pid": os.getpid(), "host": os.uname().nodename}

    def recheck(self) -> str:
        """Why the device may no longer be written ("" when it still may): the in-use rules
        again, not counting this guard's own fio server writing it."""
        if not self.writable or self.target.kind != "block":
            return ""
        dev = safety.resolve_block(self.target.dev)
        return safety.in_use(self.path, dev, frozenset(_descendants(os.getpid())))


def _descendants(pid: int) -> set[int]:
    kids: dict[int, list[int]] = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                ppid = int(Path(f"/proc/{d}/stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            kids.setdefault(ppid, []).append(int(d))
    out, todo = {pid}, [pid]
    while todo:
        for k in kids.get(todo.pop(), []):
            if k not in out:
                out.add(k)
                todo.append(k)
    return out


def permit_dir() -> Path:
    if os.geteuid() != 0:
        raise ValueError("ssdlab fio-server runs as root (fio needs it for block devices, and the "
                         f"permits live in {PERMIT_DIR}); run it with sudo")
    d = Path(PERMIT_DIR)
    safety_dir = d.parent
    for p in (safety_dir, d):
        try:
            os.mkdir(p, 0o700)
        except FileExistsError:
            pass
        st = os.lstat(p)
        if not os.path.isdir(p) or os.path.islink(p) or st.st_uid != 0 or st.st_mode & 0o022:
            raise ValueError(f"refusing {p}: not a directory owned by root and writable only by it; "
                             "remove it and start again")
    return d


def clean_stale(d: Path) -> None:
    """Permits of guards that are gone (killed): removed, so they point nowhere."""
    for f in d.glob("*.fio"):
        try:
            pid = int(f.read_text().split("pid ", 1)[1].split(")", 1)[0])
        except (OSError, IndexError, ValueError):
            pid = 0
        if not pid or not os.path.exists(f"/proc/{pid}"):
            for p in (f, f.with_suffix(".dev")):
                try:
                    p.unlink()
                except FileNotFoundError:
                    pass


def facts_job(s: Served, facts: dict) -> str:
    """The facts travel in job descriptions, URL-quoted (fio job files and fio's JSON carry
    that verbatim: no '$', quotes or newlines) and cut in pieces: fio's client/server
    protocol keeps 256 bytes of a description. The jobs do no I/O (null engine)."""
    text = quote(json.dumps(facts, sort_keys=True, separators=(",", ":")), safe="")
    parts = [text[i:i + CHUNK] for i in range(0, len(text), CHUNK)]
    out = [f"; ssdlab fio-server facts for {s.path} (pid {os.getpid()})",
           "[global]", "ioengine=null", "size=4k", "bs=4k", "rw=read"]
    for i, part in enumerate(parts):
        out += ["", f"[{FACTS_JOB}.{i}.{len(parts)}]", f"description={part}"]
    return "\n".join(out) + "\n"


def publish(d: Path, s: Served, engine: str, fio_version: str) -> None:
    job = d / f"{s.key}.fio"
    tmp = d / f".{s.key}.fio.tmp"
    tmp.write_text(facts_job(s, s.facts(engine, fio_version)))
    os.replace(tmp, job)
    link = d / f"{s.key}.dev"
    if s.writable:
        tmp_link = d / f".{s.key}.dev.tmp"
        if os.path.lexists(tmp_link):
            os.unlink(tmp_link)
        os.symlink(s.target.dev, tmp_link)
        os.replace(tmp_link, link)
    elif os.path.lexists(link):
        os.unlink(link)


def withdraw(d: Path, s: Served) -> None:
    for p in (d / f"{s.key}.dev", d / f"{s.key}.fio"):
        try:
            p.unlink()
        except FileNotFoundError:
            pass


def server_arg(listen: str, port: int) -> str:
    if ":" in listen.strip("[]"):
        return f"ip6:{listen.strip('[]')},{port}"
    return f"ip:{listen},{port}" if listen else f",{port}"


def check_port(listen: str, port: int) -> None:
    """fio's server shares its port (SO_REUSEPORT): a second one on a port in use would
    start, and clients would reach either. Refuse a port something listens on."""
    import socket

    addr = listen.strip("[]")
    fam = socket.AF_INET6 if ":" in addr else socket.AF_INET
    with socket.socket(fam, socket.SOCK_STREAM) as sock:
        try:
            sock.bind((addr or "0.0.0.0", port))
        except OSError as e:
            raise ValueError(f"--port {port}: cannot listen on {addr or 'all addresses'} ({e.strerror}); "
                             "stop what uses it (another fio server?) or choose another --port") from None


def serve(specs: list[str], destroy_data: str | None, listen: str, port: int,
          log=print) -> int:
    """Check, publish, run `fio --server` until it exits or we are stopped."""
    if not specs:
        raise ValueError("name the drives to serve, e.g. `ssdlab fio-server /dev/nvme1n1 "
                         "--destroy-data=/dev/nvme1n1`")
    if not 0 < port < 65536:
        raise ValueError(f"--port {port}: must be 1..65535")
    for s in specs:
        if not (s.startswith("/") or s.startswith("file:")):
            raise ValueError(f"'{s}': ssdlab fio-server serves this host's drives: /dev/... or file:PATH:SIZE")
        if s.startswith("/") and not s.startswith("/dev/"):
            raise ValueError(f"'{s}': a block device is /dev/...; a file target is file:PATH:SIZE")
    d = permit_dir()
    check_port(listen, port)
    clean_stale(d)
    fio = fio_job.fio_binary()
    served: list[Served] = []
    proc = None
    try:
        for spec in specs:
            served.append(Served(spec, destroy_data))
        engine, version = fio_job.pick_engine(fio), fio_job.fio_version(fio)
        for s in served:
            publish(d, s, engine, version)
            state = "writable" if s.writable else f"read-only ({s.refused or 'no --destroy-data'})"
            log(f"ssdlab fio-server: {s.path}: {s.target.capacity} bytes, {state}")
        proc = subprocess.Popen([fio, f"--server={server_arg(listen, port)}"],
                                preexec_fn=child.die_with_parent())
        log(f"ssdlab fio-server: fio --server={server_arg(listen, port)} (pid {proc.pid}); "
            "Ctrl-C stops it and withdraws the permits")
        while proc.poll() is None:
            time.sleep(RECHECK_S)
            for s in served:
                why = s.recheck()
                if why:
                    s.writable, s.refused = False, why
                    publish(d, s, engine, version)
                    log(f"ssdlab fio-server: {s.path}: permit withdrawn: {why}")
        return proc.returncode or 0
    finally:
        for s in served:
            withdraw(d, s)
            s.target.close()
        if proc is not None and proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()

