"""What every test shares: options and the written area."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, TypeVar, overload

from ..phase import KIB
from ..phase import PhaseResult

T = TypeVar("T")
MIB = 1024 * KIB
GIB = 1024 * MIB
MAX_REPEAT = 100  # quick: repetitions (CrystalDiskMark offers up to 9)
MAX_SECONDS = 1e7  # a timed step; the simulator's bound on stop_seconds too


@dataclass(frozen=True)
class Paced:
    """A stored run's --interval (quick: the idle seconds between its tests), as the own
    options of its replay (`ssdlab fit`'s trials), for a test whose stored arguments are
    otherwise its run key (spare area, seconds, repeats)."""
    interval: float


@dataclass(frozen=True)
class Options:
    spare: float = 0.0  # % of LBAs (at the end) that fill and random writes never touch
    repeat: int = 5  # quick: scored runs of each test (CrystalDiskMark's default: 5)
    seconds: float | None = None  # the test's timed step; None: the module's DEFAULT_SECONDS
    # False: skip the purge and fill that bring the drive to a known state (working-set on a
    # drive that is already filled: the test then only reads)
    precondition: bool = True
    interval: float | None = None  # quick: idle seconds between tests; None: the test's default
    # the test's own options, as its TestOptions parsed them (a trace's TraceOptions, a fio
    # job's FioJobOptions, PTS settings); read them with `of`
    own: Any = None

    def __post_init__(self) -> None:
        if not 0 <= self.spare < 100:
            raise ValueError(f"--spare {self.spare}: must be at least 0 and below 100 (%)")
        if not 1 <= self.repeat <= MAX_REPEAT:
            raise ValueError(f"--repeat {self.repeat}: must be 1 to {MAX_REPEAT}")
        if self.seconds is not None and not 0 < self.seconds <= MAX_SECONDS:
            raise ValueError(f"--seconds {self.seconds:g}: must be above 0 and at most {MAX_SECONDS:g} (116 days)")
        if self.interval is not None and not 0 <= self.interval <= 3600:
            raise ValueError(f"--interval {self.interval}: must be 0 to 3600 (seconds)")

    @overload
    def of(self, kind: type[T]) -> T: ...

    @overload
    def of(self, kind: type[T], default: T) -> T: ...

    def of(self, kind: type[T], default: T | None = None) -> T:
        """The test's own options of type `kind`; `default` when none were given."""
        if isinstance(self.own, kind):
            return self.own
        if self.own is None and default is not None:
            return default
        raise ValueError(f"this test needs its own options ({kind.__name__}); got "
                         f"{type(self.own).__name__}")

    def secs(self, default: float) -> float:
        return float(self.seconds) if self.seconds is not None else float(default)


def area_bytes(capacity: int, opts: Options) -> int:
    """Bytes at the start of the drive that tests write: all but --spare %, whole MiB."""
    n = int(capacity * (100.0 - opts.spare) / 100.0) // MIB * MIB
    if n <= 0:
        raise ValueError(f"drive of {capacity} bytes is too small for --spare {opts.spare}: the tests write "
                         "whole MiB, at least 1 MiB; use a larger drive (a file target of 1M or more) "
                         "or less --spare")
    return n


def area_too_small(what: str, need: int, capacity: int, area: int, opts: Options) -> ValueError:
    """The one line for a test that needs more of the area than `--spare` leaves it: the area,
    where it comes from, and what to change."""
    if opts.spare:
        return ValueError(f"{what}: {need} bytes needed, and --spare {opts.spare:g} leaves {area} of the "
                          f"drive's {capacity}; use less --spare or a larger drive")
    return ValueError(f"{what}: {need} bytes needed, more than the drive's {capacity}; use a larger drive")


def by_name(results: list[PhaseResult]) -> dict[str, PhaseResult]:
    return {r.phase.name: r for r in results}


def mbps(r: PhaseResult) -> float:
    return float(r.totals["mbps"])


def opt_total(r: PhaseResult, key: str) -> float | None:
    v = r.totals.get(key)
    return None if v is None else float(v)
