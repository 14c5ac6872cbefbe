"""A drive on another host: `--drive HOST:/dev/nvme1n1`, `user@HOST:/dev/X`,
`HOST:PORT:/dev/X` (PORT: ssh's), `[IPv6]:/dev/X`, or a file there, `HOST:/srv/t.bin:8G`
(docs/real-drives-remote.md).

ssdlab reaches HOST over ssh with the user's own keys and accounts (remote/ssh.py) and runs
`ssdlab agent` there (remote/agent.py): that host's local target, with every check of
guard/safety.py run there, the exclusive claim and the device lock held there for the whole
run, runs the phases and sends back their live samples and results. This side adds:
- consent: a writing test needs `--destroy-data` naming HOST:PATH exactly as `--drive`
  does, checked here before the agent is asked anything that writes;
- one drive once per run, by what it is rather than what it is called: the agent reports
  the kernel it runs on and the device number, so `127.0.0.1:/dev/loop3` and
  `localhost:/dev/loop3` (or `/dev/loop3` itself) in one run are refused (locks.claim);
- a failure is one line naming the drive and the cause (the agent's own line, or why
  the connection ended: ssh's last words, the agent's exit status).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

from ...errors import printable
from ..base import BaseTarget, Capabilities
from ...phase import Batch, Identity, Interrupted, OnSample, Phase, PhaseResult, flat
from ..guard import locks, safety
from . import ssh
from ..fio import memory
from ..fio.target import planned, writes
from ..spec import DriveSpec
from ..fio.failure import FioFailed
from ..hostid import kernel_id
from .wire import (PROTOCOL, Hello, Malformed, answer_of, hello_of, identity_of, opened_of, phase_doc,
                   result_of)

STOP_WAIT_S = 60.0  # after Ctrl-C, how long the agent may take to hand back the partial phase
T = TypeVar("T")


class RemoteFailed(RuntimeError):
    """A drive on another host failed during a run (the message has the cause)."""


class RemoteTarget(BaseTarget):
    """The Target protocol, answered by the agent on the drive's host."""

    # the trace file is not sent to the other host
    capabilities = Capabilities(simulated=False, replay=False)

    def __init__(self, spec: DriveSpec, destroy_data: str | None = None, plan: bool = False):
        assert spec.remote and spec.host is not None
        self.rs = spec
        self.spec = self.name = spec.text
        self.destroy_data = destroy_data
        self.plan_mode = plan
        self.consent = spec.text in safety.named(destroy_data)
        self.conn: ssh.Connection | None = None
        self._claimed: str | None = None
        cmd = ssh.ssh_command(spec.host, spec.user, spec.port)
        self.command = cmd
        try:
            self.conn = ssh.Connection(cmd, spec.text)
            self.host = self._first("hello", hello_of, proto=PROTOCOL, spec=self.rs.local_text)
            self._claim(self.host)
            ident, self._engine_version = self._first("open", opened_of, spec=self.rs.local_text, plan=plan,
                                                      destroy_data=self.rs.path if self.consent else None)
        except BaseException:
            self.close()
            raise
        self.ident = self._identity(ident)
        self.capacity = self.ident.capacity
        self.kind = self.ident.kind

    # ---------------------------------------------------------------- the connection
    def _first(self, op: str, check: Callable[[Any], T] = lambda x: x, **kw: Any) -> T:
        """A request before the run, its answer checked: a lost connection, or an agent
        that answers outside the protocol, is the user's to fix (exit 2)."""
        try:
            return check(self._call(op, timeout=ssh.CONNECT_S, **kw))
        except TimeoutError:
            raise ValueError(f"drive {self.spec}: no answer from ssdlab on {self.rs.where} over ssh "
                             f"within {ssh.CONNECT_S:g} s; check `{self._try()}`") from None
        except ssh.ConnectionLost as e:
            raise ValueError(f"drive {self.spec}: cannot run ssdlab on {self.rs.where} over ssh "
                             f"({e}); check that `{self._try()}` works") from None
        except Malformed as e:
            raise ValueError(f"drive {self.spec}: {self._outside(e)}") from None

    def _outside(self, e: Malformed) -> str:
        return (f"ssdlab on {self.rs.where} answered outside its protocol ({printable(str(e))[:300]}); "
                "install the same ssdlab version on both hosts")

    def _try(self) -> str:
        """The command line that shows what goes wrong (what ssdlab runs, asking for help)."""
        cmd = self.command[:-1] + [ssh.help_command(self.command[-1])]
        return " ".join(x if re.fullmatch(r"[\w@%+=:,./-]+", x) else repr(x) for x in cmd)

    def _call(self, op: str, timeout: float | None = None, **kw: Any) -> Any:
        if self.conn is None:
            raise RemoteFailed(f"drive {self.spec}: its connection is closed")
        self.conn.send({"op": op, **kw})
        doc = self.conn.recv(timeout)
        kind, value = answer_of(doc)
        if kind == "error":
            raise self._error(doc)
        if kind != "ok":
            raise Malformed(f"a {kind} answer to {op}")
        return value

    def _named(self, text: str) -> str:
        """An agent's line about the drive, naming it as --drive does (which says where)."""
        agent_spec = self.rs.local_text
        if agent_spec in text:  # its name on that host: give it ours
            return text.replace(agent_spec, self.spec, 1)
        if self.rs.path in text:
            return text.replace(self.rs.path, self.spec, 1)
        return f"{self.spec}: {text}"

    def _error(self, doc: dict) -> Exception:
        text = self._named(printable(str(doc.get("error") or "failed")))
        kind = doc.get("type")
        if kind == "locked":
            return safety.DeviceLocked(text)
        if kind == "unsafe":
            return safety.UnsafeTarget(text)
        if kind == "value":
            return ValueError(text)
        if kind == "fio":
            return FioFailed(text)
        return RemoteFailed(text)

    def _lost(self, e: ssh.ConnectionLost, phase: Phase) -> RemoteFailed:
        return RemoteFailed(f"drive {self.spec}: the connection to ssdlab on {self.rs.where} ended "
                            f"during phase {phase.name or phase.kind!r}: {e}")

    def _claim(self, host: Hello) -> None:
        kern = host.kernel
        key = host.drive or self.rs.local_text
        key = key if kern and kern == kernel_id() else f"{kern or self.rs.host}/{key}"
        locks.claim(key, self.spec)
        self._claimed = key

    def _identity(self, i: Identity) -> Identity:
        i.extra.update(host=self.rs.host, remote_path=self.rs.path, remote_hostname=self.host.hostname,
                       remote_uid=self.host.uid, ssdlab_remote=self.host.version)
        if i.kind == "file":
            i.model = f"{i.model} on {self.rs.host}"
        return i

    # ---------------------------------------------------------------- the Target protocol
    @property
    def engine_version(self) -> str:
        """fio's version and I/O engine on the drive's host."""
        return self._engine_version

    def identify(self) -> Identity:
        if self.conn is None:
            return self.ident
        try:
            self.ident = self._identity(identity_of(self._call("identify")))
        except (ssh.ConnectionLost, Malformed):
            pass  # the run's own request says why
        return self.ident

    def _refuse_without_consent(self) -> None:
        if not self.consent:
            raise safety.UnsafeTarget(
                f"refusing {self.spec}: writing destroys its data; if you mean to erase it, pass "
                f"--destroy-data={self.spec} (exactly as --drive names it)")

    def check_writes(self) -> None:
        self._refuse_without_consent()
        self._call("check_writes")

    def preflight(self, phases: Iterable[Phase]) -> None:
        phases = list(phases)
        if any(p.kind == "replay" for p in phases):
            raise ValueError(f"drive {self.spec}: trace replay on a drive on another host is not "
                             "supported (the trace would have to be on that host); run it there")
        if any(writes(p) for p in phases):
            self._refuse_without_consent()
        if not self.plan_mode:
            self._first("preflight", phases=[phase_doc(p) for p in phases])

    def plan(self, items: Iterable[Phase | Batch]) -> str:
        phases = flat(items)  # run one by one over the connection: a Batch is its phases
        text = printable(str(self._call("plan", phases=[phase_doc(p) for p in phases])), keep="\n")
        text = re.sub(r"(?m)^# to let a run write it, pass .*$", "# to let a run write it, pass "
                      f"--destroy-data={self.spec} (exactly as --drive names it)", text)
        if not self.consent and any(writes(p) for p in phases):
            try:
                self._refuse_without_consent()
            except safety.UnsafeTarget as e:
                text = re.sub(r"(?m)^# safety: .*$", f"# safety: a run would be REFUSED: {e}", text, count=1)
        # the refusal a run would meet on fio's memory, as the run's error names the drive
        refused = re.escape(memory.PLAN_REFUSED)
        text = re.sub(f"(?m)^{refused}(.*)$", lambda m: memory.PLAN_REFUSED + self._named(m.group(1)), text, count=1)
        # (a plan shows its commands only with --fio-jobs: this line holds either way)
        head = (f"# remote: {self.spec} over ssh (`{' '.join(self.command)}`): its checks and every command "
                f"of its plan run on {printable(self.host.hostname) or self.rs.host} as uid {self.host.uid}\n")
        return head + text

    def run(self, phase: Phase, on_sample: OnSample | None = None) -> PhaseResult:
        if self.plan_mode:
            return planned(self, phase)
        if phase.kind == "replay":
            raise ValueError(f"drive {self.spec}: trace replay on a drive on another host is not supported")
        if writes(phase):
            self._refuse_without_consent()
        if self.conn is None:
            raise RemoteFailed(f"drive {self.spec}: its connection is closed")
        try:
            self.conn.send({"op": "run", "phase": phase_doc(phase)})
            return self._answers(phase, on_sample, None)
        except KeyboardInterrupt as stop:
            return self._stop(phase, on_sample, stop)
        except ssh.ConnectionLost as e:
            raise self._lost(e, phase) from None
        except Malformed as e:
            raise RemoteFailed(f"drive {self.spec}: during phase {phase.name or phase.kind!r}, "
                               f"{self._outside(e)}") from None

    def _answers(self, phase: Phase, on_sample: OnSample | None, timeout: float | None) -> PhaseResult:
        assert self.conn is not None
        while True:
            doc = self.conn.recv(timeout)
            kind, value = answer_of(doc)
            if kind == "sample":
                if on_sample:
                    on_sample(value)
            elif kind == "result":
                return result_of(value)
            elif kind == "interrupted":
                raise Interrupted(result_of(value) if value is not None else None)
            elif kind == "error":
                raise self._error(doc)
            else:
                raise Malformed("an ok answer during a phase")

    def _stop(self, phase: Phase, on_sample: OnSample | None, stop: BaseException) -> PhaseResult:
        """Ctrl-C or SIGTERM here: the agent stops the phase and hands back what it
        recorded (raised as Interrupted, as a local target does)."""
        assert self.conn is not None
        try:
            self.conn.send({"op": "interrupt"})
            r = self._answers(phase, on_sample, STOP_WAIT_S)
        except Interrupted:
            raise
        except (ssh.ConnectionLost, TimeoutError, Exception):
            raise Interrupted(None) from stop
        raise Interrupted(r) from stop  # it finished as it was stopped: kept as partial

    def close(self) -> None:
        conn, self.conn = self.conn, None
        if conn is not None:
            try:
                if not conn.broken:  # an agent outside the protocol is not asked anything more
                    conn.send({"op": "close"})
                    conn.recv(10.0)
            except (ssh.ConnectionLost, TimeoutError, OSError):
                pass
            conn.close()
        if self._claimed is not None:
            locks.unclaim(self._claimed)
            self._claimed = None


__all__ = ["RemoteFailed", "RemoteTarget"]
