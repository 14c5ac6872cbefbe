"""The `run trace` options (--trace, --format, --speed, --idle-cap, --qd, --state, --wrap)
checked and turned into the test's TraceOptions; misuse is a UserError (one line, exit 2)."""

from __future__ import annotations

import math
import re
from pathlib import Path

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
    if test != "trace":
        if given:
            raise UserError(f"{', '.join(given)}: only for `ssdlab run trace`")
        return None
    from ..methodology.trace import STATES, TraceOptions
    from ..phase import Replay
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
    if not (math.isfinite(speed) and 0 < speed <= 1e6):
        raise UserError(f"--speed {speed:g}: must be above 0 and at most 1e6")
    if qd is not None and not 1 <= qd <= 65536:
        raise UserError(f"--qd {qd}: must be 1 to 65536")
    if state not in STATES:
        raise UserError(f"--state {state}: choose empty, full or both")
    cap = None if idle_cap is None else parse_duration(idle_cap, "--idle-cap")
    return TraceOptions(Replay(trace=str(trace), format=fmt, speed=speed, idle_cap_s=cap,
                               queue_depth=qd, wrap=wrap), state=state)


def trace_args(opts) -> dict:
    """What the run stores about the replay (its args)."""
    r = opts.replay
    return {"trace": r.trace, "format": r.format, "speed": r.speed, "idle_cap_s": r.idle_cap_s,
            "qd": r.queue_depth, "state": opts.state, "wrap": r.wrap}


def announce(opts) -> str:
    """One line saying what will be replayed: format (and whether detected), size, mode,
    and what the parser decided."""
    from ..traces.timing import mode, stream_of

    r = opts.replay
    from ..traces import workloads

    if workloads.is_builtin(r.trace):  # generated per drive, later
        return f"trace {workloads.describe(r.trace)}"
    s = stream_of(r.trace, r.format)
    _, how, notes = mode(r, s)
    fmt = s.format if r.format else f"{s.format} (detected)"
    return f"trace {r.trace}: {fmt}, {len(s)} I/Os, {how}" + "".join(f"; {n}" for n in notes)


def fio_options(job: Path | None, drv: list):
    """`run fio JOBFILE`: the job's I/Os captured for the smallest of the (simulated) drives."""
    import atexit
    import shutil
    import tempfile

    from .. import targets
    from ..methodology.fio_run import FioJobOptions
    from ..phase import Replay
    from ..traces.fio_capture import capture

    if job is None:
        raise UserError("run fio: give the job file: ssdlab run fio JOBFILE --drive sim:PROFILE")
    if not job.is_file():
        raise UserError(f"{job}: no such job file")
    real = [spec for spec, _ in drv if targets.is_real(spec)]
    if real:
        raise UserError(f"run fio: {real[0]} is a real drive: run the job with fio itself there; "
                        "`ssdlab run fio` replays a job on simulated drives (--drive sim:PROFILE)")
    cap = min(t.identify().capacity for _, t in drv) if drv else 0
    wd = Path(tempfile.mkdtemp(prefix="ssdlab-fio-capture-"))
    atexit.register(shutil.rmtree, wd, ignore_errors=True)
    c = capture(job, cap, wd)
    return FioJobOptions(job=str(job), name=c.name,
                         replay=Replay(trace=str(c.iolog), format="fio-v3", queue_depth=c.iodepth))


REVIEW_WORKLOAD = "destroyer-like"
REVIEW_SCALE_PER_GB = 0.01 / 256  # scale 0.01 on a 256 GB drive: 8.8 GB written, 3.4 % of it


def review_workload(drv: list):
    """`review`'s application test: the destroyer-like workload on the empty and the full
    drive, scaled to the smallest drive (The Destroyer writes 3.4 times a 256 GB drive;
    here 1 % of it on a 256 GB drive, in proportion on others), closed loop at its QD."""
    from ..methodology.trace import TraceOptions
    from ..phase import Replay

    cap = min((t.identify().capacity for _, t in drv), default=256 * 10**9)
    scale = float(f"{REVIEW_SCALE_PER_GB * cap / 1e9:.3g}")
    return TraceOptions(Replay(trace=f"builtin:{REVIEW_WORKLOAD}@{scale:g}"), state="both")
