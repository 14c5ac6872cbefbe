"""One fio process on a real drive: started on a job file, its JSON reports handed to a
callback as fio prints them (the status every second, then the final one), stopped
cleanly on Ctrl-C; and what went wrong when it ends without a usable report. One io
phase (target.py) and a batch of them (batch.py) both run through it."""

from __future__ import annotations

import io
import os
import queue
import subprocess
import threading
from typing import Callable, cast

from .. import child
from ...fioformat import json_read
from .failure import FioFailed

OnReport = Callable[[dict], None]


class Invocation:
    """fio running `cmd`; `pump` until the end of its output, `stop` on an interrupt."""

    def __init__(self, cmd: list[str], as_reports: Callable[[dict], list[dict]]):
        self.as_reports = as_reports
        # own session: a terminal's Ctrl-C reaches us, and we stop fio cleanly; if we die
        # anyway, the kernel stops fio (no orphan writing on to the drive)
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     start_new_session=True, preexec_fn=child.die_with_parent())
        # both pipes exist (stdout=PIPE, stderr=PIPE), and with the default buffering each is
        # an io.BufferedReader: the type Popen declares (IO[bytes] | None) is wider
        self.out_pipe = cast(io.BufferedReader, self.proc.stdout)
        self.err_pipe = cast(io.BufferedReader, self.proc.stderr)
        self.chunks: queue.Queue[bytes | None] = queue.Queue()
        self.err_parts: list[bytes] = []
        self.stream = json_read.JsonStream()
        self.reports = 0  # how many reports fio printed
        self.threads = [threading.Thread(target=self._pump_out, daemon=True),
                        threading.Thread(target=self._pump_err, daemon=True)]
        for t in self.threads:
            t.start()

    def _pump_out(self) -> None:
        fd = self.out_pipe.fileno()
        while True:
            b = os.read(fd, 1 << 16)
            if not b:
                break
            self.chunks.put(b)
        self.chunks.put(None)

    def _pump_err(self) -> None:
        for b in iter(lambda: self.err_pipe.read1(1 << 16), b""):
            self.err_parts.append(b)

    def _feed(self, chunk: bytes, on_report: OnReport) -> None:
        for obj in self.stream.feed(chunk.decode(errors="replace")):
            for rep in self.as_reports(obj):
                self.reports += 1
                on_report(rep)

    def pump(self, on_report: OnReport) -> None:
        """Every report to `on_report` as fio prints it, until fio has exited."""
        while True:
            try:
                c = self.chunks.get(timeout=0.25)
            except queue.Empty:
                continue
            if c is None:
                break
            self._feed(c, on_report)
        self.proc.wait()

    def stop(self, timeout: float = 30) -> None:
        """Stop fio (it prints its final report as it goes) and let go of the pipes."""
        child.stop(self.proc)
        self.close(timeout)

    def close(self, timeout: float = 30) -> None:
        for t in self.threads:
            t.join(timeout=timeout)
        for pipe in (self.out_pipe, self.err_pipe):
            pipe.close()

    def drain(self, on_report: OnReport) -> None:
        """After `stop` or the end: what fio printed and was not pumped yet."""
        while True:
            try:
                c = self.chunks.get_nowait()
            except queue.Empty:
                break
            if c is not None:
                self._feed(c, on_report)
        self.stream.close()

    def failure(self, spec: str) -> FioFailed | None:
        """Why this finished fio left no usable report (None when it did)."""
        rc = self.proc.returncode
        if rc == 0 and self.stream.torn_tail:
            return FioFailed(f"fio's final report on {spec} is incomplete (its output was cut "
                             "short), so the phase's figures are unknown")
        if rc == 0 and self.reports:
            return None
        err = b"".join(self.err_parts).decode(errors="replace").strip().splitlines()
        noise = [x for x in self.stream.noise if x.strip()]
        lines = [x.strip() for x in (err or noise) if x.strip()]
        why = "; ".join(dict.fromkeys(lines[-2:])) or f"exit status {rc}"
        if "direct" in why.lower() or "Invalid argument" in why:
            why += " (direct I/O needs a filesystem that supports O_DIRECT)"
        return FioFailed(f"fio failed on {spec}: {why}", not self.reports)
