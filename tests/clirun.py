"""The `ssdlab` command in a child process, as a user runs it: `cli` waits for it, `start`
returns it running, `fake_cli` runs it on a FakeTarget (conftest.py) that is slow in its
random-write phase (for signals and kills mid-run). Every test that runs the command in
a subprocess goes through here."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable

import warm_command

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent
COMMAND = [sys.executable, "-m", "ssdlab.cli"]


def environ(**extra: str) -> dict[str, str]:
    """This process's environment with the package on the path (no debug tracebacks)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT / "python"), **extra)
    env.pop("SSDLAB_DEBUG", None)
    return env


def cli(*args: str, timeout: float = 300, cwd: Path | None = ROOT, env: dict[str, str] | None = None,
        check: bool = False, preexec_fn: Callable[[], Any] | None = None) -> subprocess.CompletedProcess:
    """`ssdlab ARGS` to its end; check=True: a non-zero exit fails the test with its stderr.
    The command's own process, forked from one that has imported ssdlab already
    (warm_command.py) where that runs it as a fresh one would."""
    env = env if env is not None else environ()
    r = None
    if preexec_fn is None:
        r = warm_command.run(COMMAND, args, env, environ(), cwd or Path.cwd(), ROOT, timeout)
    if r is None:
        r = subprocess.run([*COMMAND, *args], capture_output=True, text=True, timeout=timeout, cwd=cwd,
                           env=env, preexec_fn=preexec_fn)
    if check and r.returncode != 0:
        raise AssertionError(f"ssdlab {' '.join(args)}: exit {r.returncode}: {r.stderr[-2000:]}")
    return r


def start(*args: str, env: dict[str, str] | None = None, **kw: Any) -> subprocess.Popen:
    """`ssdlab ARGS` running, its output piped."""
    return subprocess.Popen([*COMMAND, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env if env is not None else environ(), cwd=ROOT, **kw)


@contextmanager
def reaped(p: subprocess.Popen) -> Iterator[subprocess.Popen]:
    """`p`, killed and waited for on the way out if it is still running (a test that
    signals a running command and fails midway leaves no process behind)."""
    try:
        yield p
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()


# The command with its drive replaced by a FakeTarget that sleeps in its random-write phase
# (READY is created once the run holds a sample of it) and, with FILLER set, fills the
# results disk after the fill phase (with REMOVE set, removes that file then: the store;
# REMOVE_AT_END: once the run is stored, as its metrics print; REMOVE_AFTER_RUN: once the
# command's first run is stored, before the command says so);
# CHECKPOINT_S sets the runner's checkpoint interval.
FAKE_CLI = """
import os, sys, time
sys.path.insert(0, os.environ["TESTS_DIR"])
from fakes import FakeTarget
import ssdlab.targets
from ssdlab.phase import GB

class Fake(FakeTarget):
    def run(self, phase, on_sample=None):
        def slow(row):
            if phase.name == "random":
                time.sleep(0.05)
            if on_sample:
                on_sample(row)
            if phase.name == "random":
                open(os.environ["READY"], "a").close()
        r = super().run(phase, slow)
        if phase.name == "fill" and os.environ.get("REMOVE"):
            os.unlink(os.environ["REMOVE"])
        if phase.name == "fill" and os.environ.get("FILLER"):
            with open(os.environ["FILLER"], "wb") as f:
                try:
                    while True:
                        f.write(bytes(1 << 20))
                except OSError:
                    pass
        return r

ssdlab.targets.open_target = lambda spec, **kw: Fake(capacity=8 * GB, cache_bytes=2 * GB)
from fakes import with_fake_drives
ssdlab.targets.parse_drive = with_fake_drives(ssdlab.targets.parse_drive)
import ssdlab.runner
ssdlab.runner.CHECKPOINT_S = float(os.environ.get("CHECKPOINT_S", ssdlab.runner.CHECKPOINT_S))
import ssdlab.cli
if os.environ.get("REMOVE_AT_END"):  # the store removed once the run is stored, as its metrics print
    def removing(show):
        def shown(*a, **kw):
            if os.path.exists(os.environ["REMOVE_AT_END"]):
                os.unlink(os.environ["REMOVE_AT_END"])
            return show(*a, **kw)
        return shown
    ssdlab.cli.show_metrics = removing(ssdlab.cli.show_metrics)
    for m in (ssdlab.cli, ssdlab.cli.pts, ssdlab.cli.sweep):
        m.print_json = removing(m.print_json)
if os.environ.get("REMOVE_AFTER_RUN"):  # the store removed once the first run is stored
    import ssdlab.review, ssdlab.cli.pts
    def removing_after(run_test):
        def ran(*a, **kw):
            out = run_test(*a, **kw)
            if os.path.exists(os.environ["REMOVE_AFTER_RUN"]):
                os.unlink(os.environ["REMOVE_AFTER_RUN"])
            return out
        return ran
    for m in (ssdlab.runner, ssdlab.review, ssdlab.cli.pts):
        m.run_test = removing_after(m.run_test)
from ssdlab.cli import app
app()
"""


def fake_cli(ready: Path, *args: str, **kw: Any) -> subprocess.Popen:
    """`ssdlab ARGS` on the slow FakeTarget; `ready` appears once the random phase runs.
    Keyword `env` adds variables (e.g. FILLER); the rest goes to Popen."""
    env = environ(TESTS_DIR=str(TESTS), READY=str(ready), **kw.pop("env", {}))
    return subprocess.Popen([sys.executable, "-c", FAKE_CLI, *args], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, **kw)


def converse(cmd: list[str], requests: list[dict], env: dict[str, str] | None = None
             ) -> tuple[list[dict], subprocess.CompletedProcess]:
    """JSON lines of a client's making sent to an agent (`ssdlab agent`, or ssh running
    it): its answers, each request answered (a phase's samples, then its end) before the
    next is sent and the connection closed."""
    import json

    p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         env=env if env is not None else environ(), cwd=ROOT)
    assert p.stdin is not None and p.stdout is not None
    answers: list[dict] = []
    for r in requests:
        try:
            p.stdin.write((json.dumps(r) + "\n").encode())
            p.stdin.flush()
        except BrokenPipeError:
            break
        while line := p.stdout.readline():  # until its answer (or the agent's end)
            answers.append(json.loads(line))
            if "sample" not in answers[-1]:
                break
    out, err = p.communicate(b'{"op": "close"}\n', timeout=120)
    answers += [json.loads(x) for x in out.decode().splitlines() if x.strip()]
    return answers, subprocess.CompletedProcess(p.args, p.returncode, out.decode(), err.decode())
