"""A user's fio job turned into the I/O stream it issues: fio runs the job with the null
engine (no device touched) and `write_iolog`, which records every I/O (offsets and lengths
in bytes, fio iolog v3). fio parses the job file itself (`--showcmd`: includes, variables
and all); ssdlab then swaps the engine and the file, and keeps the job's queue depth for
the closed-loop replay.

What a closed-loop replay cannot reproduce is refused rather than approximated: several
jobs, numjobs > 1, time-based jobs (bound the job with size, io_size or number_ios),
think time and rate limits. The capture runs at iodepth=1 (fio 3.33's null engine logs
most I/Os twice at a depth above 1); the I/O sequence does not depend on the depth.
"""

from __future__ import annotations

import re
import shlex
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from .stream import TraceError

# options the capture replaces (engine, file, logs) or sets itself
DROPPED = {"ioengine", "filename", "directory", "write_iolog", "read_iolog", "iodepth",
           "write_bw_log", "write_lat_log", "write_iops_log", "write_hist_log", "log_avg_msec",
           "log_hist_msec", "per_job_logs", "replay_redirect", "replay_no_stall",
           "output", "output-format", "ioengine_opts", "direct", "buffered", "unlink",
           "allow_file_create", "filename_format", "opendir", "nrfiles", "openfiles"}
REFUSED = {"rate": "rate limits", "rate_iops": "rate limits", "rate_min": "rate limits",
           "rate_iops_min": "rate limits", "rate_process": "rate limits",
           "thinktime": "think time", "thinktime_blocks": "think time",
           "thinktime_spin": "think time", "time_based": "a time-based job (bound it with "
           "size, io_size or number_ios instead)", "ramp_time": "ramp time",
           "startdelay": "a start delay"}
SIZE_RE = re.compile(r"(\d+(?:\.\d+)?)%")
MAX_SECONDS = 600  # a capture runs ~400 K I/Os per second: this is a very large job


@dataclass
class Captured:
    iolog: Path
    name: str
    iodepth: int
    options: list[tuple[str, str]]  # the job's own options, as fio parsed them
    notes: list[str] = field(default_factory=list)


def job_options(job: Path, fio: str = "fio") -> list[tuple[str, str]]:
    """The job file as fio parses it: (option, value) in order, `name` starting each job."""
    try:
        r = subprocess.run([fio, "--showcmd", str(job)], capture_output=True, text=True, timeout=60)
    except FileNotFoundError:
        raise TraceError("fio is not installed: `ssdlab run fio` needs it to read the job "
                         "(apt-get install fio)") from None
    if r.returncode != 0 or not r.stdout.strip().startswith("fio"):
        why = (r.stderr or r.stdout).strip().splitlines()
        raise TraceError(f"{job}: fio cannot read this job file: {why[-1] if why else 'exit ' + str(r.returncode)}")
    out = []
    for tok in shlex.split(r.stdout.strip())[1:]:
        key, _, val = tok.lstrip("-").partition("=")
        out.append((key, val))
    return out


def _bytes(v: str, capacity: int, what: str, job: Path) -> int:
    m = SIZE_RE.fullmatch(v.strip())
    if m:
        return int(capacity * float(m.group(1)) / 100) // 4096 * 4096
    from ..units import parse_size

    try:
        return parse_size(v)
    except ValueError as e:
        raise TraceError(f"{job}: {what}={v}: {e}") from None


def capture(job: Path, capacity: int, workdir: Path, fio: str = "fio") -> Captured:
    opts = job_options(job, fio)
    names = [v for k, v in opts if k == "name" and v != "global"]
    if len(names) != 1:
        raise TraceError(f"{job}: {len(names)} jobs: `ssdlab run fio` replays one job; split "
                         "the file or keep one job section")
    keep: list[tuple[str, str]] = []
    iodepth, size = 1, None
    for k, v in opts:
        if k in REFUSED:
            raise TraceError(f"{job}: {k}: {REFUSED[k]} cannot be replayed closed-loop; "
                             "remove it (the replay issues the next I/O as one completes)")
        if k == "numjobs" and v.strip() not in ("", "1"):
            raise TraceError(f"{job}: numjobs={v}: `ssdlab run fio` replays one job (numjobs=1)")
        if k == "iodepth":
            try:
                iodepth = int(v)
            except ValueError:
                raise TraceError(f"{job}: iodepth={v}: not a whole number") from None
            if not 1 <= iodepth <= 65536:
                raise TraceError(f"{job}: iodepth={v}: must be 1 to 65536")
        if k == "size":
            size = _bytes(v, capacity, "size", job)
            continue
        if k == "offset" and "%" in v:
            v = str(_bytes(v, capacity, "offset", job))
        if k in DROPPED or k == "name":
            continue
        keep.append((k, v))
    if size is None:
        size = capacity - capacity % 4096
    if size > capacity:
        raise TraceError(f"{job}: size={size} bytes is more than the drive's {capacity}")
    iolog = workdir / "job.iolog"
    cmd = [fio, f"--name={names[0]}", *[f"--{k}={v}" if v else f"--{k}" for k, v in keep],
           "--ioengine=null", "--iodepth=1", "--filename=ssdlab-null", f"--size={size}",
           f"--write_iolog={iolog}", "--output-format=terse", "--eta=never"]
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=MAX_SECONDS, cwd=workdir)
    except subprocess.TimeoutExpired:
        raise TraceError(f"{job}: generating the job's I/Os took over {MAX_SECONDS} s: make "
                         "the job smaller (size, io_size, number_ios)") from None
    if r.returncode != 0 or not iolog.exists():
        why = (r.stderr or r.stdout).strip().splitlines()
        raise TraceError(f"{job}: fio could not run the job with the null engine: "
                         f"{why[-1] if why else 'exit ' + str(r.returncode)}")
    return Captured(iolog, names[0], iodepth, keep)
