"""`ssdlab run TEST --fleet --drive h1:/dev/X --drive h2:/dev/Y ...`: the test on every
drive at the same time, each drive its own stored run (a qualification lab's fleet).

Each drive runs in its own `ssdlab run` process with the same options, so every rule of a
single run holds unchanged: checks before anything is stored, each phase stored as it
ends, Ctrl-C or SIGTERM storing the phase cut short and marking the run interrupted (the
signal reaches every process; when the parent is killed, each member gets SIGTERM). The
parent checked all drives first (one refused drive: exit 2, nothing runs), then starts
them, relays their messages prefixed with the drive, and gathers their --json documents.

Not executor.py: its workers are killed on Ctrl-C (right for simulations, which are
recomputed, wrong for a drive whose partial phase must be kept), and a fleet's work is
fio on other machines, not CPU here: one process per drive is all the parallelism needed.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
from dataclasses import dataclass, field
from typing import Callable

from . import interrupts
from .targets import child


@dataclass
class Member:
    spec: str
    proc: subprocess.Popen[str]  # its `ssdlab run`, stdout and stderr piped, as text
    out: str = ""
    lines: list[str] = field(default_factory=list)

    @property
    def doc(self) -> dict | None:
        try:
            d = json.loads(self.out)
        except json.JSONDecodeError:
            return None
        return d if isinstance(d, dict) else None


def command(spec: str, args: list[str]) -> list[str]:
    # -P: a module another user left in the working directory (/tmp) is not imported;
    # ssdlab.command: a Ctrl-C while the member still imports ends it in one line, as the
    # `ssdlab` command's (no traceback)
    return child.python_module("ssdlab.command", "run", *args, "--drive", spec, "--json")


def _held(preexec: Callable[[], None]) -> Callable[[], None]:
    """`preexec`, then SIGINT and SIGTERM blocked: a Ctrl-C while the member's Python starts
    (its site module: a fatal error, not an exception) waits until ssdlab.command takes them
    (it unblocks them once its handlers hold them: one line, status 130)."""
    def both() -> None:
        preexec()
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
    return both


def run(specs: list[str], args: list[str], echo: Callable[[str], None]) -> tuple[list[Member], int]:
    """Start one `ssdlab run` per drive, wait for all; (members, exit status: 0 when all
    completed, else the worst of 130/143 (interrupted), 1 (failed), 2)."""
    members: list[Member] = []
    threads = []
    env = dict(os.environ)
    src = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env["PYTHONPATH"] = src + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    try:  # a Ctrl-C while the members start reaches those started: they are waited for too
        for s in specs:
            # SIGTERM when this process dies (SIGKILL, the OOM killer): the member stores the
            # phase cut short and ends, as a Ctrl-C makes it, instead of writing its drive on
            m = Member(s, subprocess.Popen(command(s, args), stdout=subprocess.PIPE,
                                           stderr=subprocess.PIPE, text=True, env=env,
                                           preexec_fn=_held(child.die_with_parent())))
            members.append(m)
            threads.append(threading.Thread(target=_relay, args=(m, echo), daemon=True))
            threads[-1].start()
            echo(f"ssdlab: fleet: {m.spec}: started (pid {m.proc.pid})")
        for m in members:
            m.proc.wait()
    except KeyboardInterrupt:  # Ctrl-C reached them too; a `kill` of this process did not
        sig = signal.SIGTERM if interrupts.terminated() else signal.SIGINT
        for m in members:
            if m.proc.poll() is None:
                m.proc.send_signal(sig)
        for m in members:
            while True:
                try:
                    m.proc.wait()
                    break
                except KeyboardInterrupt:
                    continue
    for t in threads:
        t.join(timeout=30)
    # a member a signal ended (a second Ctrl-C while it exits) as its shell says it: 128 + N
    codes = [128 - m.proc.returncode if m.proc.returncode < 0 else m.proc.returncode for m in members]
    worst = next((r for r in (130, 143, 1, 2) if r in codes), 1 if any(codes) else 0)
    return members, worst


def _relay(m: Member, echo: Callable[[str], None]) -> None:
    out: list[str] = []
    out_pipe, err_pipe = m.proc.stdout, m.proc.stderr
    assert out_pipe is not None and err_pipe is not None  # run() starts it with both piped

    def pump_out() -> None:
        out.append(out_pipe.read())

    t = threading.Thread(target=pump_out, daemon=True)
    t.start()
    for line in err_pipe:
        line = line.rstrip("\n")
        if line.strip():
            m.lines.append(line)
            echo(f"[{m.spec}] {line}")
    t.join()
    m.out = "".join(out)
