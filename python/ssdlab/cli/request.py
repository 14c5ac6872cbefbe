"""One `ssdlab run` as given: the test, its drives, the options every test shares and the
test's own (methodology.Test.options). It is the one place an option of `run` is spelled
after typer: what the run stores as its arguments, the Options the test receives, and a
fleet member's own command line all come from here."""

from __future__ import annotations

import inspect
import os
import sys
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator, Optional

import typer

from .. import methodology
from ..methodology import Options, Test
from ..methodology.test import CliOption
from .errors import UserError


REPEAT = Options().repeat  # --repeat when not given


class CliConsole:
    """methodology.test.Console on stderr: notes as `ssdlab: ...` lines, a progress bar
    while a big input file is read (at a terminal only)."""

    BIG = 64 << 20  # bytes on disk: reading it shows a progress bar at a terminal

    def __init__(self, hold: bool = False) -> None:
        self.held: list[str] | None = [] if hold else None  # notes kept until release()

    def note(self, line: str) -> None:
        if self.held is not None:
            self.held.append(line)
        else:
            typer.echo(f"ssdlab: {line}", err=True)

    def release(self) -> None:
        """The notes held while the command was checked (a refused one says one line), then
        each as it comes."""
        held, self.held = self.held or [], None
        for line in held:
            self.note(line)

    @contextmanager
    def reading(self, path: str) -> Iterator[Callable[[int, int], None]]:
        try:
            big = os.path.getsize(path) > self.BIG
        except OSError:
            big = False
        if not (big and sys.stderr.isatty()):
            yield lambda done, total: None
            return
        from rich.console import Console
        from rich.markup import escape
        from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn

        # the file's name as it is: not a format string (`{x}`) nor rich markup (`[/]`)
        bar = Progress(TextColumn("{task.description}"), BarColumn(), DownloadColumn(),
                       TimeRemainingColumn(), console=Console(stderr=True), transient=True)
        with bar:
            task = bar.add_task(escape(f"reading {Path(path).name}"), total=None)
            yield lambda done, total: bar.update(task, completed=done, total=total)


def test_options(sweep: bool = False) -> dict[str, tuple[CliOption, list[str]]]:
    """Every test-owned option of `run`, by name, with the tests that take it; a name two
    tests declare must be the same option. sweep: those of the tests `ssdlab sweep` runs
    (a test that needs its own input, a trace or a job file, is not one)."""
    out: dict[str, tuple[CliOption, list[str]]] = {}
    for name, test in methodology.ALL.items():
        if sweep and test.needs_own_options() is not None:
            continue
        for o in test.options.cli if test.options else ():
            if o.name in out:
                first = out[o.name][0]
                if (first.flag, first.type, first.default, first.argument) != (o.flag, o.type, o.default, o.argument):
                    raise TypeError(f"run option {o.name}: declared differently by {out[o.name][1]} and {name}")
                out[o.name][1].append(name)
            else:
                out[o.name] = (o, [name])
    return out


def typer_parameters(sweep: bool = False) -> list[inspect.Parameter]:
    """The test-owned options as parameters of the `run` command (arguments first), or of
    `ssdlab sweep` (sweep: those of the tests it runs)."""
    params = []
    for o, _ in sorted(test_options(sweep).values(), key=lambda x: not x[0].argument):
        info = (typer.Argument(o.default, help=o.help) if o.argument
                else typer.Option(o.default, o.flag, help=o.help))
        params.append(inspect.Parameter(o.name, inspect.Parameter.KEYWORD_ONLY, default=info,
                                        annotation=o.type))
    return params


def refuse_others(test: str, values: dict[str, Any], command: str = "run") -> None:
    """A test-owned option given (a value other than its default) to a test that does not
    take it: refused in one line naming the tests that do."""
    the_test = methodology.get(test)
    mine = {o.name for o in the_test.options.cli} if the_test.options else set()
    wrong = [(o, tests) for name, (o, tests) in test_options(command == "sweep").items()
             if name not in mine and values.get(name, o.default) not in (o.default, None)]
    if wrong:
        o, tests = wrong[0]
        what = ", ".join(x.flag for x, _ in wrong if not x.argument) or "a file argument"
        raise UserError(f"{what}: only for `ssdlab {command} {tests[0]}`" if len(tests) == 1 else
                        f"{what}: only for `ssdlab {command}` of {', '.join(tests[:-1])} and {tests[-1]}")


@dataclass
class RunRequest:
    """`ssdlab run TEST` with its options (the test's own in `values`)."""

    test: str
    drives: list[str]
    spare: float = 0.0
    repeat: Optional[int] = None  # None: not given (the test's default, 5)
    seconds: Optional[float] = None
    interval: Optional[float] = None
    precondition: bool = True
    sets: list[str] = field(default_factory=list)
    seed: int = 42
    testbed: Optional[str] = None
    db: Optional[Path] = None
    destroy_data: Optional[str] = None
    values: dict[str, Any] = field(default_factory=dict)  # every test-owned option, by name
    own: Any = None  # the test's options as its TestOptions parsed them

    @property
    def the_test(self) -> Test:
        return methodology.get(self.test)

    def check(self, console: CliConsole) -> None:
        """Options given to a test that does not take them, then the test's own check."""
        refuse_others(self.test, self.values)
        if self.the_test.options:
            self.own = self.the_test.options.parse(self.values, console)

    def for_drives(self, drives: list[tuple[str, Any]], console: CliConsole) -> None:
        if self.the_test.options:
            self.own = self.the_test.options.for_drives(self.own, self.values, drives, self.seed, console)

    def given(self) -> list[str]:
        """The options every test shares that were given (a value other than their default)."""
        return [name for name, v in (("spare", self.spare or None), ("repeat", self.repeat),
                                     ("seconds", self.seconds), ("interval", self.interval)) if v is not None]

    def options(self) -> Options:
        return Options(spare=self.spare, repeat=REPEAT if self.repeat is None else self.repeat, seconds=self.seconds,
                       precondition=self.precondition, interval=self.interval, own=self.own)

    def stored_args(self) -> dict[str, Any]:
        """The run's arguments as the store keeps them (docs/results.md)."""
        args: dict[str, Any] = {"drives": self.drives, "spare": self.spare,
                                "repeat": REPEAT if self.repeat is None else self.repeat,
                                "seconds": self.seconds, "set": self.sets, "seed": self.seed}
        if not self.precondition:
            args["precondition"] = False
        if self.interval is not None:
            args["interval"] = self.interval
        if self.the_test.options and self.own is not None:
            args.update(self.the_test.options.stored(self.own, self.values))
        return args

    def argv(self) -> list[str]:
        """The options as given, for each fleet member's own `ssdlab run` (without --drive)."""
        own = self.the_test.options.cli if self.the_test.options else ()
        a = [self.test] + [x for o in own if o.argument for x in o.argv(self.values.get(o.name))]
        a += ["--spare", repr(self.spare), "--seed", str(self.seed)]
        for flag, v in (("--repeat", self.repeat), ("--seconds", self.seconds), ("--interval", self.interval),
                        ("--testbed", self.testbed), ("--db", self.db), ("--destroy-data", self.destroy_data)):
            if v is not None:
                a += [flag, str(v)]
        for s in self.sets:
            a += ["--set", s]
        a += [x for o in own if not o.argument for x in o.argv(self.values.get(o.name))]
        if not self.precondition:
            a.append("--no-precondition")
        return a
