"""The memory fio takes on a drive host to run one io phase, and the share of the host's
memory its agent lets one phase take (remote/limits.py refuses a phase over it).

What grows with the phase's fields (the job fio/jobs.py writes for it):
- I/O buffers: a block per request in flight, `queue_depth` per job, `jobs` jobs (fio
  allocates them when the job starts and fills them with fresh data: refill_buffers);
- the latency histogram log (write_hist_log, a window every jobs.hist_window_ms: 100 ms,
  longer for a timed phase of more than an hour, never longer than a sample interval): fio keeps each window's whole histogram (1856 counters, 8 bytes
  each) of each job and direction in memory until the job ends, 10 windows a second:
  145 KiB a second per job and direction (fio 3.33: a 15 s job in 1 ms windows peaked at
  249 MB, in 1 s windows at 30 MB);
- the IOPS, bandwidth and latency logs: an entry per sample interval each, also kept to
  the end.
The logs are counted over `stop_seconds`; a phase that stops after `stop_bytes` alone
lasts as long as the drive takes, which the phase does not say: `Watch` looks at what fio
takes while the phase runs, and stops it past the bound.

A phase may take at most what the host's owner gives (`ssdlab agent --fio-memory SIZE`),
or else HOST_SHARE of the memory the host has available when it is checked (MemAvailable,
and the room under this process's cgroup memory limits)."""

from __future__ import annotations

import math
import os
import threading
from pathlib import Path
from typing import Callable

from ...phase import Phase
from ..fio import jobs

HOST_SHARE = 0.5
HIST_WINDOW_BYTES = 1856 * 8  # fio's FIO_IO_U_PLAT_NR counters, one histogram a window
LOG_ENTRY_BYTES = 64  # one entry of an IOPS, bandwidth or latency log (with its list overhead)
AVG_LOGS = 3  # write_iops_log, write_bw_log, write_lat_log


def directions(p: Phase) -> int:
    return 2 if 0 < p.read_pct < 100 else 1


def buffers(p: Phase) -> int:
    """Bytes of I/O buffers fio allocates for the phase."""
    return p.jobs * p.queue_depth * p.block_size


def logs(p: Phase) -> float:
    """Bytes fio keeps of its logs by the end of a phase of `stop_seconds` (0 without)."""
    if not p.stop_seconds:
        return 0.0
    avg_ms = max(1, round(p.sample_interval_s * 1000))
    hist_ms = jobs.hist_window_ms(avg_ms, p.stop_seconds)
    ms = p.stop_seconds * 1000
    per_stream = ms / hist_ms * HIST_WINDOW_BYTES + ms / avg_ms * AVG_LOGS * LOG_ENTRY_BYTES
    return p.jobs * directions(p) * per_stream


def footprint(p: Phase) -> float:
    """Bytes fio takes for io phase `p`, by what grows with its fields (module docstring)."""
    return buffers(p) + logs(p)


def _kb_field(text: str, key: str) -> float | None:
    for line in text.splitlines():
        if line.startswith(key + ":"):
            try:
                return float(line.split()[1]) * 1024
            except (IndexError, ValueError):
                return None
    return None


def _cgroup_room() -> float:
    """Room left under the cgroup v2 memory limits of this process and its ancestors."""
    try:
        rel = next(x[3:] for x in Path("/proc/self/cgroup").read_text().splitlines() if x.startswith("0::"))
    except (OSError, StopIteration):
        return math.inf
    room = math.inf
    d = Path("/sys/fs/cgroup") / rel.strip("/")
    while d != Path("/sys/fs/cgroup") and Path("/sys/fs/cgroup") in d.parents:
        try:
            limit, used = ((d / f).read_text().strip() for f in ("memory.max", "memory.current"))
            room = min(room, max(0.0, float(limit) - float(used)))
        except (OSError, ValueError):  # no controller here, or "max"
            pass
        d = d.parent
    return room


def available() -> float:
    """Bytes this host can still give a process (inf when it does not say)."""
    try:
        text = Path("/proc/meminfo").read_text()
    except OSError:
        text = ""
    mem = _kb_field(text, "MemAvailable")
    return min(mem if mem is not None else math.inf, _cgroup_room())


def bound(given: int | None = None) -> float:
    """Bytes one phase's fio may take on this host now: `given` by its owner, or a share of
    what it has available."""
    return float(given) if given else HOST_SHARE * available()


def whose(given: int | None) -> str:
    return "as --fio-memory says" if given else "half of what it has available"


WATCH_S = 0.5


def children_rss(pid: int) -> int:
    """Resident bytes of the processes `pid` started (fio), from /proc."""
    total = 0
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            ppid = int(Path(f"/proc/{d}/stat").read_text().rsplit(")", 1)[1].split()[1])
            if ppid == pid:
                total += int(_kb_field(Path(f"/proc/{d}/status").read_text(), "VmRSS") or 0)
        except (OSError, ValueError, IndexError):  # gone meanwhile
            continue
    return total


class Watch:
    """While a phase runs (`with Watch(limit, on_over):`): what the processes this one
    started take, every WATCH_S; `on_over` is called once when it passes `limit`."""

    def __init__(self, limit: float, on_over: Callable[[], None]):
        self.limit = limit
        self.on_over = on_over
        self.over = False
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._watch, daemon=True)

    def _watch(self) -> None:
        me = os.getpid()
        while not self.done.wait(WATCH_S):
            if children_rss(me) > self.limit:
                self.over = True
                self.on_over()
                return

    def __enter__(self) -> "Watch":
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.done.set()
        self.thread.join()


def size(n: float) -> str:
    for unit, scale in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6)):
        if n >= scale:
            return f"{n / scale:.3g} {unit}"
    return f"{n / 1e3:.3g} kB"


__all__ = ["HOST_SHARE", "Watch", "available", "bound", "buffers", "children_rss", "footprint", "logs", "size",
           "whose"]
