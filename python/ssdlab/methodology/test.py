"""A test of the methodology as one object: its phases, its analysis, its figures, its cost
and the options it takes. The registry (methodology/__init__.py) lists these objects; the
CLI, the review and the report ask them, and never branch on a test's name."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Protocol, Sequence

from ..figures import FigureOptions
from ..figures.model import ReportRun
from ..phase import Phase, PhaseResult
from .common import Options


class Figure(Protocol):
    """One figure of a report, drawn for a list of runs of its test."""

    key: str  # unique within a report: the HTML element id and the PNG file stem

    def html(self) -> str:
        """A self-contained HTML fragment (plotly div, or a table)."""
        ...

    def png(self, out_dir: Path) -> list[Path]:
        """The publication PNG(s) of this figure, written into out_dir."""
        ...


# (runs of this test only, the reader's choices) -> figures; figures/ draws them
Figures = Callable[[Sequence[ReportRun], FigureOptions], Sequence[Figure]]


def no_figures(runs: Sequence[ReportRun], opts: FigureOptions) -> list[Figure]:
    return []


@dataclass(frozen=True)
class Test:
    name: str  # the CLI's name: `ssdlab run NAME`; the report's section id sec-NAME
    title: str  # the report's section heading
    phases: Callable[[int, Options], Iterable[Phase]]  # capacity, options -> the steps
    analyze: Callable[[list[PhaseResult], Options], dict]  # results -> metrics
    figures: Figures = no_figures
    default_seconds: float | None = None  # what --seconds sets; None: the test has no timed step
    seconds_help: str = ""
    cost: float = 1.0  # relative wall time at the defaults (the longest go first on workers)
    precondition_optional: bool = False  # --no-precondition allowed (reads an already filled drive)
    in_review: bool = True  # part of `ssdlab review` (False: tests of the user's own input)
    summary: str = ""  # one line for `--help` and docs
