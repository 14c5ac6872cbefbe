"""A real drive on another host, driven through fio's own client/server mode:
`--drive HOST:/dev/nvme1n1`, `HOST:PORT:/dev/X`, `[IPv6]:PORT:/dev/X`, or a file target
`HOST:/srv/test.bin` (docs/real-drives.md "Drives on other hosts").

The remote host runs `ssdlab fio-server` (remote_guard.py), which checks its devices
there with the local rules (safety.py), holds them, and starts `fio --server`. This side
is FioTarget with three differences:
- the device's facts (capacity, identity, I/O engine, the remote safety verdict) come from
  a job file the guard wrote on that host, read back through fio (`--remote-config`);
- writing jobs name the guard's *permit* (a link the guard keeps only while the device
  passed its checks and it holds the device), never the device itself: against a plain
  `fio --server`, or after the guard stopped, a writing job finds no file and fails;
- fio runs as `fio --client=...`; it prints one JSON document at the end ("client_stats":
  the status reports and the final one), and sends the 1 s logs back here, named
  `<prefix>_bw.1.log.<HOST>`: both are put in the local shape and parsed as usual.
Trims and purge are fio trim jobs (block devices); live samples arrive at phase end.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import time
from dataclasses import dataclass
from typing import Any, Iterable
from urllib.parse import unquote

from ..phase import Identity, Phase, PhaseResult
from . import fio_job, fio_output, locks, safety
from .fio import FioTarget, _empty, fio_binary_checked
from .identity import Telemetry
from .purge import PurgePlan

DEFAULT_PORT = 8765  # fio's
PERMIT_DIR = "/run/ssdlab/permits"  # on the remote host (the guard runs as root)
FACTS_JOB = "ssdlab-facts"
PROBE_TIMEOUT_S = 20.0
BULK = 16 << 20  # trim requests of 16 MiB, the rest in 4 KiB ones

_HOST = r"(?:\[(?P<v6>[0-9A-Fa-f:.]+)\]|(?P<host>[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?))"
_SPEC = re.compile(_HOST + r"(?::(?P<port>[0-9]+))?:(?P<path>/.*)")
LOCAL_PREFIXES = ("/", "file:", "nbd:", "sim:")


@dataclass(frozen=True)
class RemoteSpec:
    host: str  # name or address (IPv6 without brackets)
    port: int
    path: str  # on the remote host, as given
    ipv6: bool = False
    spec: str = ""  # the --drive as given

    @property
    def client(self) -> str:
        """fio's --client= string."""
        return f"{'ip6' if self.ipv6 else 'ip'}:{self.host},{self.port}"

    @property
    def where(self) -> str:
        h = f"[{self.host}]" if self.ipv6 else self.host
        return f"{h}:{self.port}"


def looks_remote(spec: str) -> bool:
    """HOST:/path or HOST:PORT:/path (a local spec never matches: those start with '/',
    file:, nbd: or sim:)."""
    return not spec.startswith(LOCAL_PREFIXES) and ":/" in spec and bool(
        re.match(_HOST + r"(?::[0-9]*)?:/", spec))


def parse_remote(spec: str) -> RemoteSpec:
    m = _SPEC.fullmatch(spec)
    if not m:
        raise ValueError(f"drive '{spec}': a drive on another host is HOST:/dev/X, HOST:PORT:/dev/X "
                         "or [IPv6]:PORT:/dev/X (a file: HOST:/path/file)")
    port = int(m.group("port")) if m.group("port") else DEFAULT_PORT
    if not 0 < port < 65536:
        raise ValueError(f"drive '{spec}': port {port} is not 1..65535")
    path = m.group("path")
    if path != os.path.normpath(path) or path.endswith("/"):
        raise ValueError(f"drive '{spec}': write the path on the remote host as ssdlab fio-server "
                         f"was given it, without '..', '//' or a trailing '/' (e.g. {os.path.normpath(path)})")
    fio_job.check_path(path)
    return RemoteSpec(m.group("v6") or m.group("host"), port, path, bool(m.group("v6")), spec)


def permit_key(path: str) -> str:
    """The name of a device's permit files on the remote host (its path as given)."""
    return f"{os.path.basename(path)[:32]}-{hashlib.sha256(path.encode()).hexdigest()[:16]}"


def guard_hint(rs: RemoteSpec, write: bool = True) -> str:
    dd = f" --destroy-data={rs.path}" if write else ""
    return f"run `ssdlab fio-server {rs.path}{dd} --port {rs.port}` on {rs.host} as root"


def read_facts(rs: RemoteSpec, fio: str) -> dict[str, Any]:
    """The facts the guard published for `rs.path`, read through fio: the guard's job
    file carries them in its `description`. ValueError with the fix when the host, its
    fio server or the guard is missing."""
    key = permit_key(rs.path)
    cmd = [fio, f"--client={rs.client}", "--output-format=json",
           f"--remote-config={PERMIT_DIR}/{key}.fio"]
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=PROBE_TIMEOUT_S,
                           stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        raise ValueError(f"drive {rs.spec}: no answer from a fio server at {rs.where} within "
                         f"{PROBE_TIMEOUT_S:g} s; check the host and port, and {guard_hint(rs)}") from None
    text = r.stdout + "\n" + r.stderr
    objs, _noise = fio_output.parse_stream(r.stdout)
    doc = next((o for o in objs if "client_stats" in o), None)
    if r.returncode != 0 or not isinstance(doc, dict):
        why = next((x.strip() for x in text.splitlines()
                    if "connect" in x or "resolve" in x or "failed" in x), "")
        why = why.removeprefix("fio: ") or f"fio exit status {r.returncode}"
        raise ValueError(f"drive {rs.spec}: cannot reach a fio server at {rs.where} ({why}); "
                         f"check the host and port, and {guard_hint(rs)}")
    parts: dict[int, str] = {}
    for entry in doc.get("client_stats") or []:
        name = str(entry.get("jobname", "")) if isinstance(entry, dict) else ""
        m = re.fullmatch(re.escape(FACTS_JOB) + r"\.([0-9]+)\.([0-9]+)", name)
        if m:
            parts[int(m.group(1))] = str(entry.get("desc", ""))
            count = int(m.group(2))
    if parts and sorted(parts) == list(range(count)):
        try:
            facts = json.loads(unquote("".join(parts[i] for i in range(count))))
        except json.JSONDecodeError:
            facts = None
        if isinstance(facts, dict) and facts.get("path") == rs.path:
            return facts
    raise ValueError(f"drive {rs.spec}: the fio server at {rs.where} does not serve {rs.path} "
                     f"through ssdlab's guard (a plain `fio --server` is never written to); "
                     f"{guard_hint(rs)}")


def client_reports(obj: dict) -> list[dict]:
    """fio --client's one JSON document as the local shape: one report per status, the
    final one last (`{"jobs": [...]}`; no timestamps, so no live samples from them). The
    entries of a report are as many as its distinct jobs; the status ones come first."""
    entries = [e for e in obj.get("client_stats") or [] if isinstance(e, dict)
               and e.get("jobname") != "All clients"]
    if not entries:
        return [obj] if isinstance(obj.get("jobs"), list) else []
    width = len({(e.get("jobname"), e.get("groupid")) for e in entries}) or 1
    return [{"jobs": entries[i:i + width]} for i in range(0, len(entries), width)]


class RemoteFioTarget(FioTarget):
    def __init__(self, spec: str, destroy_data: str | None = None, plan: bool = False):
        # FioTarget's __init__ looks at a local device; set up what its methods use
        self.spec = spec
        self.destroy_data = destroy_data
        self.plan_mode = plan
        self.remote = parse_remote(spec)
        self.name = spec
        self.fio = fio_binary_checked()  # also for --plan: the facts come through it
        self._lock = None
        self._excl_fd = None
        self._write_ok = False
        self._fio_version = None
        self._workdir = None
        self._nphase = 0
        self.purges: list[str] = []
        self.facts = read_facts(self.remote, self.fio)
        self.kind = "file" if self.facts.get("kind") == "file" else "block"
        self.path = self.remote.path
        self.capacity = int(self.facts.get("capacity") or 0)
        if self.capacity <= 0:
            raise ValueError(f"drive {spec}: the guard on {self.remote.host} reports no capacity")
        self._engine = str(self.facts.get("engine") or "libaio")
        self.dev = str(self.facts.get("dev") or self.path)
        self.info = dict(self.facts.get("info") or {}, host=self.remote.host, port=self.remote.port,
                         remote_path=self.path, capacity=self.capacity)
        self.telemetry = Telemetry(self.dev, "file")  # the drive's counters are on that host
        if not plan:
            self._lock = locks.DeviceLock(f"remote:{self.remote.where}:{self.path}", spec).acquire()

    # ---------------------------------------------------------------- identity
    def identify(self) -> Identity:
        extra: dict[str, Any] = dict(self.info)
        extra.update(fio=self.fio_version, remote_fio=self.facts.get("fio", ""), engine=self._engine,
                     telemetry="none", purges=list(self.purges))
        i = self.facts.get("info") or {}
        model = (i.get("model") or i.get("name") or "") if self.kind == "block" else f"file on {self.remote.host}"
        return Identity(kind=self.kind, model=model or f"{self.path} on {self.remote.host}",
                        capacity=self.capacity, firmware=str(i.get("firmware", "")),
                        serial=str(i.get("serial", "") or f"{self.remote.host}:{self.path}"),
                        extra=extra)

    @property
    def engine(self) -> str:
        return self._engine  # probed on the remote host by the guard

    # ---------------------------------------------------------------- safety
    def check_writes(self) -> None:
        """Consent here (--destroy-data names HOST:PATH exactly as --drive does), the
        verdict of the checks that ran on the remote host, and its permit."""
        if self.spec not in safety.named(self.destroy_data):
            raise safety.UnsafeTarget(
                f"refusing {self.spec}: writing destroys its data; if you mean to erase it, pass "
                f"--destroy-data={self.spec} (exactly as --drive names it)")
        if not self.facts.get("writable"):
            why = self.facts.get("refused") or (
                f"the guard there serves it read-only (started without --destroy-data={self.path})")
            raise safety.UnsafeTarget(f"refusing {self.spec}: on {self.remote.host}: {why}; "
                                      f"fix that, then {guard_hint(self.remote)}")

    def allow_writes(self) -> None:
        if not self._write_ok:
            self.check_writes()
            self.facts = read_facts(self.remote, self.fio)  # the verdict as of now
            self.check_writes()
            self._write_ok = True

    def run(self, phase: Phase, on_sample=None) -> PhaseResult:
        try:
            return super().run(phase, on_sample)
        except (RuntimeError, OSError) as e:
            if not self._write_ok:
                raise
            try:  # did the guard withdraw the permit meanwhile? Then say why
                self.facts = read_facts(self.remote, self.fio)
            except ValueError:
                raise e from None
            if not self.facts.get("writable"):
                raise safety.UnsafeTarget(
                    f"refusing {self.spec}: on {self.remote.host}: "
                    f"{self.facts.get('refused') or 'the guard no longer allows writing'}") from e
            raise

    def preflight(self, phases: Iterable[Phase]) -> None:
        phases = list(phases)
        if any(p.kind == "replay" for p in phases):
            raise ValueError(f"drive {self.spec}: trace replay on a drive on another host is not "
                             "supported (fio would need the trace file there); run it on that host")
        super().preflight(phases)

    def _ensure_file(self, create: bool) -> None:
        pass  # the guard created the file at its size

    def _filename(self) -> str:
        """Writing jobs go through the permit (absent unless the guard allows writing);
        read-only ones may name the device."""
        if self._write_ok:
            return f"{PERMIT_DIR}/{permit_key(self.path)}.dev"
        return self.dev

    # ---------------------------------------------------------------- fio as a client
    def _fio_command(self, job_path: str) -> list[str]:
        cmd = fio_job.command(job_path, self.fio)
        return [cmd[0], f"--client={self.remote.client}", *cmd[1:]]

    def _run_io(self, phase: Phase, spec: dict, on_sample, job: Any = None) -> PhaseResult:
        if job is None:  # never a file created: a job naming a missing permit fails instead
            def job(prefix: str) -> str:
                return fio_job.job_text(spec, self._filename(), engine=self.engine,
                                        log_prefix=prefix, is_file=True)
        return super()._run_io(phase, spec, on_sample, job)

    def _as_reports(self, obj: dict) -> list[dict]:
        return client_reports(obj)

    def _io_result(self, phase: Phase, spec: dict, prefix: str, reps: list[dict], tracker, temps,
                   before: dict) -> PhaseResult:
        collect_logs(prefix)
        return super()._io_result(phase, spec, prefix, reps, tracker, temps, before)

    # ---------------------------------------------------------------- trim and purge
    def _trim_cmd(self, off: int, length: int) -> list[str]:
        """One fio client run of trim jobs over the permit: 16 MiB requests, then 4 KiB
        ones for the rest (fio would round a range up past its end). fio --client takes
        job options from a job file only, so they go into one."""
        bulk = length - length % BULK
        lines = ["[global]", "ioengine=psync", "rw=trim", "thread=1", "allow_file_create=0",
                 f"filename={fio_job.fio_filename(self._filename())}"]
        if bulk:
            lines += ["[bulk]", f"bs={BULK}", f"offset={off}", f"size={bulk}"]
        if length - bulk:
            lines += ["[rest]", "bs=4096", f"offset={off + bulk}", f"size={length - bulk}"]
        job = os.path.join(self._wd(), f"trim-{off}-{length}.fio")
        with open(job, "w") as fh:
            fh.write("\n".join(lines) + "\n")
        return [self.fio, f"--client={self.remote.client}", "--output-format=json", job]

    def _run_trim(self, phase: Phase, spec: dict) -> PhaseResult:
        if self.kind == "file" or not (self.facts.get("info") or {}).get("discard"):
            return _empty(phase, {"duration_s": 0.0, "trim_bytes": 0.0, "trim_supported": 0.0})
        t0 = time.monotonic()
        r = super()._run_trim(phase, spec)
        r.totals["duration_s"] = time.monotonic() - t0
        return r

    def _purge_plan(self) -> PurgePlan:
        if self.kind == "block" and (self.facts.get("info") or {}).get("discard"):
            return PurgePlan("remote-trim", [self._trim_cmd(0, self.capacity)],
                             "drive on another host: a trim of the whole device through fio")
        return PurgePlan("none", [], "drive on another host without discard (or a file): "
                                     "nothing to reset it with through fio")

    def plan(self, phases: Iterable[Phase]) -> str:
        text = super().plan(phases)
        head = (f"# remote: fio --client={self.remote.client}; facts from ssdlab fio-server on "
                f"{self.remote.host} (pid {self.facts.get('pid', '?')}); writing jobs name its permit "
                f"{PERMIT_DIR}/{permit_key(self.path)}.dev, not {self.dev}\n")
        return head + text.replace(" fio --output-format", f" fio --client={self.remote.client} "
                                   "--output-format", )


def collect_logs(prefix: str) -> None:
    """fio --client writes the logs the server sends back as `<name>.log.<HOST>`: give them
    their local names (one host per work directory)."""
    d, base = os.path.split(prefix)
    for f in os.listdir(d or "."):
        if f.startswith(base + "_") and ".log." in f:
            os.replace(os.path.join(d, f), os.path.join(d, f[:f.index(".log.") + 4]))


__all__ = ["RemoteFioTarget", "RemoteSpec", "client_reports", "looks_remote", "parse_remote",
           "permit_key", "read_facts", "DEFAULT_PORT", "PERMIT_DIR"]
