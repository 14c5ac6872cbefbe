"""What the CLI prints: JSON, tables (rich on a terminal, tab-separated otherwise) and
progress bars on stderr."""

from __future__ import annotations

import json
import math
import sys
import time
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Iterator

from ..errors import printable
from ..figures.data import CPU_WAIT_SHOWN_PCT
from ..phase import Phase
from ..runner import Hooks
from ..store import jsonable

if TYPE_CHECKING:
    from rich.progress import TaskID


# ---- output --------------------------------------------------------------------------------
def is_tty() -> bool:
    return sys.stdout.isatty()


def print_json(doc: Any) -> None:
    sys.stdout.write(json.dumps(jsonable(doc), indent=1, allow_nan=False) + "\n")


def fmt(v: Any) -> str:
    if v is None or isinstance(v, float) and math.isnan(v):  # unknown, or no such figure (one run's spread)
        return "-"
    if isinstance(v, float):
        return f"{v:.4g}" if abs(v) < 1e4 else f"{v:.0f}"
    if isinstance(v, (dict, list)):
        return json.dumps(jsonable(v), separators=(",", ":"))
    return printable(str(v))  # stored text (a tag, a drive's name) never drives the terminal


def pct_cell(p: float | None) -> str | None:
    """A % change as a table shows it: signed, one decimal, so a column reads alike ("+24.9",
    "-6.0"); no change (or less than 0.05) is "0.0", never "-0.0"; None when unknown."""
    if p is None or math.isnan(p):
        return None
    r = round(p, 1)
    return "0.0" if r == 0 else f"{r:+.1f}"


def emit_table(title: str, headers: list[str], rows: list[list[Any]]) -> None:
    """A rich table on a terminal, tab-separated lines otherwise."""
    if is_tty():
        from rich.console import Console
        from rich.markup import escape
        from rich.table import Table

        # stored text (a drive's path, a tag) is shown as it is, never read as rich markup:
        # `[red]` in a file's name is not a colour, `[/]` not a tag to close (an error)
        t = Table(title=escape(fmt(title)))
        for h in headers:
            t.add_column(escape(fmt(h)))
        for r in rows:
            t.add_row(*(escape(fmt(x)) for x in r))
        Console().print(t)
    else:
        # a title and a column may name a stored drive too: no control character either
        print(f"# {fmt(title)}")
        print("\t".join(fmt(h) for h in headers))
        for r in rows:
            print("\t".join(fmt(x) for x in r))


# ---- progress ------------------------------------------------------------------------------
class RichHooks(Hooks):
    """A progress bar per phase on stderr, with ETA and the live MB/s or IOPS."""

    def __init__(self) -> None:
        from rich.console import Console
        from rich.progress import (BarColumn, Progress, TaskProgressColumn, TextColumn,
                                   TimeRemainingColumn)

        self.progress = Progress(TextColumn("{task.description}"), BarColumn(),
                                 TaskProgressColumn(), TimeRemainingColumn(),
                                 TextColumn("{task.fields[live]}"),
                                 console=Console(stderr=True), transient=True)
        self.task: TaskID | None = None  # the running phase's bar

    def __enter__(self) -> "RichHooks":
        self.progress.start()
        return self

    def __exit__(self, *exc) -> None:
        self.progress.stop()

    def phase_start(self, drive: str, test: str, phase: Phase, seq: int) -> None:
        self.phase, self.done, self.last_t = phase, 0.0, 0.0
        self.started = time.monotonic()
        # an io phase stops after its bytes or its seconds, an idle one after its seconds
        # (Phase's validator); any other kind shows a bar without a total
        stop: float | None = None
        self.by_bytes = False
        if phase.kind == "io":
            self.by_bytes = phase.stop_bytes is not None
            stop = phase.stop_bytes if phase.stop_bytes is not None else phase.stop_seconds
        elif phase.kind == "idle":
            stop = phase.seconds
        total = None if stop is None else float(stop)
        self.iops_view = phase.pattern == "rand" and phase.block_size < 64 * 1024
        from rich.markup import escape

        self.task = self.progress.add_task(escape(f"{drive} {test} #{seq} {phase.name or phase.kind}"),
                                           total=total, live="")

    def sample(self, row: dict) -> None:
        t = float(row.get("t_s", self.last_t + 1.0))
        mbps = float(row.get("mbps", 0.0) or 0.0)
        if self.by_bytes:
            self.done += mbps * 1e6 * max(0.0, t - self.last_t)
        else:
            self.done = t
        self.last_t = t
        live = f"{row.get('iops', 0.0):,.0f} IOPS" if self.iops_view else f"{mbps:,.0f} MB/s"
        if self.task is not None:
            self.progress.update(self.task, completed=self.done, live=live)

    def phase_end(self, result) -> None:
        # one bar at a time; a phase that took a while leaves a line behind
        if self.task is None:
            return
        task = next(t for t in self.progress.tasks if t.id == self.task)
        if time.monotonic() - self.started > 2.0:
            self.progress.console.print(f"{task.description}  {task.fields['live']}  "
                                        f"({time.monotonic() - self.started:.0f} s){held_back(result.totals)}")
        self.progress.remove_task(self.task)


def held_back(totals: dict) -> str:
    """What a real phase's line adds when the host kept fio waiting for a CPU (the report
    draws that panel from the same share)."""
    most = totals.get("cpu_wait_max_pct")
    if not isinstance(most, (int, float)) or not most >= CPU_WAIT_SHOWN_PCT:
        return ""
    return f"; fio waited for a CPU up to {most:.0f} % of a second (the host held it back)"


@contextmanager
def progress_hooks() -> Iterator[Hooks]:
    """Bars only for a person at a terminal; they go to stderr, so --json stdout stays clean."""
    if sys.stdout.isatty() and sys.stderr.isatty():
        with RichHooks() as h:
            yield h
    else:
        yield Hooks()


# ---- commands ------------------------------------------------------------------------------
