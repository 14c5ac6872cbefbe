"""The contract at the bottom of the package: a Phase says what to do to a drive, not how;
a target answers with a PhaseResult, streaming Samples meanwhile, names the drive with an
Identity, and raises Interrupted (carrying what was recorded) when stopped; a Batch is
phases a plan hands over at once. Every layer
(methodology, targets, store, report, CLI) speaks these; this module imports nothing of
ssdlab's."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Literal, TypedDict, cast

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, model_validator

KIB = 1024
GB = 10**9

MIN_SPEED, MAX_SPEED = 1e-3, 1e6  # trace replay: --speed (a replay spans at most 1e7 s too)

Kind = Literal["purge", "io", "trim", "idle", "replay", "fiojob", "write_cache"]
Pattern = Literal["seq", "rand"]
DataPattern = Literal["incompressible", "zeros", "compressible"]


class Replay(BaseModel):
    """A trace replay (kind `replay`): the trace file and how to time it (traces/)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    trace: str  # the trace file
    format: str | None = None  # None: detected
    speed: float = Field(1.0, ge=MIN_SPEED, le=MAX_SPEED)  # open loop: recorded gaps / speed
    idle_cap_s: float | None = Field(None, ge=0)  # open loop: no gap longer than this
    queue_depth: int | None = Field(None, ge=1, le=65536)  # closed loop at this depth
    wrap: bool = False  # offsets past the drive wrap around instead of being refused


class FioJobs(BaseModel):
    """A fio job file compiled to the simulator's workload (kind `fiojob`, fiojob/compile.py):
    one dict per job and per numjobs clone."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    file: str
    jobs: list[dict[str, Any]]


class ResolvedPhase(TypedDict):
    """`Phase.resolve`: every field of a Phase but the fractions, its range in bytes
    (nested models as dicts). A simulated drive reads the fields it knows (`ssdlab._sim`'s
    `PhaseSpec`); a fio target those of its kind."""

    kind: Kind
    name: str
    read_pct: int
    pattern: Pattern
    block_size: int
    queue_depth: int
    jobs: int
    data: DataPattern
    compress_pct: int
    offset: int
    length: int
    stop_bytes: int | None
    stop_seconds: float | None
    seconds: float | None
    until_quiet: bool
    replay: dict[str, Any] | None
    fiojob: dict[str, Any] | None
    write_cache: bool | None
    sample_interval_s: float
    segment_bytes: int


class Phase(BaseModel):
    """One step of a test. Offsets and lengths are bytes, or fractions of the user
    capacity when given as a float in [0, 1] through `frac_offset` / `frac_length`."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: Kind
    name: str = ""
    # io
    read_pct: int = Field(0, ge=0, le=100)
    pattern: Pattern = "seq"
    block_size: int = Field(128 * KIB, gt=0)
    queue_depth: int = Field(1, ge=1, le=65536)
    jobs: int = Field(1, ge=1, le=1024)
    data: DataPattern = "incompressible"
    compress_pct: int = Field(0, ge=0, le=100)
    # range (io and trim): bytes, or fractions of the user capacity
    offset: int | None = Field(None, ge=0)
    length: int | None = Field(None, gt=0)
    frac_offset: float | None = Field(None, ge=0.0, le=1.0)
    frac_length: float | None = Field(None, gt=0.0, le=1.0)
    # stop rule (io): after bytes moved and/or seconds elapsed, whichever first
    stop_bytes: int | None = Field(None, gt=0)
    stop_seconds: float | None = Field(None, gt=0)
    # idle: `seconds` of no host I/O; with `until_quiet`, `seconds` is a cap and the idle
    # ends as soon as the drive has no background work left (a simulated drive reports when;
    # a real drive cannot tell us, so it waits the whole `seconds`)
    seconds: float | None = Field(None, gt=0)
    until_quiet: bool = False
    # replay: a trace (kind replay)
    replay: Replay | None = None
    # fiojob: a fio job file's jobs (kind fiojob)
    fiojob: FioJobs | None = None
    # write_cache: the drive's volatile write cache switched on or off (kind write_cache)
    write_cache: bool | None = None
    # sampling
    sample_interval_s: float = Field(1.0, gt=0)
    segment_bytes: int = Field(GB, gt=0)

    @model_validator(mode="after")
    def _check(self) -> "Phase":
        # 512: a logical sector (a real drive with 512-byte blocks); the simulator's own
        # workloads take multiples of 4096 and refuse the rest when the phase runs
        if self.block_size % 512:
            raise ValueError(f"block_size={self.block_size}: must be a multiple of 512 bytes")
        if self.offset is not None and self.frac_offset is not None:
            raise ValueError("give offset or frac_offset, not both")
        if self.length is not None and self.frac_length is not None:
            raise ValueError("give length or frac_length, not both")
        if self.kind == "io" and self.stop_bytes is None and self.stop_seconds is None:
            raise ValueError("io phase needs stop_bytes or stop_seconds")
        if self.kind == "idle" and self.seconds is None:
            raise ValueError("idle phase needs seconds")
        if (self.kind == "replay") != (self.replay is not None):
            raise ValueError("a replay phase needs replay (and only a replay phase has one)")
        if (self.kind == "fiojob") != (self.fiojob is not None):
            raise ValueError("a fiojob phase needs fiojob (and only a fiojob phase has one)")
        if (self.kind == "write_cache") != (self.write_cache is not None):
            raise ValueError("a write_cache phase needs write_cache (and only a write_cache phase has one)")
        if self.until_quiet and self.kind != "idle":
            raise ValueError("until_quiet applies to idle phases only")
        return self

    def resolve(self, capacity: int) -> ResolvedPhase:
        """The phase as a plain dict with absolute byte ranges (4 KiB aligned) for a drive
        of `capacity` user bytes: what a target executes."""
        unit = 4 * KIB
        off = self.offset if self.offset is not None else int((self.frac_offset or 0.0) * capacity)
        if self.length is not None:
            length = self.length
        else:
            length = int((self.frac_length if self.frac_length is not None else 1.0) * capacity) - off
            length = min(length, capacity - off)
        off -= off % unit
        length -= length % unit
        if off + length > capacity or length <= 0:
            raise ValueError(
                f"range offset={off} length={length}: past the end of the drive ({capacity} bytes)"
            )
        if self.kind == "io" and self.block_size * self.jobs > length:  # as the simulator refuses it
            raise ValueError(f"phase {self.name}: {length} bytes are too few for {self.jobs} job(s) of "
                             f"{self.block_size}-byte blocks on a drive of {capacity} bytes; leave less "
                             "--spare or use a larger drive")
        d = self.model_dump(exclude={"frac_offset", "frac_length"})
        d.update(offset=off, length=length)
        return cast(ResolvedPhase, d)  # its keys and types: tests/sim/test_boundary.py


# Constructors for the phases every test uses.
def purge(name: str = "purge") -> Phase:
    return Phase(kind="purge", name=name)


def write_cache(on: bool, name: str = "write_cache") -> Phase:
    """The drive's volatile write cache on or off for the phases after it (a target that
    cannot switch it records the state it has)."""
    return Phase(kind="write_cache", write_cache=on, name=name)


def idle(seconds: float, name: str = "idle", until_quiet: bool = False) -> Phase:
    """`until_quiet`: `seconds` is a cap; stop once the drive's background work is done."""
    return Phase(kind="idle", seconds=seconds, name=name, until_quiet=until_quiet)


def trim(name: str = "trim", **rng: Any) -> Phase:
    return Phase(kind="trim", name=name, **rng)


def seq_write(name: str, block_size: int = 128 * KIB, queue_depth: int = 32, **kw: Any) -> Phase:
    return Phase(kind="io", name=name, pattern="seq", read_pct=0, block_size=block_size,
                 queue_depth=queue_depth, **kw)


def seq_read(name: str, block_size: int = 128 * KIB, queue_depth: int = 32, **kw: Any) -> Phase:
    return Phase(kind="io", name=name, pattern="seq", read_pct=100, block_size=block_size,
                 queue_depth=queue_depth, **kw)


def rand_io(name: str, read_pct: int, block_size: int = 4 * KIB, queue_depth: int = 32, **kw: Any) -> Phase:
    return Phase(kind="io", name=name, pattern="rand", read_pct=read_pct, block_size=block_size,
                 queue_depth=queue_depth, **kw)


class Batch(tuple[Phase, ...]):
    """Phases a test's plan hands over at once, as none needs another's result (a round of
    PTS steps): a target may run them back to back (a real drive: one fio process), and
    the plan gets their results back as one list."""


def flat(items: Any) -> list[Phase]:
    """Phases and Batches -> the phases, in order."""
    return [p for x in items for p in (x if isinstance(x, Batch) else (x,))]


Sample = dict[str, float]
OnSample = Callable[[Sample], None]


@dataclass
class Identity:
    kind: str  # "sim" | "block" | "file"
    model: str
    capacity: int  # user bytes
    firmware: str = ""
    serial: str = ""
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class PhaseResult:
    """What one phase produced. `series` are per-interval columns (t_s first), `segments`
    per-segment-of-bytes-written columns (gb, mbps, t_s), `latency` holds percentiles
    (p50_us ... p99_99_us, mean_us, max_us) and the histogram (edges_us, counts),
    `totals` scalar figures; simulated drives add internal counters to both series and totals."""

    phase: Phase
    series: dict[str, np.ndarray]
    segments: dict[str, np.ndarray]
    latency: dict[str, Any]
    totals: dict[str, float]


class Interrupted(Exception):
    """Raised by a target when a run is stopped; carries what was recorded so far."""

    def __init__(self, partial: PhaseResult | None):
        super().__init__("interrupted")
        self.partial = partial
