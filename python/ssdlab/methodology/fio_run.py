"""Any fio job on a simulated drive (`ssdlab run fio JOBFILE --drive sim:...`): the job's
I/O stream, captured with fio's null engine (traces/fio_capture.py), replayed closed-loop
at the job's iodepth on the purged drive: the next I/O is issued as one completes, as fio
does with no think time. Metrics as fio reports them, per direction: IOPS, bandwidth,
latency min / average / max and percentiles (total latency, submission to completion)."""

from __future__ import annotations

from dataclasses import dataclass

from .. import phase as ph
from ..phase import Replay
from .common import Options
from .test import Test

DEFAULT_SECONDS = None
SECONDS_HELP = ""
PERCENTILES = ("p50_us", "p90_us", "p99_us", "p99_9_us", "p99_99_us")


@dataclass(frozen=True)
class FioJobOptions:
    job: str  # the user's job file
    name: str  # its job's name
    replay: Replay  # the captured iolog, closed loop at the job's iodepth


def phases(capacity: int, opts: Options) -> list[ph.Phase]:
    f: FioJobOptions | None = opts.trace
    if f is None:
        raise ValueError("fio: give the job file: ssdlab run fio JOBFILE --drive sim:PROFILE")
    from ..traces.timing import prepare

    prepare(f.replay, capacity)  # offsets past the drive: refused before anything runs
    return [ph.purge(), ph.Phase(kind="replay", name=f"fio-{f.name}", replay=f.replay)]


def analyze(results, opts: Options) -> dict:
    r = next(x for x in results if x.phase.kind == "replay")
    tot, lat = r.totals, r.latency or {}
    dur = float(tot.get("duration_s") or 0.0)
    out: dict = {"iodepth": opts.trace.replay.queue_depth, "duration_s": dur,
                 "iops": float(tot.get("iops") or 0.0)}
    for d in ("read", "write"):
        n, b = float(tot.get(f"{d}_ios") or 0.0), float(tot.get(f"{d}_bytes") or 0.0)
        h = lat.get(d) or {}
        out[f"{d}_ios"] = n
        out[f"{d}_bytes"] = b
        out[f"{d}_iops"] = n / dur if dur else None
        out[f"{d}_mbps"] = b / dur / 1e6 if dur else None
        for k in ("min_us", "mean_us", "max_us", *PERCENTILES):
            out[f"{d}_lat_{k}"] = h.get(k) if n else None
    if tot.get("energy_j") is not None:
        out["energy_j"] = tot["energy_j"]
    return out


def fio_style(spec: str, name: str, m: dict) -> str:
    """The figures in fio's own layout (its normal output), for people used to reading it."""
    lines = [f"{name}: (drive {spec}, iodepth={m['iodepth']}, closed loop on the simulator)"]
    for d in ("read", "write"):
        if not m.get(f"{d}_ios"):
            continue
        mib = m[f"{d}_bytes"] / 2**20
        bw_mib = m[f"{d}_mbps"] * 1e6 / 2**20
        lines.append(f"  {d}: IOPS={m[f'{d}_iops']:.0f}, BW={bw_mib:.1f}MiB/s "
                     f"({m[f'{d}_mbps']:.1f}MB/s)({mib:.1f}MiB/{m['duration_s'] * 1e3:.0f}msec)")
        lines.append(f"    lat (usec): min={m[f'{d}_lat_min_us']:.2f}, max={m[f'{d}_lat_max_us']:.2f}, "
                     f"avg={m[f'{d}_lat_mean_us']:.2f}")
        pct = ", ".join(f"{q}th=[{m[f'{d}_lat_{k}']:.0f}]" for q, k in
                        zip(("50.00", "90.00", "99.00", "99.90", "99.99"), PERCENTILES))
        lines.append(f"    lat percentiles (usec): {pct}")
    return "\n".join(lines)


TEST = Test(
    name="fio",
    title="fio job",
    phases=phases,
    analyze=analyze,
    default_seconds=DEFAULT_SECONDS,
    seconds_help=SECONDS_HELP,
    cost=1.0,
    in_review=False,
)
