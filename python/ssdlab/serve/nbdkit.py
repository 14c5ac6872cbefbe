"""nbdkit with the ssdsim plugin (crates/ssdsim-nbd): where the plugin is, the command
line, starting it and knowing it is ready, and the marker file that tells `--drive nbd:`
a socket serves a simulated drive (so writing to it needs no --destroy-data)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

INSTALL_HINT = "install it with `apt-get install nbdkit` (Debian/Ubuntu), or run `make sysdeps`"
PLUGIN_NAME = "libssdsim_nbd.so"
MARKER_SUFFIX = ".ssdlab.json"
THREADS = 64  # requests in flight per connection (nbdkit's default is 16)


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
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError(f"--tcp {hostport}: expected HOST:PORT, e.g. --tcp 127.0.0.1:10809")
    return host.strip("[]"), int(port)


def uri(socket: Path | None, tcp: tuple[str, int] | None) -> str:
    if tcp:
        host = f"[{tcp[0]}]" if ":" in tcp[0] else tcp[0]
        return f"nbd://{host}:{tcp[1]}"
    return f"nbd+unix:///?socket={socket}"


def command(*, profile: Path, sets: list[str], seed: int, data: Path, stats: Path,
            socket: Path | None, tcp: tuple[str, int] | None, pidfile: Path,
            interval_s: float = 1.0) -> list[str]:
    cmd = [nbdkit_binary(), "--foreground", "--exit-with-parent", "-t", str(THREADS),
           "-P", str(pidfile)]
    if tcp:
        cmd += ["-i", tcp[0], "-p", str(tcp[1])]
    else:
        cmd += ["-U", str(socket)]
    cmd += [str(plugin_path()), f"profile={profile}", f"seed={seed}", f"data={data}",
            f"stats={stats}", f"interval={interval_s}"]
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
            lines = [x for x in log.read_text(errors="replace").splitlines() if x.strip()]
            raise ValueError(f"nbdkit stopped before serving: {lines[-1] if lines else f'exit {proc.returncode}'}")
        if time.monotonic() > deadline:
            stop(proc)
            raise RuntimeError(f"nbdkit did not start serving within {timeout_s:.0f} s")
        time.sleep(0.05)
    return proc


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


def marker_path(socket: Path) -> Path:
    return socket.with_name(socket.name + MARKER_SUFFIX)


def write_marker(socket: Path, doc: dict) -> None:
    marker_path(socket).write_text(json.dumps(doc))


def served_here(socket: str) -> dict | None:
    """The marker of a socket `ssdlab serve` is serving now (its process alive), or None."""
    try:
        doc = json.loads(marker_path(Path(socket)).read_text())
        os.kill(int(doc["pid"]), 0)
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if os.path.realpath(doc.get("socket", "")) != os.path.realpath(socket):
        return None
    return doc
