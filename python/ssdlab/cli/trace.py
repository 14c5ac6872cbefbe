"""The `run trace` options (--trace, --format, --speed, --idle-cap, --qd, --state, --wrap)
checked and turned into the test's TraceOptions; misuse is a UserError (one line, exit 2)."""

from __future__ import annotations

import math
import os
import re
import sys
from pathlib import Path
from typing import cast

import typer

from .errors import UserError

DURATION = re.compile(r"\s*([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\s*(s|ms|us|ns)?\s*")
UNIT_S = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "ns": 1e-9, None: 1.0}
TRACE_ONLY = ("--trace", "--format", "--speed", "--idle-cap", "--qd", "--state", "--wrap")


def parse_duration(text: str, option: str) -> float:
    """'25ms', '0.025s', '25000us', '0.025' (seconds) -> seconds."""
    m = DURATION.fullmatch(text)
    if m is None:
        raise UserError(f"{option} {text}: give a duration such as 25ms, 0.5s or 100us")
    v = float(m.group(1)) * UNIT_S[m.group(2)]
    if not math.isfinite(v) or v > 1e7:
        raise UserError(f"{option} {text}: must be at most 1e7 s")
    return v


def trace_options(test: str, trace: Path | None, fmt: str | None, speed: float,
                  idle_cap: str | None, qd: int | None, state: str, wrap: bool,
                  given: list[str]):
    """TraceOptions for `run trace`; for other tests, refuse the trace-only options given."""
    if test == "fio":
        given = [g for g in given if g != "--state"]  # run fio: empty, full or precondition
    if test != "trace":
        if given:
            raise UserError(f"{', '.join(given)}: only for `ssdlab run trace`")
        return None
    from ..methodology.trace import STATES, States, TraceOptions
    from ..phase import MAX_SPEED, MIN_SPEED, Replay
    from ..traces import FORMATS

    if trace is None:
        raise UserError("run trace: give the trace file with --trace FILE")
    from ..traces import workloads

    if workloads.is_builtin(str(trace)):
        workloads.parse_name(str(trace))  # an unknown name or bad scale: one line
        if fmt is not None:
            raise UserError(f"--format {fmt}: a built-in workload has no file format")
    elif not trace.is_file():
        raise UserError(f"--trace {trace}: no such file")
    if fmt is not None and fmt not in FORMATS:
        raise UserError(f"--format {fmt}: choose one of {', '.join(FORMATS)}")
    if not (math.isfinite(speed) and MIN_SPEED <= speed <= MAX_SPEED):
        raise UserError(f"--speed {speed:g}: must be {MIN_SPEED:g} to {MAX_SPEED:g} (the recorded "
                        "gaps are divided by it)")
    if qd is not None and not 1 <= qd <= 65536:
        raise UserError(f"--qd {qd}: must be 1 to 65536")
    if state not in STATES:
        raise UserError(f"--state {state}: choose empty, full or both")
    cap = None if idle_cap is None else parse_duration(idle_cap, "--idle-cap")
    return TraceOptions(Replay(trace=str(trace), format=fmt, speed=speed, idle_cap_s=cap,
                               queue_depth=qd, wrap=wrap),
                        state=cast(States, state))  # one of STATES: checked above


BIG_TRACE = 64 << 20  # bytes on disk: reading it shows a progress bar at a terminal


class ReadProgress:
    """A progress bar on stderr while a big trace file is read (at a terminal only)."""

    def __init__(self, path: str):
        self.bar = None
        try:
            big = os.path.getsize(path) > BIG_TRACE
        except OSError:
            big = False
        if big and sys.stderr.isatty():
            from rich.console import Console
            from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn

            self.bar = Progress(TextColumn(f"reading {Path(path).name}"), BarColumn(), DownloadColumn(),
                                TimeRemainingColumn(), console=Console(stderr=True), transient=True)

    def __enter__(self) -> "ReadProgress":
        if self.bar is not None:
            self.bar.start()
            self.task = self.bar.add_task("read", total=None)
        return self

    def update(self, done: int, total: int) -> None:
        if self.bar is not None:
            self.bar.update(self.task, completed=done, total=total)

    def __exit__(self, *exc) -> None:
        if self.bar is not None:
            self.bar.stop()


def announce(opts) -> str:
    """One line saying what will be replayed: format (and whether detected), size, mode,
    and what the parser decided."""
    from ..traces.timing import mode, stream_of

    r = opts.replay
    from ..traces import workloads

    if workloads.is_builtin(r.trace):  # generated per drive, later
        return f"trace {workloads.describe(r.trace)}"
    with ReadProgress(r.trace) as bar:
        s = stream_of(r.trace, r.format, progress=bar.update)
    _, how, notes = mode(r, s)
    fmt = s.format if r.format else f"{s.format} (detected)"
    return f"trace {r.trace}: {fmt}, {len(s)} I/Os, {how}" + "".join(f"; {n}" for n in notes)


def zone_bytes(ident) -> int:
    """A simulated drive's own zones for zonemode=zbd: its erase unit across the drive, one
    block of every plane of every die (the unit a zoned (ZNS) drive maps a zone to)."""
    info = ident.extra.get("info", {}) if ident.extra else {}
    if not info.get("dies") or not info.get("block_mib"):
        return 0
    return int(info["dies"] * info["block_mib"] * (1 << 20))


def job_env(names: list[str]) -> dict[str, str]:
    """--env NAME (from the environment) and --env NAME=VALUE: the only variables a job
    file's ${NAME} expands."""
    import os
    import re

    out = {}
    for item in names:
        name, eq, value = item.partition("=")
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
            raise UserError(f"--env {item[:40]}: write NAME or NAME=VALUE (a variable name: letters, "
                            "digits, _)")
        if not eq and name not in os.environ:
            raise UserError(f"--env {name}: not set in the environment: set it or give --env {name}=VALUE")
        out[name] = value if eq else os.environ[name]
    return out


def fio_options(job: Path | None, drv: list, state: str = "empty", seed: int = 42,
                env: list[str] | None = None):
    """`run fio JOBFILE`: the job file read, checked and compiled by ssdlab for the smallest
    of the (simulated) drives; fio never runs it. Notes (options accepted with no effect)
    are printed as one line. `env`: the variables (NAME or NAME=VALUE) ${NAME} may expand."""
    from ..fiojob.compile import compile_job
    from ..methodology.fio_run import STATES, FioJobOptions

    if job is None:
        raise UserError("run fio: give the job file: ssdlab run fio JOBFILE --drive sim:PROFILE")
    if not job.is_file():
        raise UserError(f"{job}: no such job file")
    if state not in STATES:
        raise UserError(f"--state {state}: for run fio choose empty, full or precondition")
    real = [spec for spec, t in drv if not t.capabilities.simulated]
    if real:
        raise UserError(f"run fio: {real[0]} is a real drive: run the job with fio itself there; "
                        "`ssdlab run fio` runs a job on simulated drives (--drive sim:PROFILE)")
    ids = sorted((t.identify() for _, t in drv), key=lambda i: i.capacity)
    cap = ids[0].capacity if ids else 0
    c = compile_job(job, cap, seed, zone_bytes(ids[0]) if ids else 0, job_env(env or []))
    for n in c.notes:
        typer.echo(f"ssdlab: note: {n}", err=True)
    return FioJobOptions.compiled(str(job), c, state)
