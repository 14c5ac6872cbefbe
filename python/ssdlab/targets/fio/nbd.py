"""An NBD export driven by fio's nbd engine: `--drive nbd:SOCKET` (a Unix socket) or
`--drive nbd:nbd://HOST:PORT` (any NBD URI). Meant for drives `ssdlab serve` exports:
their socket carries a marker (served/marker.py), and writing to a served *simulated*
drive needs no --destroy-data. Any other export may be a real disk behind an NBD server,
so writing to it needs --destroy-data naming the same spec.

It is a transport of the fio target (fio/transport.py): the same jobs with
`ioengine=nbd`, the same logs, series and analyses. Trim phases and purge are fio trim
jobs over the export (purge: the whole export, method `nbd-trim`)."""

from __future__ import annotations

import dataclasses
import os
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

import numpy as np

from ... import safe_path
from ...phase import Identity, PhaseResult
from ...served import marker, stats
from ..guard import locks, safety
from .transport import Transport
from .identity import Telemetry
from ..guard.purge import PurgePlan
from ..spec import DriveSpec

BULK = 16 << 20  # trim requests of 16 MiB; the rest of a range in 4 KiB ones


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


def real_socket(path: str, spec: str) -> str:
    """A Unix socket's real path, reached through no link of another user. libnbd connects
    to it by name for each phase: through a link another user planted, the export checked
    (a served drive, no consent needed) and the one written could differ (the link swapped
    for one to another export, a real disk's, meanwhile)."""
    try:
        return safe_path.real(path, f"drive {spec}")
    except safe_path.UnsafePath as e:
        raise safety.UnsafeTarget(str(e)) from None


def own_socket(real: str, spec: str) -> None:
    """Writing an export by its socket: the socket is the caller's or root's, in directories
    no one else may write, so no one can swap it for a link to another export in the run."""
    try:
        safe_path.check_dirs(real, f"drive {spec}")
        st = os.lstat(real)
    except safe_path.UnsafePath as e:
        raise safety.UnsafeTarget(str(e)) from None
    except FileNotFoundError:
        return  # nbdinfo says it cannot connect
    if st.st_uid not in safe_path.trusted_uids():
        raise safety.UnsafeTarget(f"refusing drive {spec}: {real} belongs to uid {st.st_uid}, another user, who "
                                  "could swap it for a link to another export while it is written; write "
                                  "exports of your own")


class NbdExport(Transport):
    """An NBD export reached with fio's nbd engine. A drive `ssdlab serve` serves here is
    simulated (writing it destroys nothing real); any other export needs --destroy-data
    naming the same spec. Its purge and trims are fio trim jobs over the export."""

    kind = "nbd"
    engine = "nbd"
    batches = False  # io_done reads the served drive's counters over each phase's own span

    def __init__(self, spec: DriveSpec, fio: str):
        assert spec.nbd is not None
        self.spec, self.fio = spec.text, fio  # fio runs the export's trim jobs
        self.export = spec.nbd
        if self.export.socket is not None:  # connected to by its real path, checked
            self.export = dataclasses.replace(self.export, socket=real_socket(self.export.socket, self.spec))
        self.uri, self.socket = self.export.text, self.export.socket
        self.path = self.dev = self.socket or self.uri
        self.served = marker.served_here(self.socket) if self.socket else None
        self.capacity = export_size(self.uri)
        self.capacity -= self.capacity % 4096
        self.info = {"path": self.path, "uri": self.uri, "kind": "nbd", "capacity": self.capacity,
                     "served": self.served}
        self.telemetry = Telemetry(self.dev, "file")

    def lock(self) -> locks.DeviceLock:
        return locks.DeviceLock(self.export.key(), self.spec)

    def identity(self, extra: dict[str, Any]) -> Identity:
        extra.update(engine="nbd", telemetry="none")
        model = (f"ssdlab served {self.served['drive']}" if self.served else f"NBD export {self.uri}")
        return Identity(kind="nbd", model=model, capacity=self.capacity, firmware="",
                        serial=self.uri, extra=extra)

    def check_writes(self, destroy_data: str | None) -> None:
        if self.socket is not None:
            own_socket(self.socket, self.spec)
        if self.served:
            return  # a simulated drive: nothing real to destroy
        if destroy_data != self.spec:
            raise safety.UnsafeTarget(
                f"refusing to write {self.spec}: it is not a drive `ssdlab serve` is serving here "
                f"(an NBD export may be a real disk); if its data may be destroyed, add "
                f"--destroy-data {self.spec}")

    def filename(self) -> str:
        return self.uri

    def trim_command(self, offset: int, length: int) -> list[str]:
        """One fio run of trim jobs: 16 MiB requests, then 4 KiB ones for the rest (fio
        would round a range up to whole requests, past its end)."""
        self.info["discard"] = True
        bulk = length - length % BULK
        cmd = [self.fio, "--ioengine=nbd", f"--uri={self.uri}", "--rw=trim", "--thread"]
        if bulk:
            cmd += ["--name=bulk", f"--bs={BULK}", f"--offset={offset}", f"--size={bulk}"]
        if length - bulk:
            cmd += ["--name=rest", "--bs=4096", f"--offset={offset + bulk}", f"--size={length - bulk}"]
        return cmd

    def purge_plan(self) -> PurgePlan:
        return PurgePlan("nbd-trim", [self.trim_command(0, self.capacity)],
                         "NBD export: trim the whole export (a served drive unmaps everything)")

    def io_started(self) -> object:
        return time.time()

    def io_done(self, result: PhaseResult, token: object) -> None:
        """A served drive: its internal counters over the phase, beside fio's series
        (docs/serve.md), and the phase's WAF in the totals."""
        path = (self.served or {}).get("stats")
        if not path or not len(result.series.get("t_s", [])) or not isinstance(token, float):
            return
        time.sleep(1.1)  # the sample that closes the phase's last interval
        c = stats.counters_at(stats.StatsTail(Path(path)).drain(), token, result.series["t_s"])
        if not c:
            return
        result.series.update(c)
        host, nand = float(np.nansum(c["drive_host_write_bytes"])), float(np.nansum(c["nand_write_bytes"]))
        result.totals.update(nand_write_bytes=nand, waf=nand / host if host > 0 else float("nan"),
                             erases=float(np.nansum(c["erases"])), gc_moves=float(np.nansum(c["gc_moves"])),
                             free_blocks=float(c["free_blocks"][-1]),
                             slc_used_bytes=float(c["slc_used_bytes"][-1]))


__all__ = ["NbdExport"]
