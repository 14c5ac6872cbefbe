"""Trace replay, the way the Storage Bench runs its application traces: the drive purged
(empty) and/or purged and filled sequentially (full), then the trace replayed: as recorded
(--speed, --idle-cap) or closed-loop at a fixed queue depth (--qd). Metrics per state
(`empty_...`, `full_...`): average data rate (over the whole replay and over the time the
drive had I/O outstanding), IOPS, average / p99 / p99.9 latency overall and for reads and
writes, energy and power where the drive has a power model."""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Optional, Sequence, cast

from .. import phase as ph
from ..errors import UserError, file_problem
from ..phase import MAX_SPEED, MIN_SPEED, Replay
from ..units import parse_duration
from .common import Options
from ..figures import lazy
from .test import CliOption, Console, Test, TestOptions

DEFAULT_SECONDS = None
SECONDS_HELP = ""
States = Literal["empty", "full", "both"]
STATES = ("empty", "full", "both")


@dataclass(frozen=True)
class TraceOptions:
    replay: Replay
    state: States = "empty"

    def __post_init__(self) -> None:
        if self.state not in STATES:
            raise ValueError(f"--state {self.state}: choose empty, full or both")


def stored_args(opts: TraceOptions) -> dict:
    """What a run stores about its replay (its args)."""
    r = opts.replay
    return {"trace": r.trace, "format": r.format, "speed": r.speed, "idle_cap_s": r.idle_cap_s,
            "qd": r.queue_depth, "state": opts.state, "wrap": r.wrap}


STATE = CliOption("state", "--state", str, "empty",
                  "trace: replay on the empty drive, the full drive, or both; fio: the drive "
                  "empty, full (filled once) or precondition (twice)")


class TraceFlags(TestOptions):
    """`run trace`: what to replay (--trace, --format) and how (--speed, --idle-cap, --qd,
    --state, --wrap)."""

    cli = (
        CliOption("trace", "--trace", Optional[Path], None,
                  "trace: the trace file to replay, or builtin:NAME[@SCALE], a generated workload: "
                  "destroyer-like, pcmark8-photoshop-heavy-like, ... (docs/methodology-trace.md)"),
        CliOption("trace_format", "--format", Optional[str], None,
                  "trace: fio, fio-v2, fio-v3, blkparse, msr or csv (default: detected)"),
        CliOption("speed", "--speed", float, 1.0, "trace: replay X times as fast as recorded (0.001 to 1e6)"),
        CliOption("idle_cap", "--idle-cap", Optional[str], None,
                  "trace: no gap between I/Os longer than this (25ms: the Storage Bench rule)"),
        CliOption("qd", "--qd", Optional[int], None, "trace: as fast as possible at this fixed queue depth (closed loop)"),
        STATE,
        CliOption("wrap", "--wrap", bool, False, "trace: fold offsets past the drive into it instead of refusing the trace"),
    )

    def parse(self, values: dict[str, Any], console: Console) -> TraceOptions:
        from ..traces import FORMATS, workloads

        trace, fmt, speed, qd, state = (values["trace"], values["trace_format"], values["speed"],
                                        values["qd"], values["state"])
        if trace is None:
            raise UserError("run trace: give the trace file with --trace FILE")
        if workloads.is_builtin(str(trace)):
            workloads.parse_name(str(trace))  # an unknown name or bad scale: one line
            if fmt is not None:
                raise UserError(f"--format {fmt}: a built-in workload has no file format")
        elif (why := file_problem(trace)) is not None:
            raise UserError(f"--trace {trace}: {why}")
        if fmt is not None and fmt not in FORMATS:
            raise UserError(f"--format {fmt}: choose one of {', '.join(FORMATS)}")
        if not (math.isfinite(speed) and MIN_SPEED <= speed <= MAX_SPEED):
            raise UserError(f"--speed {speed:g}: must be {MIN_SPEED:g} to {MAX_SPEED:g} (the recorded "
                            "gaps are divided by it)")
        if qd is not None and not 1 <= qd <= 65536:
            raise UserError(f"--qd {qd}: must be 1 to 65536")
        if state not in STATES:
            raise UserError(f"--state {state}: choose empty, full or both")
        cap = None if values["idle_cap"] is None else idle_cap_s(values["idle_cap"])
        opts = TraceOptions(Replay(trace=str(trace), format=fmt, speed=speed, idle_cap_s=cap,
                                   queue_depth=qd, wrap=values["wrap"]),
                            state=cast(States, state))  # one of STATES: checked above
        console.note(announce(opts, console))  # the trace is read now: a bad one refused before any store
        return opts

    def for_drives(self, parsed: TraceOptions, values: dict[str, Any], drives: Sequence[tuple[str, Any]],
                   seed: int, console: Console) -> TraceOptions:
        from ..traces import workloads
        from ..traces.timing import prepare

        if not workloads.is_builtin(parsed.replay.trace):  # a trace past a drive: refused before any store
            for cap in sorted({t.identify().capacity for _, t in drives}):
                p = prepare(parsed.replay, cap)  # kept: the run replays this one
                for n in p.notes:
                    if n.startswith("--wrap: "):  # per drive: the announcement was before any
                        console.note(n)
        return parsed

    def stored(self, parsed: TraceOptions, values: dict[str, Any]) -> dict[str, Any]:
        return {"trace": stored_args(parsed)}


def idle_cap_s(text: str) -> float:
    try:
        v = parse_duration(text)
    except ValueError as e:
        raise UserError(f"--idle-cap {text}: {e}") from None
    if not math.isfinite(v) or v > 1e7:
        raise UserError(f"--idle-cap {text}: must be at most 1e7 s")
    return v


def announce(opts: TraceOptions, console: Console) -> str:
    """One line saying what will be replayed: format (and whether detected), size, mode,
    and what the parser decided."""
    from ..traces import workloads
    from ..traces.timing import mode, stream_of

    r = opts.replay
    if workloads.is_builtin(r.trace):  # generated per drive, later
        return f"trace {workloads.describe(r.trace)}"
    with console.reading(r.trace) as progress:
        s = stream_of(r.trace, r.format, progress=progress)
    _, how, notes = mode(r, s)
    fmt = s.format if r.format else f"{s.format} (detected)"
    return f"trace {r.trace}: {fmt}, {len(s)} I/Os, {how}" + "".join(f"; {n}" for n in notes)


# the review's application workload: The Destroyer writes 3.4 times a 256 GB drive; a review
# replays 1 % of it on a 256 GB drive (8.8 GB written), in proportion on other sizes
APP_WORKLOAD = "destroyer-like"
APP_SCALE_PER_GB = 0.01 / 256


def application_workload(capacity: int) -> TraceOptions:
    """The destroyer-like workload on the empty and the full drive, scaled to the (smallest)
    drive, closed loop at its queue depth (docs/methodology-trace.md)."""
    scale = float(f"{APP_SCALE_PER_GB * capacity / 1e9:.3g}")
    return TraceOptions(Replay(trace=f"builtin:{APP_WORKLOAD}@{scale:g}"), state="both")


def _replay(state: str, r: Replay) -> ph.Phase:
    return ph.Phase(kind="replay", name=f"trace-{state}", replay=r)


def phases(capacity: int, opts: Options) -> list[ph.Phase]:
    t = opts.of(TraceOptions)
    from ..traces.timing import prepare

    prepare(t.replay, capacity)  # a bad trace or one past the drive: refused before anything runs
    out = [ph.purge()]
    if t.state in ("empty", "both"):
        out.append(_replay("empty", t.replay))
    if t.state in ("full", "both"):
        out.append(ph.seq_write("fill", offset=0, length=capacity - capacity % 4096,
                                stop_bytes=capacity - capacity % 4096))
        out.append(_replay("full", t.replay))
    return out


def state_metrics(r) -> dict:
    """One replay's figures (the metric names after the state prefix)."""
    tot, lat = r.totals, r.latency or {}
    moved = float(tot.get("read_bytes", 0.0)) + float(tot.get("write_bytes", 0.0))
    busy = tot.get("busy_s")
    dur = float(tot.get("duration_s") or 0.0)
    out = {
        # reads and writes only (fio's own rate counts trimmed bytes too)
        "data_rate_mbps": moved / dur / 1e6 if dur else None,
        "busy_data_rate_mbps": moved / float(busy) / 1e6 if busy else None,
        "iops": float(tot["iops"]),
        "duration_s": float(tot["duration_s"]),
        "ios": float(tot["ios"]),
        "read_bytes": float(tot.get("read_bytes", 0.0)),
        "write_bytes": float(tot.get("write_bytes", 0.0)),
        "trim_ios": tot.get("trim_ios"),
        "flush_ios": tot.get("flush_ios"),
    }
    any_rw = bool(lat.get("ios", tot.get("ios", 0)))  # none: no latency (not 0 µs)
    for k in ("mean_us", "p99_us", "p99_9_us"):
        out[f"lat_{k}"] = lat.get(k) if any_rw else None
    for op in ("trim", "flush"):  # their own mean latency, apart from the reads and writes
        out[f"{op}_lat_mean_us"] = tot.get(f"{op}_lat_mean_us") if tot.get(f"{op}_ios") else None
    for rw in ("read", "write"):
        h = lat.get(rw) or {}
        has = bool(h.get("ios", 0))
        for k in ("mean_us", "p99_us", "p99_9_us"):
            out[f"{rw}_lat_{k}"] = h.get(k) if has else None
    if "energy_j" in tot:
        out["energy_j"] = tot.get("energy_j")
        out["avg_power_w"] = tot.get("avg_power_w")
    return out


def analyze(results, opts: Options) -> dict:
    t = opts.of(TraceOptions)
    from ..traces.timing import mode, stream_of

    s = stream_of(t.replay.trace, t.replay.format)
    info = s.summary()
    out: dict = {"trace_format": s.format, "trace_mode": mode(t.replay, s)[1], "trace_ios": info["ios"],
                 "trace_read_bytes": info["read_bytes"], "trace_write_bytes": info["write_bytes"],
                 "trace_duration_s": info["duration_s"]}
    for r in results:
        if r.phase.kind == "replay":
            state = r.phase.name.removeprefix("trace-")
            out.update({f"{state}_{k}": v for k, v in state_metrics(r).items()})
    return out


TEST = Test(
    name="trace",
    title="Trace replay",
    phases=phases,
    analyze=analyze,
    figures=lazy("trace"),
    default_seconds=DEFAULT_SECONDS,
    seconds_help=SECONDS_HELP,
    uses=frozenset(),  # the trace's own LBAs: no --spare
    cost=1.4,
    in_review=False,
    options=TraceFlags(),
    review_options=application_workload,
)
