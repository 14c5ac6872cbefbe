"""`ssdlab agent`: the drive host's half of `--drive HOST:/dev/X` (remote/target.py), started by
ssdlab over ssh (remote/ssh.py) and talking JSON lines (remote/wire.py) on its stdin and stdout.

The drive host decides what it may touch (remote/allowlist.py): only a drive its own list names
(`ssdlab agent --drives ...` in authorized_keys, or /etc/ssdlab/agent.toml) is opened at
all, and that list is the consent to write it: what the client says about consent is not
asked. It drives one local target as a run on that host would (FioTarget: every rule of
guard/safety.py checked there, the O_EXCL claim and the one-run-per-device lock held until the
connection ends), with the rights of the ssh user and nothing more. It opens no socket
and reads no file but the drive's and its list's; a request it does not know is refused.

It lives exactly as long as its connection: end of input (ssh gone, the client killed),
SIGHUP or SIGTERM, no message for SILENCE_S (the client pings every ssh.PING_S), or more
than MAX_WAITING requests sent without waiting for their answers (memory) stop
the running phase the way Ctrl-C stops a local one (fio gets SIGINT and stops; fio also
dies with the agent) and close the drive. A client's `interrupt` stops the phase and
sends back what it recorded."""

from __future__ import annotations

import os
import queue
import re
import signal
import socket
import threading
from typing import Any

from ... import __version__, safe_path
from ...phase import Interrupted
from ..guard import locks, safety
from . import fio_memory, limits
from .allowlist import AllowList
from ..fio.target import FioTarget
from ..spec import DriveSpec, parse_local
from ..fio.failure import FioFailed
from ..hostid import kernel_id, machine_id
from .wire import PROTOCOL, Lines, dumps, identity_doc, loads, phase_of, result_doc

SILENCE_S = 60.0
# requests waiting for the one being answered: ssdlab's client sends one and waits for its
# answers (at most a `close` comes while a stopped phase ends); a client that keeps sending
# has the connection ended, rather than its requests (each up to wire.MAX_LINE) kept
# without bound while a phase runs for hours
MAX_WAITING = 4
OPS = ("hello", "open", "identify", "check_writes", "preflight", "plan")  # and run, close


def drive_key(spec: DriveSpec) -> str:
    """The drive a spec names, keyed as guard/locks.py keys it, read without opening it."""
    return locks.drive_key(fio_kind(spec), spec.path)


def fio_kind(spec: DriveSpec) -> str:
    return "block" if spec.kind == "device" else "file"


def error_doc(e: BaseException) -> dict:
    kind = ("locked" if isinstance(e, safety.DeviceLocked)
            else "unsafe" if isinstance(e, (safety.UnsafeTarget, safe_path.UnsafePath))
            else "value" if isinstance(e, ValueError) else "fio" if isinstance(e, FioFailed) else "runtime")
    text = (str(e).strip() or type(e).__name__).splitlines()[0]
    if kind == "runtime" and not isinstance(e, RuntimeError):
        text = f"{type(e).__name__}: {text}"
    return {"error": text, "type": kind}


class Agent:
    def __init__(self, inp: int, out: int, allowed: AllowList, fio_memory_given: int | None = None):
        self.allowed = allowed
        self.fio_memory = fio_memory_given  # the host owner's bound on one phase's fio (None: a share)
        self.lines = Lines(inp)
        self.out = out
        self.target: FioTarget | None = None
        self.requests: queue.Queue[dict | None] = queue.Queue()
        self.lock = threading.Lock()
        self.running = False  # a phase runs (a stop may interrupt it)
        self.stopping = False  # this phase was already asked to stop
        self.gone = False  # the connection ended: stop and exit
        self.main = threading.main_thread().ident or threading.get_ident()

    # ---------------------------------------------------------------- the connection
    def send(self, doc: dict) -> None:
        data = dumps(doc)
        try:
            while data:
                data = data[os.write(self.out, data):]
        except OSError:  # EPIPE: the client is gone
            self.gone = True

    def _reader(self) -> None:
        while True:
            try:
                line = self.lines.readline(SILENCE_S)
                msg = loads(line) if line is not None else None
            except (TimeoutError, ValueError, OSError):
                msg = None
            if msg is None:
                self.gone = True
                self.requests.put(None)
                self._stop_phase()
                return
            if msg.get("op") == "ping":
                continue
            if msg.get("op") == "interrupt":
                self._stop_phase()
                continue
            if self.requests.qsize() >= MAX_WAITING:
                self._say(f"the client sent more than {MAX_WAITING} requests without waiting for "
                          "their answers (not ssdlab's protocol): connection ended")
                self.gone = True
                self.requests.put(None)
                self._stop_phase()
                return
            self.requests.put(msg)

    @staticmethod
    def _say(text: str) -> None:
        """One line on stderr (ssh shows it to the client with the host's name)."""
        try:
            os.write(2, f"ssdlab: error: agent: {text}\n".encode())
        except OSError:
            pass

    def _stop_phase(self) -> None:
        with self.lock:
            if self.running and not self.stopping:
                self.stopping = True
                signal.pthread_kill(self.main, signal.SIGINT)

    def _on_signal(self, signum: int, frame: Any) -> None:
        if signum != signal.SIGINT:
            self.gone = True  # SIGHUP, SIGTERM: stop and exit
        elif not self.running:
            return
        self.stopping = True
        raise KeyboardInterrupt

    # ---------------------------------------------------------------- requests
    def serve(self) -> int:
        for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(s, self._on_signal)
        threading.Thread(target=self._reader, daemon=True).start()
        try:
            while not self.gone:
                try:
                    try:
                        msg = self.requests.get(timeout=1.0)  # a signal is seen within 1 s
                    except queue.Empty:
                        continue
                    if msg is None:
                        break
                    if self.handle(msg):
                        break
                except KeyboardInterrupt:
                    continue
        finally:
            with self.lock:
                self.running = False
            if self.target is not None:
                self.target.close()
        return 0

    def handle(self, msg: dict) -> bool:
        """Answer one request; True when the connection is to end."""
        op = msg.get("op")
        if op == "close":
            self.send({"ok": True})
            return True
        if op == "run":
            self.run_phase(msg)
            return False
        try:
            self.send({"ok": self.answer(op, msg)})
        except Exception as e:  # every refusal or failure goes back as its one line
            self.send(error_doc(e))
        return False

    def answer(self, op: Any, msg: dict) -> Any:
        if op not in OPS:
            raise ValueError(f"unknown request {op!r}")
        if op == "hello":
            if msg.get("proto") != PROTOCOL:
                raise ValueError(f"protocol {msg.get('proto')} is not this agent's ({PROTOCOL}, ssdlab "
                                 f"{__version__}); install the same ssdlab version on both hosts")
            return {"proto": PROTOCOL, "version": __version__, "kernel": kernel_id(),
                    "machine_id": machine_id(), "hostname": socket.gethostname(),
                    "uid": os.geteuid(), "pid": os.getpid(), "drive": self._drive_key(msg)}
        if op == "open":
            if self.target is not None:
                raise ValueError("a drive is already open on this connection")
            spec = self._spec(msg)
            # the host's list is the consent: the client's destroy_data is not asked
            target = FioTarget(spec, destroy_data=self._allowed(spec), plan=bool(msg.get("plan")))
            try:  # the device opened (its path followed once) is one the list names
                if spec.kind == "device":
                    self.allowed.check("block", target.dev, spec.text)
            except BaseException:
                target.close()
                raise
            self.target = target
            return {"identity": identity_doc(self.target.identify()),
                    "engine_version": "" if self.target.plan_mode else self.target.engine_version}
        t = self._target()
        if op == "identify":
            return identity_doc(t.identify())
        if op == "check_writes":
            t.check_writes()
            return True
        if op in ("preflight", "plan"):
            # a plan says what a run would meet on fio's memory in its `# fio memory:` line
            phases = [limits.check(phase_of(p), self.fio_memory, memory=op != "plan") for p in msg.get("phases") or []]
            if any(p.kind == "replay" for p in phases):
                raise ValueError("trace replay on a drive on another host is not supported (the "
                                 "trace would have to be on that host); run it there")
            if op == "plan":
                return self._plan(t, phases)
            t.preflight(phases)
            return True
        raise AssertionError(op)

    def _plan(self, t: FioTarget, phases: list) -> str:
        """The drive's plan, its `# fio memory:` line the agent's own: what it lets a phase take
        (its owner's --fio-memory, else half of what the host has available), not what the
        host has."""
        line, text = limits.plan_line(phases, self.fio_memory), t.plan(phases)
        if line is None:  # no io phase: no such line either
            return text
        return re.sub(f"(?m)^{re.escape(fio_memory.PLAN_PREFIX)}.*$", lambda _: line, text, count=1)

    def _spec(self, msg: dict) -> DriveSpec:
        spec = parse_local(msg.get("spec"))
        self._allowed(spec)
        return spec

    def _allowed(self, spec: DriveSpec) -> str:
        """The drive's path when the host's list names it (UnsafeTarget otherwise)."""
        return self.allowed.check(fio_kind(spec), spec.path, spec.text, spec.size)

    def _drive_key(self, msg: dict) -> str:
        return drive_key(self._spec(msg))

    def _target(self) -> FioTarget:
        if self.target is None:
            raise ValueError("no drive is open on this connection")
        return self.target

    def run_phase(self, msg: dict) -> None:
        """The phase's live samples, then its result (or what it recorded when stopped)."""
        try:
            t = self._target()
            phase = limits.check(phase_of(msg.get("phase")), self.fio_memory)
            if phase.kind == "replay":
                raise ValueError("trace replay on a drive on another host is not supported")
        except Exception as e:
            self.send(error_doc(e))
            return

        def on_sample(row: dict) -> None:
            self.send({"sample": row})

        limit = fio_memory.bound(self.fio_memory)
        over = ValueError(f"phase {phase.name or phase.kind}: fio took more than {fio_memory.size(limit)} of this "
                          f"host's memory, the most this host's agent lets a phase take "
                          f"({fio_memory.whose(self.fio_memory)}): stopped; ask for fewer jobs or a "
                          "shorter phase")
        with self.lock:
            self.running, self.stopping = True, False
        try:
            try:
                with fio_memory.Watch(limit, self._stop_phase) as watch:
                    r = t.run(phase, on_sample)
            finally:
                with self.lock:
                    self.running = False
        except Interrupted as e:
            self.send(error_doc(over) if watch.over
                      else {"interrupted": result_doc(e.partial) if e.partial is not None else None})
            return
        except KeyboardInterrupt:
            self.send(error_doc(over) if watch.over else {"interrupted": None})
            return
        except Exception as e:
            self.send(error_doc(over if watch.over else e))
            return
        self.send({"result": result_doc(r)})


def main(allowed: AllowList, fio_memory_given: int | None = None) -> int:
    """Run the agent on this process's stdin and stdout (then nothing else may use them:
    stdout becomes stderr, stdin /dev/null, so no child reads or writes the protocol)."""
    inp, out = os.dup(0), os.dup(1)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)
    for fd in (inp, out):
        os.set_inheritable(fd, False)
    return Agent(inp, out, allowed, fio_memory_given).serve()


__all__ = ["MAX_WAITING", "SILENCE_S", "Agent", "drive_key", "main"]
