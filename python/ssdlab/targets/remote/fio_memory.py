"""The share of a drive host's memory its agent lets one phase's fio take (remote/limits.py
refuses a phase whose estimate is over it, fio/memory.py estimating), and the watch that
stops a phase whose fio grows past it while it runs (a drive slower than the estimate
assumes runs longer).

A phase may take at most what the host's owner gives (`ssdlab agent --fio-memory SIZE`),
or else HOST_SHARE of the memory the host has available when it is checked (MemAvailable,
and the room under this process's cgroup memory limits)."""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Callable

from ..fio.memory import PLAN_PREFIX, PLAN_REFUSED, kb_field, available, buffers, footprint, largest, logs, size

HOST_SHARE = 0.5


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
                total += int(kb_field(Path(f"/proc/{d}/status").read_text(), "VmRSS") or 0)
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


__all__ = ["HOST_SHARE", "PLAN_PREFIX", "PLAN_REFUSED", "Watch", "available", "bound", "buffers", "children_rss",
           "footprint", "largest", "logs", "size", "whose"]
