"""Helpers of the `ssdlab serve` / `--drive nbd:` tests: the ssdlab command in a
subprocess, a served simulated drive in the background, a plain nbdkit export, waiting
for a socket."""

from __future__ import annotations

import hashlib
import json
import shutil
import signal
import subprocess
import time
from contextlib import contextmanager
from pathlib import Path

import clirun
import pytest

ROOT = Path(__file__).resolve().parents[1]
TINY = ["user_capacity_gb=0.25", "nand.channels=1", "nand.blocks_per_plane=16",
        "slc.dynamic_max_gb=0.05", "slc.dynamic_share=1.0"]


def why_not() -> str | None:
    for tool in ("nbdkit", "nbdinfo", "fio"):
        if not shutil.which(tool):
            return f"{tool} not installed (tools/sysdeps.sh test installs it)"
    if not (ROOT / "target/release/libssdsim_nbd.so").is_file():
        return "the nbdkit plugin is not built (make build)"
    return None


needs_nbd = pytest.mark.skipif(why_not() is not None, reason=str(why_not()))


def cli(*args: str, check: bool = True, timeout: float = 600) -> subprocess.CompletedProcess:
    return clirun.cli(*args, check=check, timeout=timeout)


@contextmanager
def served(tmp_path: Path, sets: list[str], db: Path, sock: Path | None = None, extra: tuple[str, ...] = ()):
    """`ssdlab serve` in the background; yields (socket, end) where end() stops it and
    returns its final JSON document."""
    sock = sock or tmp_path / "drive.sock"
    cmd = [*clirun.COMMAND, "serve", "sim:sn520-128", "--socket", str(sock),
           "--db", str(db), "--json", *(x for s in sets for x in ("--set", s)), *extra]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    done: dict = {}

    def end() -> dict:
        if not done:
            proc.send_signal(signal.SIGINT)
            out, err = proc.communicate(timeout=60)
            lines = [json.loads(x) for x in out.splitlines() if x.startswith("{")]
            assert proc.returncode == 0, f"serve exited {proc.returncode}: {err[-2000:]}"
            done.update(lines[-1])
        return done

    try:
        ready = json.loads(proc.stdout.readline() or "{}")
        assert ready.get("event") == "ready", f"serve did not start: {proc.stderr.read() if proc.poll() is not None else ''}"
        assert ready["socket"] == str(sock)
        yield sock, end
    finally:
        if proc.poll() is None:
            end()


@contextmanager
def nbdkit_export(sock: Path, *plugin_args: str):
    """A plain nbdkit export (not ssdlab's), e.g. `file IMAGE` or `memory 64M`."""
    p = subprocess.Popen(["nbdkit", "--foreground", "-U", str(sock), *plugin_args])
    try:
        wait_for(lambda: accepts(sock), "nbdkit's socket")
        yield p
    finally:
        p.terminate()
        p.wait(10)


def wait_for(cond, what: str, timeout: float = 60) -> None:
    """A condition with a generous deadline, not a fixed count of short waits (a tool
    starts slowly on a loaded machine)."""
    deadline = time.monotonic() + timeout
    while not cond() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert cond(), f"{what}: not ready after {timeout:g} s"


def accepts(sock: Path) -> bool:
    import socket

    with socket.socket(socket.AF_UNIX) as s:
        return s.connect_ex(str(sock)) == 0


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def one_line_exit_2(r: subprocess.CompletedProcess, *words: str) -> str:
    """The refusal contract: exit 2, one line on stderr, naming what is wrong."""
    err = r.stderr.strip()
    assert r.returncode == 2, (r.returncode, r.stdout[-1000:], r.stderr[-2000:])
    assert len(err.splitlines()) == 1 and all(w in err for w in words), err
    return err
