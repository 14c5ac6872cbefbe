"""A test of the methodology as one object: its phases, its analysis, its figures, its cost
and the options it takes. The registry (methodology/__init__.py) lists these objects; the
CLI, the review and the report ask them, and never branch on a test's name."""

from __future__ import annotations

from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Protocol, Sequence

from ..errors import UserError
from ..figures import FigureOptions
from ..figures.model import ReportRun
from ..phase import Batch, Phase, PhaseResult
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
class CliOption:
    """One option of `ssdlab run` that belongs to a test (or to several: the same name,
    flag, type and default): the CLI builds its `run` command from these."""

    name: str  # the keyword the values come under (a Python identifier)
    flag: str  # "--trace"; for a positional argument its metavar ("JOB")
    type: Any  # the annotation typer reads (Optional[Path], float, bool ...)
    default: Any
    help: str
    argument: bool = False  # positional, after the test's name

    def argv(self, value: Any) -> list[str]:
        """The value as `ssdlab run` takes it again (a fleet member's own command line)."""
        if value == self.default or value is None:
            return []
        if self.argument:
            return [str(value)]
        if isinstance(value, bool):
            return [self.flag]
        if isinstance(value, list):  # a repeated option: each value after its flag
            return [x for v in value for x in (self.flag, str(v))]
        return [self.flag, repr(value) if isinstance(value, float) else str(value)]


class Console(Protocol):
    """What a test's options may say while they are checked: a note on stderr, a progress
    bar while a big input file is read."""

    def note(self, line: str) -> None: ...

    def reading(self, path: str) -> AbstractContextManager[Callable[[int, int], None]]: ...


class TestOptions:
    """A test's own options: its `run` flags (`cli`), checked into one typed object that
    the run carries (Options.own), stores with its arguments and may print its own way.
    A test module subclasses this; the defaults carry nothing."""

    cli: tuple[CliOption, ...] = ()

    def parse(self, values: dict[str, Any], console: Console) -> Any:
        """The options from the flags' values (a key for every name in `cli`), before any
        drive is opened; a mistake raises UserError (one line). None: nothing to carry."""
        return None

    def for_drives(self, parsed: Any, values: dict[str, Any], drives: Sequence[tuple[str, Any]],
                   seed: int, console: Console) -> Any:
        """The options once the drives are open (e.g. a job compiled for their capacity)."""
        return parsed

    def stored(self, parsed: Any, values: dict[str, Any]) -> dict[str, Any]:
        """What the run's stored arguments keep of them."""
        return {}

    def show(self, doc: dict[str, Any], parsed: Any, values: dict[str, Any], store: Any,
             outcomes: Sequence[Any], console: Console) -> tuple[list[str | dict[str, Any]], bool] | None:
        """The result printed the test's own way: (blocks for stdout: lines of text, or
        documents printed as JSON; True when stdout holds only those documents, as fio's
        JSON); None: the CLI prints its metric tables."""
        return None


class Silent:
    """A Console that says nothing (options parsed at their defaults, to see if they can be)."""

    def note(self, line: str) -> None:
        pass

    def reading(self, path: str) -> AbstractContextManager[Callable[[int, int], None]]:
        return nullcontext(lambda done, total: None)


@dataclass(frozen=True)
class Test:
    name: str  # the CLI's name: `ssdlab run NAME`; the report's section id sec-NAME
    title: str  # the report's section heading
    # capacity, options -> the steps (a Batch: steps handed over at once, results as a list)
    phases: Callable[[int, Options], Iterable[Phase | Batch]]
    analyze: Callable[[list[PhaseResult], Options], dict[str, Any]]  # results -> metrics
    figures: Figures = no_figures
    default_seconds: float | None = None  # what --seconds sets; None: the test has no timed step
    # the options every `run` shares that the test reads besides --seconds (which
    # default_seconds says): one given to a test that does not read it gets a warning
    uses: frozenset[str] = frozenset({"spare"})
    seconds_help: str = ""
    # relative wall time at the defaults, the longest first on workers: the CPU seconds of
    # `ssdlab run NAME --drive sim:tlc-256` (2026-12-05, AMD EPYC; the review's application
    # workload for trace; fio, whose work is the job file's, keeps 1.0)
    cost: float = 1.0
    precondition_optional: bool = False  # --no-precondition allowed (reads an already filled drive)
    in_review: bool = True  # part of `ssdlab review` (False: tests of the user's own input)
    summary: str = ""  # one line for `--help` and docs
    options: TestOptions | None = None  # its own `run` flags; None: the common ones only
    # an input test the review runs last, with these options for the smallest drive's capacity
    review_options: Callable[[int], Any] | None = None
    spare_matters: bool = False  # reports name the spare area even at 0 % (consistency)
    keeps_segments: bool = False  # its last pass's per-GB segments are a result (fill curves)
    # each figure stands on its own phases (quick: one tool's test at a time), so a run cut
    # short still has those of the phases it completed (runner.partial_metrics)
    partial_metrics: bool = False
    # a stored run's own options read back from its phases and written area (bytes), to run
    # the same steps again on another drive (`ssdlab fit`'s trials); None: the run's stored
    # arguments say it all
    replay: Callable[[list[dict[str, Any]], int], Any] | None = None
    # the finest step a metric can move by in a stored run (metric -> relative step), from
    # its phases and metrics: `ssdlab fit` widens that figure's tolerance to it
    resolution: Callable[[list[dict[str, Any]], dict[str, Any]], dict[str, float]] | None = None
    # a line the summary prints under a drive's metrics, from them and the options (None:
    # nothing to say): a figure that a table of numbers cannot (consistency: not steady)
    verdict: Callable[[dict[str, Any], Options], str | None] | None = None
    # every metric is a rate, a latency or a share: the same on a smaller drive with the same
    # dies (`ssdlab fit` may run its trials there), its timed steps scaled by its own options
    scale_free: bool = False
    # the test's own options for a run with these options, whose `scaled(f)` gives them for a
    # drive of f times the blocks (`ssdlab fit`'s trials); None: a stored run's `replay` has them
    sized: Callable[[Options], Any] | None = None
    # metric groups (name, metric-name prefixes), first match wins: what `ssdlab fit`'s
    # cross-validation holds back at a time; empty: the test is one group
    metric_groups: tuple[tuple[str, tuple[str, ...]], ...] = ()
    # metrics a twin is not fitted to (they grow with the drive or its segments, or are the
    # scatter of repeated runs); shell-style patterns (fnmatch)
    unfitted: tuple[str, ...] = ()

    def needs_own_options(self) -> str | None:
        """Why the test cannot run with its own options at their defaults (trace: no trace
        given), as its `run` refuses it in one line; None when it can."""
        if self.options is None or not self.options.cli:
            return None
        try:
            self.options.parse({c.name: c.default for c in self.options.cli}, Silent())
        except UserError as e:
            return str(e)
        return None

    def unused(self, given: Iterable[str]) -> list[str]:
        """The flags of the shared `run` options in `given` (spare, repeat, seconds,
        interval) this test does not read."""
        return [f"--{name}" for name in given
                if (self.default_seconds is None if name == "seconds" else name not in self.uses)]
