"""nbdkit with the ssdsim plugin (crates/ssdsim-nbd): where the plugin is, the command
line, starting it and knowing it is ready (the marker on its socket: served/marker.py)."""

from __future__ import annotations

import errno
import ipaddress
import os
import re
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

from ..errors import printable

INSTALL_HINT = "install it with `apt-get install nbdkit` (Debian/Ubuntu), or run `make sysdeps`"
PLUGIN_NAME = "libssdsim_nbd.so"
THREADS = 64  # requests in flight per connection (nbdkit's default is 16)
# what one export takes, whoever connects: the plugin holds at most 256 MiB of requests
# (crates/ssdsim-nbd), and these bound what nbdkit reads before it gets there
MAX_CONNECTIONS = 64  # the most jobs a test of ssdlab runs at once (AS SSD's 64 threads)
MAX_REQUEST = 16 << 20  # the largest request a test of ssdlab sends (AS SSD's sequential block)
LAST_LINES = 6  # what is kept of nbdkit's log when it fails: its last lines (an error may take several)
LAST_CHARS = 1500  # ... and at most this much of them (the error's line stays under errors.MAX_LINE)


def nbdkit_binary() -> str:
    p = shutil.which("nbdkit")
    if not p:
        raise ValueError(f"nbdkit is not installed (ssdlab serve exports drives through it): {INSTALL_HINT}")
    return p


def plugin_path() -> Path:
    """The built plugin: $SSDLAB_NBD_PLUGIN, or target/release of this source tree."""
    env = os.environ.get("SSDLAB_NBD_PLUGIN")
    if env:
        p = Path(env)
    else:
        p = Path(__file__).resolve().parents[3] / "target" / "release" / PLUGIN_NAME
    if not p.is_file():
        raise ValueError(f"the nbdkit plugin {p} is not built: run `make build` "
                         "(or set SSDLAB_NBD_PLUGIN to libssdsim_nbd.so)")
    return p


def parse_tcp(hostport: str) -> tuple[str, int]:
    host, sep, port = hostport.rpartition(":")
    if not sep or not re.fullmatch(r"[0-9]+", port):
        raise ValueError(f"--tcp {hostport}: expected HOST:PORT, e.g. --tcp 127.0.0.1:10809")
    if not 0 < int(port) < 65536:
        raise ValueError(f"--tcp {hostport}: port {port} is out of range; give 1 to 65535, e.g. --tcp 127.0.0.1:10809")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]  # [IPv6]
    elif any(c in host for c in ":[]"):
        raise ValueError(f"--tcp {hostport}: write an IPv6 address in brackets, e.g. --tcp [::1]:10809")
    if not host or not re.fullmatch(r"[A-Za-z0-9.:%_-]+", host):
        raise ValueError(f"--tcp {hostport}: give the address to listen on, e.g. --tcp 127.0.0.1:10809 "
                         "(this machine only)")
    return host, int(port)


def check_tcp(tcp: tuple[str, int]) -> None:
    """The address is this machine's and the port is free (nbdkit would fail to start)."""
    host, port = tcp
    shown = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    try:
        addrs = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except (socket.gaierror, UnicodeError) as e:
        raise ValueError(f"--tcp {shown}: cannot resolve '{host}' ({e.args[-1]}); give an address "
                         "of this machine, e.g. 127.0.0.1") from None
    for family, kind, proto, _, addr in addrs:
        with socket.socket(family, kind, proto) as s:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                s.bind(addr)
            except OSError as e:
                why = {errno.EADDRINUSE: "the port is in use; choose another",
                       errno.EADDRNOTAVAIL: "not an address of this machine",
                       errno.EACCES: "ports below 1024 need root; choose another"}.get(
                    e.errno or 0, e.strerror or str(e))
                raise ValueError(f"--tcp {shown}: cannot listen there: {why}") from None


def is_loopback(host: str) -> bool:
    try:
        return all(ipaddress.ip_address(str(a[4][0]).split("%")[0]).is_loopback
                   for a in socket.getaddrinfo(host, None, type=socket.SOCK_STREAM))
    except (OSError, ValueError, UnicodeError):
        return False


def command(*, profile: Path, sets: list[str], seed: int, data: Path, stats: Path,
            socket: Path | None, tcp: tuple[str, int] | None, pidfile: Path,
            interval_s: float = 1.0) -> list[str]:
    cmd = [nbdkit_binary(), "--foreground", "--exit-with-parent", "-t", str(THREADS),
           "-P", str(pidfile), "--filter=blocksize-policy", "--filter=limit"]
    if tcp:
        cmd += ["-i", tcp[0], "-p", str(tcp[1])]
    else:
        cmd += ["-U", str(socket)]
    cmd += [str(plugin_path()), f"profile={profile}", f"seed={seed}", f"data={data}",
            f"stats={stats}", f"interval={interval_s}",
            # more clients are refused; a larger request is answered EINVAL, never passed on
            f"limit={MAX_CONNECTIONS}", f"blocksize-maximum={MAX_REQUEST}", "blocksize-error-policy=error"]
    cmd += [f"set={s}" for s in sets]
    return cmd


def start(cmd: list[str], pidfile: Path, log: Path, timeout_s: float = 300.0) -> subprocess.Popen:
    """Start nbdkit; return once it accepts connections (it writes its pidfile then).
    ValueError with nbdkit's own last words if it stops first."""
    with open(log, "wb") as err:
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=err, stderr=err,
                                start_new_session=True)
    deadline = time.monotonic() + timeout_s
    while not (pidfile.exists() and pidfile.stat().st_size > 0):
        if proc.poll() is not None:
            raise ValueError(f"nbdkit stopped before serving: {last_words(log) or f'exit {proc.returncode}'}")
        if time.monotonic() > deadline:
            stop(proc)
            raise RuntimeError(f"nbdkit did not start serving within {timeout_s:.0f} s")
        time.sleep(0.05)
    return proc


def last_words(log: Path) -> str:
    """The last LAST_LINES non-blank lines of nbdkit's log (read from its end only), one line
    joined by " / ", at most LAST_CHARS (its end kept), control characters shown as '?';
    "" when there are none."""
    try:
        with open(log, "rb") as f:
            f.seek(max(0, os.fstat(f.fileno()).st_size - 16 * LAST_CHARS))
            data = f.read(16 * LAST_CHARS)
    except OSError:
        return ""
    lines = [printable(x.strip()) for x in data.decode(errors="replace").splitlines() if x.strip()]
    text = " / ".join(lines[-LAST_LINES:])
    return text if len(text) <= LAST_CHARS else "..." + text[-(LAST_CHARS - 3):]


def stop(proc: subprocess.Popen, timeout_s: float = 30.0) -> int:
    """SIGTERM (nbdkit finishes the requests in flight, the plugin writes its final
    stats line), then SIGKILL if it hangs."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout_s)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    return proc.returncode
