"""The `ssdlab` command forked from a process that has already imported it.

Most of the suite's commands end in a fraction of a second, and starting Python with
ssdlab's imports (numpy, pydantic, typer, the methodology) was most of their CPU: about
0.3 s each, over 600 commands a run. A test process starts one server (`python -c SERVER`,
with the package on the path) on its first command; for each command the server forks a
child, the command's own process (its pid, exit status, stdout and stderr, working
directory and environment), which runs and ends as `python -m ssdlab.cli ARGS` does (exit
status, tracebacks, the interpreter's shutdown) without importing anything again. The
server has run nothing but the imports, so no command sees another's caches. clirun.cli
falls back to a fresh process where a fork could differ from one: a preexec_fn, other
Python or loader variables (but PYTHONSAFEPATH, which the child applies to its module path
itself), a command already running from this test process, or SSDLAB_TEST_FRESH_CLI=1.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import select
import signal
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any

# The server: imports the command once, then per request line (JSON: args, env, cwd, out,
# err) forks a child and answers with the child's pid, then with its wait status.
SERVER = r"""
import json, os, sys
before = dict(os.environ)
safe = sys.flags.safe_path  # "" (the working directory) is not first on the path
import ssdlab.cli as _m


def child(req, added):
    import tempfile
    fd = os.open(os.devnull, os.O_RDONLY)
    os.dup2(fd, 0)
    for target, path in ((1, req["out"]), (2, req["err"])):
        f = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.dup2(f, target)
        os.close(f)
    os.closerange(3, 4096)  # the server's pipes and anything else of the test's
    os.chdir(req["cwd"])
    os.environ.clear()
    # what importing the command set (OPENBLAS_THREAD_TIMEOUT) unless the test set it too
    os.environ.update({**added, **req["env"]})
    # -P's variable acts at start-up: the path a fresh process with this environment has
    if os.environ.get("PYTHONSAFEPATH") and not safe:
        sys.path.remove("")
    elif safe and not os.environ.get("PYTHONSAFEPATH"):
        sys.path.insert(0, "")
    tempfile.tempdir = None
    sys.modules["__main__"].__package__ = "ssdlab.cli"  # click names it `python -m ssdlab.cli`
    sys.argv = [os.path.join(os.path.dirname(_m.__file__), "__main__.py"), *req["args"]]
    _m.app()


added = {k: v for k, v in os.environ.items() if before.get(k) != v}
sys.stdout.flush()
# the imports' objects out of the collector's sight: a child's collections (its interpreter's
# shutdown's among them) would touch every one and copy each page they share with the server
import gc
gc.freeze()
for line in sys.stdin:
    req = json.loads(line)
    pid = os.fork()
    if pid == 0:
        # the command runs and ends as `python -m ssdlab.cli` does: its exit status, an
        # uncaught exception's traceback, and the interpreter's shutdown (atexit, the
        # stores' connections closed) are Python's own
        child(req, added)
        break
    print(json.dumps({"pid": pid}), flush=True)
    _, status = os.waitpid(pid, 0)
    print(json.dumps({"status": status}), flush=True)
"""

# variables the child applies as start-up would: a test process that made a worker pool has
# PYTHONSAFEPATH set from then on (executor.py), and its commands still fork
APPLIED = {"PYTHONSAFEPATH"}

_lock = threading.Lock()
_server: subprocess.Popen | None = None
_server_env: dict[str, str] = {}
_owner = 0  # the pid of the test process that started the server (a fork of it starts its own)


def usable(env: dict[str, str], base: dict[str, str], preexec_fn: object = None) -> bool:
    """Whether a fork of a server started with environment `base` runs a command with
    environment `env` as a fresh process would (the interpreter's and the loader's variables
    act at start-up, before the fork)."""
    if preexec_fn is not None or os.environ.get("SSDLAB_TEST_FRESH_CLI") == "1":
        return False
    keys = {k for k in (*env, *base) if k.startswith(("PYTHON", "LD_")) and k not in APPLIED}
    return all(env.get(k) == base.get(k) for k in keys)


def _start(base: dict[str, str], root: Path) -> subprocess.Popen:
    global _server, _server_env, _owner
    if _server is None or _owner != os.getpid() or _server.poll() is not None:
        _server_env, _owner = dict(base), os.getpid()
        _server = subprocess.Popen([sys.executable, "-c", SERVER], stdin=subprocess.PIPE,
                                   stdout=subprocess.PIPE, env=base, cwd=root, text=True)
        atexit.register(_stop, _server)
    return _server


def _stop(p: subprocess.Popen) -> None:
    if p.poll() is None:
        assert p.stdin is not None
        p.stdin.close()
        try:
            p.wait(10)
        except subprocess.TimeoutExpired:
            p.kill()


_pending: dict[int, bytes] = {}  # per server pid: what came after its last answer's newline


def _read(p: subprocess.Popen, timeout: float | None = None) -> Any:
    """The server's next answer; None if none came within `timeout` seconds. The pipe is
    read unbuffered: a buffered reader could hold the next answer (a command that ended
    before its pid was read) where select does not see it."""
    assert p.stdout is not None
    fd = p.stdout.fileno()
    data = _pending.pop(p.pid, b"")
    while b"\n" not in data:
        if timeout is not None and not select.select([fd], [], [], timeout)[0]:
            _pending[p.pid] = data
            return None
        chunk = os.read(fd, 65536)
        if not chunk:
            raise RuntimeError("the warm command server ended")
        data += chunk
    line, _, rest = data.partition(b"\n")
    _pending[p.pid] = rest
    return json.loads(line)


def run(command: list[str], args: tuple[str, ...], env: dict[str, str], base: dict[str, str], cwd: Path,
        root: Path, timeout: float) -> subprocess.CompletedProcess | None:
    """`ssdlab ARGS` in a child forked from the server (started with environment `base` in
    `root`); None where a fork could differ from a fresh process (`usable`) or when the
    server is busy with another command (the caller runs a fresh process: commands of one
    test may run at the same time)."""
    if not usable(env, base) or not _lock.acquire(blocking=False):
        return None
    try:
        p = _start(base, root)
        if not usable(env, _server_env):
            return None
        with tempfile.TemporaryDirectory(prefix="ssdlab-cmd-") as d:
            out, err = Path(d) / "out", Path(d) / "err"
            assert p.stdin is not None
            p.stdin.write(json.dumps({"args": list(args), "env": env, "cwd": str(cwd), "out": str(out),
                                      "err": str(err)}) + "\n")
            p.stdin.flush()
            pid = _read(p)["pid"]
            done = _read(p, timeout)
            if done is None:
                with contextlib.suppress(ProcessLookupError):  # it ended just now
                    os.kill(pid, signal.SIGKILL)
                _read(p)
                raise subprocess.TimeoutExpired([*command, *args], timeout, out.read_text(),
                                                err.read_text())
            code = os.waitstatus_to_exitcode(done["status"])
            return subprocess.CompletedProcess([*command, *args], code, out.read_text(),
                                               err.read_text())
    finally:
        _lock.release()
