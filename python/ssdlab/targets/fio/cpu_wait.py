"""How long fio waited for a CPU: a busy host, not the drive, can set a real drive's speed
(a fill's "cache" that ends where another program started, a consistency run's dips).

Once a second, for every task of fio's session (fio runs in a session of its own, and its
job processes and threads stay in it), the kernel's run-queue wait (`/proc/PID/task/TID/
schedstat`, second field: nanoseconds spent ready to run but not running) is read; the
sample is the share of that second the busiest task waited, in percent. A task that waits
30 % of a second could not submit or reap I/O for 0.3 s: at any queue depth the drive then
sat partly idle. Nothing is sampled where the kernel keeps no schedstat."""

from __future__ import annotations

import os
import threading
import time

INTERVAL_S = 1.0


def session_tasks(sid: int, proc: str = "/proc") -> list[str]:
    """The schedstat paths of every task (thread) of every process in session `sid`."""
    out: list[str] = []
    try:
        pids = [p for p in os.listdir(proc) if p.isdigit()]
    except OSError:
        return out
    for pid in pids:
        try:
            with open(f"{proc}/{pid}/stat", "rb") as fh:
                stat = fh.read()
            # the fields after the command name (which may hold spaces and parentheses)
            fields = stat[stat.rindex(b")") + 2:].split()
            if int(fields[3]) != sid:  # state ppid pgrp session ...
                continue
            out += [f"{proc}/{pid}/task/{tid}/schedstat" for tid in os.listdir(f"{proc}/{pid}/task")]
        except (OSError, ValueError, IndexError):
            continue  # gone meanwhile
    return out


def waited_ns(paths: list[str]) -> dict[str, int]:
    """Each task's run-queue wait so far (ns); a task gone meanwhile is left out."""
    out = {}
    for p in paths:
        try:
            with open(p, "rb") as fh:
                out[p] = int(fh.read().split()[1])
        except (OSError, ValueError, IndexError):
            continue
    return out


def busiest_share(before: dict[str, int], after: dict[str, int], seconds: float) -> float:
    """The largest share (%) of `seconds` one task spent waiting between two readings; a task
    that started in between counts from zero (it waited only since)."""
    if seconds <= 0:
        return 0.0
    most = max((ns - before.get(p, 0) for p, ns in after.items()), default=0)
    return min(100.0, max(0.0, most / 1e9 / seconds * 100.0))


class CpuWaitSampler:
    """Samples fio's wait for a CPU about once a second in a thread: (t, percent) on the
    clock that starts at `t0` (time.monotonic(); the temperature sampler's, so both line up)."""

    def __init__(self, sid: int, t0: float, interval_s: float = INTERVAL_S, proc: str = "/proc"):
        self.sid, self.t0, self.interval, self.proc = sid, t0, interval_s, proc
        self.samples: list[tuple[float, float]] = []
        self._stop = threading.Event()
        self._t: threading.Thread | None = None

    def start(self) -> "CpuWaitSampler":
        if os.path.exists(f"{self.proc}/self/schedstat"):
            self._t = threading.Thread(target=self._loop, daemon=True, name="ssdlab-cpu-wait")
            self._t.start()
        return self

    def _loop(self) -> None:
        last_t, last = time.monotonic(), waited_ns(session_tasks(self.sid, self.proc))
        while not self._stop.wait(self.interval):
            now_t, now = time.monotonic(), waited_ns(session_tasks(self.sid, self.proc))
            if now:
                self.samples.append((now_t - self.t0, busiest_share(last, now, now_t - last_t)))
            last_t, last = now_t, now

    def stop(self) -> list[tuple[float, float]]:
        self._stop.set()
        if self._t:
            self._t.join(timeout=15)
        return self.samples
