"""A drive on another host: `--drive HOST:/dev/nvme1n1`, `user@HOST:/dev/X`,
`HOST:PORT:/dev/X` (PORT: ssh's), `[IPv6]:/dev/X`, or a file there, `HOST:/srv/t.bin:8G`
(docs/real-drives.md "Drives on other hosts").

ssdlab reaches HOST over ssh with the user's own keys and accounts (ssh.py) and runs
`ssdlab agent` there (agent.py): that host's local target, with every check of
safety.py run there, the exclusive claim and the device lock held there for the whole
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

import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from .base import BaseTarget, Capabilities
from ..phase import Identity, Interrupted, OnSample, Phase, PhaseResult
from . import locks, safety, ssh
from .fio import _empty, parse_size, writes
from .fio_output import FioFailed
from .hostid import kernel_id
from .remote_wire import PROTOCOL, identity_of, phase_doc, result_of

_USER = r"(?:(?P<user>[A-Za-z0-9_][A-Za-z0-9._-]*)@)?"
_HOST = r"(?:\[(?P<v6>[0-9A-Fa-f:.]+)\]|(?P<host>[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?))"
_SPEC = re.compile(_USER + _HOST + r"(?::(?P<port>[0-9]+))?:(?P<path>/.*)")
LOCAL_PREFIXES = ("/", "file:", "nbd:", "sim:")
STOP_WAIT_S = 60.0  # after Ctrl-C, how long the agent may take to hand back the partial phase


def printable(text: str, keep: str = "") -> str:
    """What another host sent, safe to print: no control characters (terminal escapes)."""
    return "".join(c if c.isprintable() or c in keep else "?" for c in text)


class RemoteFailed(RuntimeError):
    """A drive on another host failed during a run (the message has the cause)."""


@dataclass(frozen=True)
class RemoteSpec:
    host: str  # name or address (IPv6 without brackets)
    path: str  # on the remote host
    user: str | None = None
    port: int | None = None  # ssh's port (None: ssh's configuration decides)
    size: int | None = None  # a file target's size
    ipv6: bool = False
    spec: str = ""  # the --drive as given

    @property
    def agent_spec(self) -> str:
        """The drive as a local run on that host names it."""
        return f"file:{self.path}:{self.size}" if self.size is not None else self.path

    @property
    def where(self) -> str:
        h = f"[{self.host}]" if self.ipv6 else self.host
        return (f"{self.user}@" if self.user else "") + h + (f" port {self.port}" if self.port else "")


def looks_remote(spec: str) -> bool:
    """[user@]HOST[:PORT]:/path (a local spec never matches: those start with '/',
    file:, nbd: or sim:)."""
    return not spec.startswith(LOCAL_PREFIXES) and ":/" in spec and bool(
        re.match(_USER + _HOST + r"(?::[0-9]*)?:/", spec))


def parse_remote(spec: str) -> RemoteSpec:
    m = _SPEC.fullmatch(spec)
    if not m:
        raise ValueError(f"drive '{spec}': a drive on another host is HOST:/dev/X, user@HOST:/dev/X, "
                         "HOST:SSHPORT:/dev/X or [IPv6]:/dev/X (a file: HOST:/path/file:SIZE)")
    port = int(m.group("port")) if m.group("port") else None
    if port is not None and not 0 < port < 65536:
        raise ValueError(f"drive '{spec}': ssh port {port} is not 1..65535")
    path, size = m.group("path"), None
    if not path.startswith("/dev/"):
        head, sep, tail = path.rpartition(":")
        try:
            size = parse_size(tail) if sep and head.startswith("/") else None
        except ValueError as e:
            raise ValueError(f"drive '{spec}': {e}") from None
        if size is None:
            raise ValueError(f"drive '{spec}': a file on another host needs its size, e.g. "
                             f"{spec}:8G (a block device is /dev/...)")
        path, size = head, size - size % 4096
    if path != os.path.normpath(path) or path.endswith("/"):
        raise ValueError(f"drive '{spec}': write the path on the remote host without '..', '//' or "
                         f"a trailing '/' (e.g. {os.path.normpath(path)})")
    from . import fio_job

    fio_job.check_path(path)
    return RemoteSpec(m.group("v6") or m.group("host"), path, m.group("user"), port, size,
                      bool(m.group("v6")), spec)


class RemoteTarget(BaseTarget):
    """The Target protocol, answered by the agent on the drive's host."""

    # the trace file is not sent to the other host
    capabilities = Capabilities(simulated=False, replay=False)

    def __init__(self, spec: str, destroy_data: str | None = None, plan: bool = False):
        self.rs = parse_remote(spec)
        self.spec = self.name = spec
        self.destroy_data = destroy_data
        self.plan_mode = plan
        self.consent = spec in safety.named(destroy_data)
        self.conn: ssh.Connection | None = None
        self._claimed: str | None = None
        cmd = ssh.ssh_command(self.rs.host, self.rs.user, self.rs.port)
        self.command = cmd
        try:
            self.conn = ssh.Connection(cmd, spec)
            self.host = self._first("hello", proto=PROTOCOL, spec=self.rs.agent_spec)
            self._claim(self.host)
            opened = self._first("open", spec=self.rs.agent_spec, plan=plan,
                                 destroy_data=self.rs.path if self.consent else None)
        except BaseException:
            self.close()
            raise
        self.ident = self._identity(opened["identity"])
        self.capacity = self.ident.capacity
        self.kind = self.ident.kind
        self._engine_version = str(opened.get("engine_version") or "")

    # ---------------------------------------------------------------- the connection
    def _first(self, op: str, **kw: Any) -> Any:
        """A request before the run: a lost connection is the user's to fix (exit 2)."""
        try:
            return self._call(op, timeout=ssh.CONNECT_S, **kw)
        except TimeoutError:
            raise ValueError(f"drive {self.spec}: no answer from ssdlab on {self.rs.where} over ssh "
                             f"within {ssh.CONNECT_S:g} s; check `{self._try()}`") from None
        except ssh.ConnectionLost as e:
            raise ValueError(f"drive {self.spec}: cannot run ssdlab on {self.rs.where} over ssh "
                             f"({e}); check that `{self._try()}` works") from None

    def _try(self) -> str:
        """The command line that shows what goes wrong (what ssdlab runs, asking for help)."""
        cmd = self.command[:-1] + [ssh.help_command(self.command[-1])]
        return " ".join(x if re.fullmatch(r"[\w@%+=:,./-]+", x) else repr(x) for x in cmd)

    def _call(self, op: str, timeout: float | None = None, **kw: Any) -> Any:
        if self.conn is None:
            raise RemoteFailed(f"drive {self.spec}: its connection is closed")
        self.conn.send({"op": op, **kw})
        doc = self.conn.recv(timeout)
        if "error" in doc:
            raise self._error(doc)
        return doc.get("ok")

    def _error(self, doc: dict) -> Exception:
        text = printable(str(doc.get("error") or "failed"))
        agent_spec = self.rs.agent_spec
        if agent_spec in text:  # its name on that host: give it ours, which says where
            text = text.replace(agent_spec, self.spec, 1)
        elif self.rs.path in text:
            text = text.replace(self.rs.path, self.spec, 1)
        else:
            text = f"{self.spec}: {text}"
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

    def _claim(self, host: dict) -> None:
        kern = str(host.get("kernel") or "")
        key = str(host.get("drive") or self.rs.agent_spec)
        key = key if kern and kern == kernel_id() else f"{kern or self.rs.host}/{key}"
        locks.claim(key, self.spec)
        self._claimed = key

    def _identity(self, doc: dict) -> Identity:
        i = identity_of(doc)
        i.extra.update(host=self.rs.host, remote_path=self.rs.path,
                       remote_hostname=str(self.host.get("hostname", "")),
                       remote_uid=self.host.get("uid"), ssdlab_remote=str(self.host.get("version", "")))
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
            self.ident = self._identity(self._call("identify"))
        except ssh.ConnectionLost:
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

    def plan(self, phases: Iterable[Phase]) -> str:
        phases = list(phases)
        text = printable(str(self._call("plan", phases=[phase_doc(p) for p in phases])), keep="\n")
        if not self.consent and any(writes(p) for p in phases):
            try:
                self._refuse_without_consent()
            except safety.UnsafeTarget as e:
                text = re.sub(r"(?m)^# safety: .*$", f"# safety: a run would be REFUSED: {e}", text, count=1)
        head = (f"# remote: {self.spec} over ssh (`{' '.join(self.command)}`): the checks and the "
                f"commands below run on {self.host.get('hostname') or self.rs.host} as uid "
                f"{self.host.get('uid')}\n")
        return head + text

    def run(self, phase: Phase, on_sample: OnSample | None = None) -> PhaseResult:
        if self.plan_mode:
            text = self.plan([phase])
            print(text)
            r = _empty(phase, {"planned": 1.0})
            r.plan = text  # type: ignore[attr-defined]
            return r
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

    def _answers(self, phase: Phase, on_sample: OnSample | None, timeout: float | None) -> PhaseResult:
        assert self.conn is not None
        while True:
            doc = self.conn.recv(timeout)
            if "sample" in doc:
                if on_sample:
                    on_sample({k: float(v) for k, v in doc["sample"].items()})
            elif "result" in doc:
                return result_of(doc["result"])
            elif "interrupted" in doc:
                part = doc["interrupted"]
                raise Interrupted(result_of(part) if part else None)
            else:
                raise self._error(doc)

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
                conn.send({"op": "close"})
                conn.recv(10.0)
            except (ssh.ConnectionLost, TimeoutError, OSError):
                pass
            conn.close()
        if self._claimed is not None:
            locks.unclaim(self._claimed)
            self._claimed = None


__all__ = ["RemoteFailed", "RemoteSpec", "RemoteTarget", "looks_remote", "parse_remote"]
