"""A report drawn in pieces: each test's section of the page and its PNGs are units of
work (executor.py), so they can be drawn as soon as that test's runs exist (a review draws
a finished test's figures while its other tests still run); the page is put together
around the sections once every run is in. A piece drawn early is used only if the report's
runs of that test look as they did then: a later run can rename a drive (two drives of
one label get their specs added, report/store_adapter.py), and such a test is drawn again."""

from __future__ import annotations

from typing import Any

from .. import methodology
from ..executor import Done, Unit
from ..figures.model import ReportRun
from .page import by_test, section
from .pngs import pngs_of_test

KIND = "report"  # the first part of every unit key of a drawing
SECTION, PNGS = "section", "pngs"


def section_of(test: str, runs: list[ReportRun], y_max: float | None) -> str:
    """A unit's work (module level: pickled to a worker): one test's section of the page."""
    return section(methodology.ALL[test], runs, y_max)


def _seen(runs: list[ReportRun]) -> tuple:
    """What a test's figures are drawn from that another test's runs can change."""
    return tuple((r.run_id, tuple(d.label for d in r.drives)) for r in runs)


class Drawing:
    """The pieces of one report (`y_max` and `png` as build_runs_report takes them), as
    drawn so far: `units` gives the units of some runs' tests, `take` keeps what they
    returned, `missing` the units still needed for the whole report's runs."""

    def __init__(self, y_max: float | None = None, png: bool = True):
        self.y_max, self.png = y_max, png
        self.asked: dict[tuple[str, str], tuple] = {}  # (kind, test) -> the runs it was drawn from
        self.drawn: dict[tuple[str, str], Done] = {}

    def units(self, runs: list[ReportRun]) -> list[Unit]:
        """Each test's section and PNGs (the section first: the page waits for every one)."""
        out = []
        for test, mine in by_test(runs):
            kinds = [SECTION] + ([PNGS] if self.png else [])
            for kind in kinds:
                self.asked[(kind, test.name)] = _seen(mine)
                self.drawn.pop((kind, test.name), None)
            out.append(Unit((KIND, SECTION, test.name), section_of, (test.name, mine, self.y_max),
                            cost=len(mine) + 1.0))
            if self.png:
                out.append(Unit((KIND, PNGS, test.name), pngs_of_test, (mine, self.y_max),
                                cost=float(len(mine))))
        return out

    def take(self, done: Done) -> bool:
        """Keep `done` if it is one of this drawing's units (True), else leave it (False)."""
        key = done.key
        if not (isinstance(key, tuple) and len(key) == 3 and key[0] == KIND):
            return False
        self.drawn[(key[1], key[2])] = done
        return True

    def missing(self, runs: list[ReportRun]) -> list[Unit]:
        """The units the report of `runs` still needs: tests not drawn (or not back yet),
        and tests drawn from runs that now look different (handed out as `units` does:
        what they return replaces what was drawn)."""
        stale = [(test, mine) for test, mine in by_test(runs)
                 if any((kind, test.name) not in self.drawn
                        or self.asked.get((kind, test.name)) != _seen(mine)
                        for kind in [SECTION] + ([PNGS] if self.png else []))]
        return self.units([r for _, mine in stale for r in mine])

    def sections(self, runs: list[ReportRun]) -> list[str]:
        return [self._value(SECTION, test.name) for test, _ in by_test(runs)]

    def pngs(self, runs: list[ReportRun]) -> list[tuple[str, bytes]]:
        if not self.png:
            return []
        return [p for test, _ in by_test(runs) for p in self._value(PNGS, test.name)]

    def _value(self, kind: str, test: str) -> Any:
        done = self.drawn[(kind, test)]
        if done.error is not None:
            raise done.error
        return done.value


__all__ = ["Drawing", "section_of"]
