"""An NBD export driven by fio's nbd engine: `--drive nbd:SOCKET` (a Unix socket) or
`--drive nbd:nbd://HOST:PORT` (any NBD URI). Meant for drives `ssdlab serve` exports:
their socket carries a marker (serve/nbdkit.py), and writing to a served *simulated*
drive needs no --destroy-data. Any other export may be a real disk behind an NBD server,
so writing to it needs --destroy-data naming the same spec.

Everything else is the fio path of a real drive (FioTarget): the same jobs with
`ioengine=nbd`, the same logs, series and analyses. Trim phases and purge are fio trim
jobs over the export (purge: the whole export, method `nbd-trim`)."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

import numpy as np

from ..serve import nbdkit, stats
from . import locks, safety
from ..phase import Identity
from .fio import FioTarget
from .identity import Telemetry
from .purge import PurgePlan

BULK = 16 << 20  # trim requests of 16 MiB; the rest of a range in 4 KiB ones


def parse_nbd(spec: str) -> tuple[str, str | None]:
    """(uri, socket path or None) of `nbd:SOCKET` or `nbd:URI`."""
    rest = spec[4:]
    if not rest:
        raise ValueError(f"drive '{spec}': write nbd:SOCKET (a Unix socket path) or nbd:nbd://HOST:PORT")
    if "://" in rest:
        if not rest.startswith(("nbd://", "nbd+unix://", "nbds://", "nbds+unix://")):
            raise ValueError(f"drive '{spec}': an NBD URI starts with nbd:// or nbd+unix://")
        sock = None
        if "socket=" in rest:
            sock = rest.split("socket=", 1)[1].split("&", 1)[0]
        return rest, sock
    path = os.path.abspath(rest)
    if not os.path.exists(path):
        raise ValueError(f"drive '{spec}': no socket {path}; start one with `ssdlab serve sim:PROFILE --socket {rest}`")
    return f"nbd+unix:///?socket={path}", path


def export_size(uri: str) -> int:
    exe = shutil.which("nbdinfo")
    if not exe:
        raise ValueError("nbdinfo is not installed (ssdlab reads an NBD export's size with it): "
                         "install it with `apt-get install libnbd-bin`")
    try:
        r = subprocess.run([exe, "--size", uri], capture_output=True, text=True, timeout=30)
    except subprocess.TimeoutExpired:
        raise ValueError(f"NBD export {uri}: no answer within 30 s") from None
    if r.returncode != 0 or not r.stdout.strip().isdigit():
        why = (r.stderr.strip().splitlines() or ["no size"])[-1]
        raise ValueError(f"NBD export {uri}: cannot connect ({why}); is `ssdlab serve` running?")
    return int(r.stdout.strip())


class NbdTarget(FioTarget):
    def __init__(self, spec: str, destroy_data: str | None = None, plan: bool = False):
        # FioTarget's __init__ is for devices and files; set up what its methods use
        self.spec = spec
        self.destroy_data = destroy_data
        self.plan_mode = plan
        self.uri, self.socket = parse_nbd(spec)
        self.kind, self.path = "nbd", self.socket or self.uri
        self.name = spec
        self.fio = shutil.which("fio") or "fio"
        if not plan:
            self.fio = super_fio()
        self._lock = None
        self._excl_fd = None
        self._write_ok = False
        self._engine = "nbd"
        self._fio_version = None
        self._workdir = None
        self._nphase = 0
        self.purges: list[str] = []
        self.served = nbdkit.served_here(self.socket) if self.socket else None
        self.capacity = export_size(self.uri)
        self.capacity -= self.capacity % 4096
        self.dev = self.path
        self.info = {"path": self.path, "uri": self.uri, "kind": "nbd", "capacity": self.capacity,
                     "served": self.served}
        self.telemetry = Telemetry(self.dev, "file")
        if not plan:
            self._lock = locks.DeviceLock(f"nbd:{os.path.realpath(self.path) if self.socket else self.uri}",
                                          spec).acquire()

    def identify(self) -> Identity:
        extra: dict[str, Any] = dict(self.info)
        extra.update(fio=self.fio_version, engine="nbd", telemetry="none", purges=list(self.purges))
        model = (f"ssdlab served {self.served['drive']}" if self.served else f"NBD export {self.uri}")
        return Identity(kind="nbd", model=model, capacity=self.capacity, firmware="",
                        serial=self.uri, extra=extra)

    def check_writes(self) -> None:
        if self.served:
            return  # a simulated drive: nothing real to destroy
        if self.destroy_data != self.spec:
            raise safety.UnsafeTarget(
                f"refusing to write {self.spec}: it is not a drive `ssdlab serve` is serving here "
                f"(an NBD export may be a real disk); if its data may be destroyed, add "
                f"--destroy-data {self.spec}")

    def allow_writes(self) -> None:
        if not self._write_ok:
            self.check_writes()
            self._write_ok = True

    def _ensure_file(self, create: bool) -> None:
        pass

    def _filename(self) -> str:
        return self.uri

    def _trim_cmd(self, off: int, length: int) -> list[str]:
        """One fio run of trim jobs: 16 MiB requests, then 4 KiB ones for the rest (fio
        would round a range up to whole requests, past its end)."""
        bulk = length - length % BULK
        cmd = [self.fio, "--ioengine=nbd", f"--uri={self.uri}", "--rw=trim", "--thread"]
        if bulk:
            cmd += ["--name=bulk", f"--bs={BULK}", f"--offset={off}", f"--size={bulk}"]
        if length - bulk:
            cmd += ["--name=rest", "--bs=4096", f"--offset={off + bulk}", f"--size={length - bulk}"]
        return cmd

    def _run_trim(self, phase, spec):
        self.info["discard"] = True
        return super()._run_trim(phase, spec)

    def _purge_plan(self) -> PurgePlan:
        return PurgePlan("nbd-trim", [self._trim_cmd(0, self.capacity)],
                         "NBD export: trim the whole export (a served drive unmaps everything)")

    def _run_io(self, phase, spec, on_sample):
        t0 = time.time()
        r = super()._run_io(phase, spec, on_sample)
        self._add_drive_counters(r, t0)
        return r

    def _add_drive_counters(self, r, t0: float) -> None:
        """A served drive: its internal counters over the phase, beside fio's series
        (docs/serve.md), and the phase's WAF in the totals."""
        path = (self.served or {}).get("stats")
        if not path or not len(r.series.get("t_s", [])):
            return
        time.sleep(1.1)  # the sample that closes the phase's last interval
        c = stats.counters_at(stats.read_lines(Path(path)), t0, r.series["t_s"])
        if not c:
            return
        r.series.update(c)
        host, nand = float(np.nansum(c["drive_host_write_bytes"])), float(np.nansum(c["nand_write_bytes"]))
        r.totals.update(nand_write_bytes=nand, waf=nand / host if host > 0 else float("nan"),
                        erases=float(np.nansum(c["erases"])), gc_moves=float(np.nansum(c["gc_moves"])),
                        free_blocks=float(c["free_blocks"][-1]), slc_used_bytes=float(c["slc_used_bytes"][-1]))



def super_fio() -> str:
    from .fio import fio_binary_checked

    return fio_binary_checked()


__all__ = ["NbdTarget", "parse_nbd"]
