"""One progress bar over independent units (sweep points, review tests, validate runs)
with live done/failed counts, on stderr for a person at a terminal (nothing otherwise:
--json stdout stays clean)."""

from __future__ import annotations

import sys


def _plain(text: str) -> str:
    """`text` shown as it is on the bar's console, never read as rich markup."""
    from rich.markup import escape

    return escape(text)


class UnitsProgress:
    def __init__(self, title: str, total: int, skipped: int = 0, where: str = ""):
        self.title, self.total, self.where = title, total, where
        self.done = self.failed = 0
        self.skipped = skipped
        self.bar = None
        if sys.stdout.isatty() and sys.stderr.isatty():
            from rich.console import Console
            from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn,
                                       TimeElapsedColumn, TimeRemainingColumn)

            self.bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                                TextColumn("{task.fields[counts]}"), TimeElapsedColumn(),
                                TimeRemainingColumn(), console=Console(stderr=True))

    def __enter__(self) -> "UnitsProgress":
        if self.bar is not None:
            self.bar.start()
            self.task = self.bar.add_task(_plain(self.title), total=self.total, completed=self.skipped,
                                          counts=self._counts())
            if self.where:
                self.bar.console.print(_plain(f"{self.title}: {self.total} units {self.where}"
                                              + (f", {self.skipped} already done" if self.skipped else "")))
        return self

    def __exit__(self, *exc) -> None:
        if self.bar is not None:
            self.bar.stop()

    def _counts(self) -> str:
        return (f"done {self.done}  failed {self.failed}"
                + (f"  skipped {self.skipped}" if self.skipped else ""))

    def finished(self, ok: bool, label: str = "") -> None:
        if ok:
            self.done += 1
        else:
            self.failed += 1
        if self.bar is not None:
            self.bar.update(self.task, advance=1, counts=self._counts())
            if label:
                self.bar.console.print(_plain(label))  # a point's values and error, not markup
