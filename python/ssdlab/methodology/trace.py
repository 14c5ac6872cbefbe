"""Trace replay, the way the Storage Bench runs its application traces: the drive purged
(empty) and/or purged and filled sequentially (full), then the trace replayed: as recorded
(--speed, --idle-cap) or closed-loop at a fixed queue depth (--qd). Metrics per state
(`empty_...`, `full_...`): average data rate (over the whole replay and over the time the
drive had I/O outstanding), IOPS, average / p99 / p99.9 latency overall and for reads and
writes, energy and power where the drive has a power model."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from .. import phase as ph
from ..phase import Replay
from .common import Options
from ..figures import trace as trace_figures
from .test import Test

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


def _replay(state: str, r: Replay) -> ph.Phase:
    return ph.Phase(kind="replay", name=f"trace-{state}", replay=r)


def phases(capacity: int, opts: Options) -> list[ph.Phase]:
    t: TraceOptions | None = opts.trace
    if t is None:
        raise ValueError("trace: give the trace to replay with --trace FILE")
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
        "lat_mean_us": lat.get("mean_us"),
        "lat_p99_us": lat.get("p99_us"),
        "lat_p99_9_us": lat.get("p99_9_us"),
    }
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
    t: TraceOptions = opts.trace
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
    figures=trace_figures.figures,
    default_seconds=DEFAULT_SECONDS,
    seconds_help=SECONDS_HELP,
    cost=1.0,
    in_review=False,
)
