"""Any fio job on a simulated drive (`ssdlab run fio JOBFILE --drive sim:...`): the job file
is read and compiled by ssdlab (fiojob/: an allow-list of I/O-pattern options, never run by
fio) into the simulator's own workload: every job and numjobs clone its own I/O stream and
queue depth on the drive at once, in virtual time. The drive starts purged (--state empty),
filled once sequentially (full) or twice (precondition, as SNIA's preconditioning). Metrics
as fio reports them, per direction, and the whole fio JSON document as the metric `fio`."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from .. import phase as ph
from ..fiojob.plat import PLAT_NR, bin_value, percentiles
from .common import Options
from .test import Test

DEFAULT_SECONDS = None
SECONDS_HELP = ""
PERCENTILES = ("p50_us", "p90_us", "p99_us", "p99_9_us", "p99_99_us")
STATES = ("empty", "full", "precondition")


@dataclass(frozen=True)
class FioJobOptions:
    job: str  # the user's job file
    name: str  # its first job's name
    jobs: list  # the compiled jobs (fiojob/compile.py Compiled.spec())
    group_reporting: bool = False
    log_ms: int = 500
    logs: dict = field(default_factory=dict)
    notes: tuple = ()
    global_options: dict = field(default_factory=dict)
    state: str = "empty"

    def __post_init__(self) -> None:
        if self.state not in STATES:
            raise ValueError(f"--state {self.state}: for run fio choose empty, full or precondition")

    @classmethod
    def compiled(cls, job: str, c, state: str = "empty") -> "FioJobOptions":
        """The options of job file `job` as fiojob.compile.compile_job compiled it (`c`)."""
        return cls(job=job, name=c.jobs[0].name, jobs=c.spec(), group_reporting=c.group_reporting,
                   log_ms=c.log_ms, logs=c.logs, notes=tuple(c.notes), global_options=c.global_options,
                   state=state)


def phases(capacity: int, opts: Options) -> list[ph.Phase]:
    f: FioJobOptions | None = opts.trace
    if f is None:
        raise ValueError("fio: give the job file: ssdlab run fio JOBFILE --drive sim:PROFILE")
    out = [ph.purge()]
    whole = capacity - capacity % 4096
    for i in range({"empty": 0, "full": 1, "precondition": 2}[f.state]):
        out.append(ph.seq_write(f"fill-{i + 1}", offset=0, length=whole, stop_bytes=whole))
    out.append(ph.Phase(kind="fiojob", name=f"fio-{f.name}", fiojob=ph.FioJobs(file=f.job, jobs=f.jobs)))
    return out


def fio_doc(r, f: FioJobOptions) -> dict:
    """fio's json+ document of the run (the `fio` metric; `--output-format json` prints it
    without the bins)."""
    from ..fiojob.output import fio_json

    jobs = (r.latency or {}).get("jobs") or []
    notes = list(f.notes)
    extra = {"job_file": f.job, "state": f.state, "notes": notes,
             "unwritten_read_ios": float(r.totals.get("unwritten_read_ios") or 0.0),
             "virtual_time": True}
    if any(j.get("log_truncated") for j in jobs):
        notes.append("log entries past ssdlab's budget (256 MiB per run) were not kept: "
                              "the log files end early; give a larger log_avg_msec")
    return fio_json(f.jobs, jobs, f.group_reporting, f.log_ms, extra, f.global_options, plus=True,
                    elapsed_s=float(r.totals.get("duration_s") or 0.0))


def _bins(lat: dict) -> dict[int, int]:
    """fio's json+ bins (value -> count) as bin indices (fiojob.plat)."""
    return {_INDEX[int(v)]: int(c) for v, c in lat["bins"].items()}


_INDEX = {bin_value(i): i for i in range(PLAT_NR)}


def analyze(results, opts: Options) -> dict:
    r = next(x for x in results if x.phase.kind == "fiojob")
    f: FioJobOptions = opts.trace
    tot = r.totals
    doc = fio_doc(r, f)
    # the metrics per direction, whatever unified_rw_reporting the job file asks of fio's JSON
    per_dir = fio_doc(r, dataclasses.replace(f, jobs=[dict(s, unified="none") for s in f.jobs]))
    dur = float(tot.get("duration_s") or 0.0)
    out: dict = {"iodepth": max(int(j["iodepth"]) for j in f.jobs), "jobs": len(f.jobs),
                 "duration_s": dur, "iops": float(tot.get("iops") or 0.0),
                 "unwritten_read_ios": float(tot.get("unwritten_read_ios") or 0.0)}
    for d in ("read", "write", "trim"):
        ds = [j[d] for j in per_dir["jobs"]]
        n = sum(x["total_ios"] for x in ds)
        b = sum(x["io_bytes"] for x in ds)
        out[f"{d}_ios"] = float(n)
        out[f"{d}_bytes"] = float(b)
        rt = max((x["runtime"] for x in ds), default=0) / 1000
        out[f"{d}_iops"] = n / rt if rt and n else None
        out[f"{d}_mbps"] = b / rt / 1e6 if rt and n else None
        if d == "trim":
            continue
        lat = [x["clat_ns"] for x in ds if x["total_ios"]]
        if lat:
            nn = sum(x["N"] for x in lat)
            out[f"{d}_lat_min_us"] = min(x["min"] for x in lat) / 1e3
            out[f"{d}_lat_mean_us"] = sum(x["mean"] * x["N"] for x in lat) / nn / 1e3
            out[f"{d}_lat_max_us"] = max(x["max"] for x in lat) / 1e3
            for k, p in zip(PERCENTILES, (50.0, 90.0, 99.0, 99.9, 99.99)):
                vals = [percentiles(_bins(x), x["N"], [p])[0] for x in lat if "bins" in x]
                out[f"{d}_lat_{k}"] = max(vals) / 1e3 if vals else None
        else:
            for k in ("min_us", "mean_us", "max_us", *PERCENTILES):
                out[f"{d}_lat_{k}"] = None
    if tot.get("energy_j") is not None:
        out["energy_j"] = tot["energy_j"]
    out["fio"] = doc
    return out


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
