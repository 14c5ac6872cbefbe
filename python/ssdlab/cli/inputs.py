"""Checks of what the `ssdlab` command is given, before anything runs or is stored
(docs/cli.md "Errors"): `--set` values, `--seed`, `--y-max`, the report directory, the
store a read command names, drives given twice. Each raises UserError with one line."""

from __future__ import annotations

import contextlib
import math
import os
import re
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

import typer

from .. import methodology, safe_path, targets
from ..errors import UserError
from ..executor import check_ray
from ..profiles import parse_sets  # noqa: F401 (the commands take it from here)
from ..targets.sim import check_seed
from .mistakes import UnknownOption
from ..store import Store, StoreError, default_path


def whole_number(option: str, text: str, lo: int, hi: int) -> int:
    """An option's whole-number value within lo..hi, or one line saying what it must be."""
    try:
        v = int(text.strip())
    except ValueError:
        raise UserError(f"{option} {text}: not a whole number; give one from {lo} to {hi}") from None
    if not lo <= v <= hi:
        raise UserError(f"{option} {text}: out of range; give a whole number from {lo} to {hi}")
    return v


def check_y_max(y_max: float | None) -> float | None:
    if y_max is not None and not (math.isfinite(y_max) and y_max > 0):
        raise UserError(f"--y-max {y_max}: must be a positive number (MB/s)")
    return y_max


def check_out_dir(out: Path) -> None:
    """The report directory can be made and written, checked before anything runs."""
    try:
        # through no other user's link, in no directory another user may write
        real = safe_path.own_dir(out, f"the report directory {out}")
    except safe_path.UnsafePath as e:
        if e.refusal:
            raise
        raise UserError(f"cannot write the report to {out}: {e.reason}") from None
    why = safe_path.cannot_make_files(real)
    if why:
        raise UserError(f"cannot write the report to {out}: no file can be made in {real} ({why})")


class MadeDirs:
    """The report directories a command made (`check`): removed again, while empty, when the
    command is refused after it made them (a store that cannot be written) or stops before a
    report is drawn (Ctrl-C, a failed test)."""

    def __init__(self) -> None:
        self.made: list[Path] = []

    def check(self, out: Path) -> None:
        """check_out_dir(out), remembering a directory it made."""
        new = not os.path.lexists(out)
        check_out_dir(out)
        if new:
            self.made.append(out)


@contextmanager
def made_dirs() -> Iterator[MadeDirs]:
    dirs = MadeDirs()
    try:
        yield dirs
    except BaseException:
        for d in dirs.made:
            with contextlib.suppress(OSError):  # not empty (a report, or what another put there): kept
                os.rmdir(d)
        raise


RUN_HELP = "a run id (ssdlab results list); -1 is the latest run, -2 the one before ..."
# lets `-1` through to the run-id arguments (click takes any word that starts with '-' for
# an option); RunIdsCommand names a mistyped option as click would
RUN_IDS = {"ignore_unknown_options": True}


class RunIdsCommand(typer.core.TyperCommand):
    """A command whose arguments are run ids (`-1` the latest run): a word click let through
    that starts with '-' and no digit is an option the command does not have, named before
    the command looks at any store (`-1.5` is a run id's mistake; words after `--` are the
    user's own arguments)."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        opts, rest, _ = self.make_parser(ctx).parse_args(args=list(args))
        given = [*rest, *(v for p in self.params if p.param_type_name == "argument"
                          for v in as_words(opts.get(p.name)))]
        typed = args[:args.index("--")] if "--" in args else args
        for w in given:
            if OPTION_LIKE.match(w) and w in typed:
                raise UnknownOption(w.split("=", 1)[0], ctx)
        return super().parse_args(ctx, args)


OPTION_LIKE = re.compile(r"-[^\d.]")


def as_words(value: Any) -> list[str]:
    if value is None:
        return []
    return [value] if isinstance(value, str) else [str(v) for v in value]


def run_id(store: Store, text: str) -> int:
    """A run named on the command line: its id, or -N for the N-th newest run."""
    t = text.strip()
    try:
        v = int(t)
    except ValueError:
        raise UserError(f"{text}: not a run id; give one of `ssdlab results list`, or -1 for the latest run") from None
    return store.nth_latest_run_id(-v) if v < 0 else v


def ray_choice(ray: bool, address: str | None) -> str | None:
    """--ray and --ray-address as executor.open_executor takes them (an address, "local",
    or None: no Ray), checked before anything is made or stored: Ray is installed and the
    address's head node answers within a few seconds (ray.init retries one that does not
    for minutes)."""
    choice = address or ("local" if ray else None)
    check_ray(choice)
    return choice


def read_store(db: Path | None) -> Store | None:
    """The store for a read command; never created. None when the default store does not
    exist yet (nothing stored); a --db that does not exist is an error (a typo)."""
    if db is None and not default_path().exists():
        return None
    return Store(db, create=False)


def existing_store(db: Path | None) -> Store:
    """The store for a command that needs stored runs (show, export, report, compare)."""
    store = read_store(db)
    if store is None:
        raise StoreError(f"no results store at {default_path()} yet: run a test first, or pass --db")
    return store


def open_drives(specs: list[str], sets: list[str], seed: int, destroy_data: str | None,
                plan: bool) -> list[tuple[str, Any]]:
    if not specs:
        raise UserError("give at least one --drive (e.g. --drive sim:tlc-256)")
    parsed = [targets.parse_drive(s) for s in specs]  # the one parse of each --drive
    seen: dict[str, str] = {}
    for d in parsed:
        k = d.key()
        if d.real and k in seen:
            raise UserError(f"--drive {d}: the same drive as --drive {seen[k]}; give each real drive once")
        seen.setdefault(k, d.text)
    check_seed(seed)
    if destroy_data and not any(d.real for d in parsed):
        # a simulated drive writes nothing but the results store: a device named here is most
        # likely the --drive the user meant to give
        typer.echo(f"ssdlab: warning: --destroy-data={destroy_data} has no effect: every --drive of this run is "
                   "simulated (a real drive is --drive /dev/..., file:PATH:SIZE or HOST:/dev/...)", err=True)
    opened: list[tuple[str, Any]] = []
    try:
        for d in parsed:
            opened.append((d.text, targets.open_target(d, overrides=sets or None, seed=seed,
                                                       destroy_data=destroy_data, plan=plan)))
    except BaseException:  # a refused drive: let go of those already taken (locks, ssh)
        for _, t in opened:
            t.close()
        raise
    return opened


# help texts shared by commands
TEST_NAMES = ", ".join(methodology.ALL)
PRECONDITION_TESTS = ", ".join(n for n, t in methodology.ALL.items() if t.precondition_optional)


def seconds_help(tests: dict[str, methodology.Test]) -> str:
    return "the test's timed step: " + "; ".join(
        f"{name}: {t.seconds_help} (default {t.default_seconds} s)"
        for name, t in tests.items() if t.default_seconds is not None)


SECONDS_HELP = seconds_help(methodology.ALL)  # run and sweep run every test
REVIEW_SECONDS_HELP = seconds_help(methodology.TESTS)
