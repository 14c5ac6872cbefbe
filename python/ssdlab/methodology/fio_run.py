"""Any fio job on a simulated drive (`ssdlab run fio JOBFILE --drive sim:...`): the job file
is read and compiled by ssdlab (fiojob/: an allow-list of I/O-pattern options, never run by
fio) into the simulator's own workload: every job and numjobs clone its own I/O stream and
queue depth on the drive at once, in virtual time. The drive starts purged (--state empty),
filled once sequentially (full) or twice (precondition, as SNIA's preconditioning). Metrics
as fio reports them, per direction, and the whole fio JSON document as the metric `fio`."""

from __future__ import annotations

import dataclasses
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional, Sequence

from .. import phase as ph
from ..errors import UserError, file_problem
from ..fioformat import json_read
from ..fioformat.logs import LOG_KINDS
from ..fioformat.plat import bin_index, percentiles
from .common import Options
from .test import CliOption, Console, Test, TestOptions
from .trace import STATE

DEFAULT_SECONDS = None
SECONDS_HELP = ""
PERCENTILES = tuple(k for k, _ in json_read.PERCENTILES)  # the metrics, named as a real run's
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
    global_options: dict | None = None
    state: str = "empty"
    text: str = ""  # the job file's text as compiled (read once: the file may change since)

    def __post_init__(self) -> None:
        if self.state not in STATES:
            raise ValueError(f"--state {self.state}: for run fio choose empty, full or precondition")

    @classmethod
    def compiled(cls, job: str, c, state: str = "empty") -> "FioJobOptions":
        """The options of job file `job` as fiojob.compile.compile_job compiled it (`c`)."""
        return cls(job=job, name=c.jobs[0].name, jobs=c.spec(), group_reporting=c.group_reporting,
                   log_ms=c.log_ms, logs=c.logs, notes=tuple(c.notes), global_options=c.global_options,
                   state=state, text=c.text)


LOGS = tuple(option for option, _ in LOG_KINDS)  # the job options that write fio's logs
OUTPUT_FORMATS = ("normal", "json", "json+")


def output_formats(value: str) -> tuple[bool, bool, bool]:
    """fio's --output-format: one format or a comma list of them (fio prints each, the JSON
    document before the text whatever their order; json+ is the JSON with its latency bins)
    -> (json, json+, normal). terse is fio's, not ssdlab's."""
    fmts = [f.strip().lower() for f in str(value).split(",")]
    for f in fmts:
        if f in ("terse", "minimal", "csv"):
            raise UserError(f"--output-format {value}: {f}: fio's terse output is not written by "
                            "ssdlab: choose normal, json or json+ (or a comma list, e.g. json,normal)")
        if f not in OUTPUT_FORMATS:
            raise UserError(f"--output-format {value}: {f or 'a blank'}: choose normal, json or json+ "
                            "(or a comma list, e.g. json,normal)")
    return "json" in fmts or "json+" in fmts, "json+" in fmts, "normal" in fmts


def job_env(names: list[str]) -> dict[str, str]:
    """--env NAME (its value from the environment) and --env NAME=VALUE: the only variables
    a job file's ${NAME} expands (fio expands any; a job file must not copy the environment
    into the stored run)."""
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


class FioFlags(TestOptions):
    """`run fio JOBFILE`: the job file read, checked and compiled by ssdlab for the smallest
    of the (simulated) drives (fio never runs it); --state, fio's --output-format, and
    --log-dir for the job's log files."""

    cli = (
        CliOption("job", "JOB", Optional[Path], None,
                  "fio: the fio job file to replay on the simulated drive", argument=True),
        STATE,
        CliOption("output_format", "--output-format", str, "normal",
                  "fio: normal (fio's text), json (fio's JSON document), json+ (with fio's latency bins), "
                  "or a comma list of them, as fio takes it (json,normal: the JSON, then the text)"),
        CliOption("log_dir", "--log-dir", Optional[Path], None,
                  "fio: write the job's write_bw_log / write_iops_log / write_lat_log / write_hist_log "
                  "files in this directory"),
        CliOption("env", "--env", list[str], [],
                  "fio: expand ${NAME} in the job file from the environment (--env NAME) or as given "
                  "(--env NAME=VALUE); no other variable is expanded"),
    )

    def parse(self, values: dict[str, Any], console: Console) -> None:
        job, state = values["job"], values["state"]
        output_formats(values["output_format"])
        job_env(values.get("env") or [])  # a bad --env is refused before any drive is opened
        if job is None:
            raise UserError("run fio: give the job file: ssdlab run fio JOBFILE --drive sim:PROFILE")
        if (why := file_problem(job, "no such job file")) is not None:
            raise UserError(f"{job}: {why}")
        if state not in STATES:
            raise UserError(f"--state {state}: for run fio choose empty, full or precondition")
        return None

    def for_drives(self, parsed: Any, values: dict[str, Any], drives: Sequence[tuple[str, Any]],
                   seed: int, console: Console) -> FioJobOptions:
        from ..fiojob.compile import compile_job

        real = [spec for spec, t in drives if not t.capabilities.simulated]
        if real:
            raise UserError(f"run fio: {real[0]} is a real drive: run the job with fio itself there; "
                            "`ssdlab run fio` runs a job on simulated drives (--drive sim:PROFILE)")
        ids = sorted((t.identify() for _, t in drives), key=lambda i: i.capacity)
        cap = ids[0].capacity if ids else 0
        c = compile_job(Path(values["job"]), cap, seed, zone_bytes(ids[0]) if ids else 0,
                        job_env(values.get("env") or []))
        for n in c.notes:
            console.note(f"note: {n}")
        f = FioJobOptions.compiled(str(values["job"]), c, values["state"])
        wants = [k for k in LOGS if any(k in (j.get("settings") or {}) for j in f.jobs)]
        log_dir = values["log_dir"]
        if log_dir is None and wants:
            console.note(f"note: {', '.join(wants)}: no log files written; give --log-dir DIR "
                         "to have them in fio's format")
        if log_dir is not None:
            from ..fioformat.logs import check_log_dir

            where = check_log_dir(Path(log_dir), f.jobs)  # before the run: its files can be written
            if drives and hasattr(drives[0][1], "fio_log_dir"):
                drives[0][1].fio_log_dir = where  # the logs of an entry per I/O: written as it runs
        return f

    def stored(self, parsed: FioJobOptions, values: dict[str, Any]) -> dict[str, Any]:
        # the text compiled and run, never the file read again by name: it may have been
        # replaced since (by a link to a file only root may read, in a shared directory)
        return {"job": {"file": str(values["job"]), "text": parsed.text[:100_000]}}

    def show(self, doc: dict, parsed: FioJobOptions, values: dict[str, Any], store: Any,
             outcomes: Sequence[Any], console: Console) -> tuple[list[str | dict], bool]:
        """fio's own layouts per drive, in fio's order (the JSON document, then the text);
        the job's log files for the first. With a JSON format stdout holds fio's output only;
        with the text, fio's lines before its jobs (text_header.py) come first, as fio's."""
        from ..fioformat.json_write import printed
        from ..fioformat.logs import write_logs
        from ..fioformat.text_header import header
        from ..fioformat.text_output import fio_text

        as_json, plus, normal = output_formats(values["output_format"])
        out: list[str | dict] = []
        for d in doc["drives"]:
            fdoc = d["metrics"].get("fio")
            if fdoc:
                if normal:  # fio's lines as it adds the jobs and starts them: before its JSON
                    out.append(header(parsed.jobs, parsed.global_options))
                if as_json:
                    out.append(printed(fdoc, plus))
                if normal:
                    out += [f"drive {d['drive']}:", fio_text(fdoc)]
        log_dir = values["log_dir"]
        if log_dir is not None and outcomes:  # the first drive's, from the stored phase
            ph_ = [p for p in store.phases(outcomes[0].run_drive_id, with_data=False) if p["kind"] == "fiojob"]
            if ph_:
                for path in write_logs(parsed.jobs, ph_[-1]["latency"]["jobs"], parsed.logs,
                                       parsed.log_ms, Path(log_dir)):
                    console.note(f"wrote {path}")
        return out, as_json


def zone_bytes(ident) -> int:
    """A simulated drive's own zones for zonemode=zbd: its erase unit across the drive, one
    block of every plane of every die (the unit a zoned (ZNS) drive maps a zone to)."""
    info = ident.extra.get("info", {}) if ident.extra else {}
    if not info.get("dies") or not info.get("block_mib"):
        return 0
    return int(info["dies"] * info["block_mib"] * (1 << 20))


def phases(capacity: int, opts: Options) -> list[ph.Phase]:
    f = opts.of(FioJobOptions)
    out = [ph.purge()]
    whole = capacity - capacity % 4096
    for i in range({"empty": 0, "full": 1, "precondition": 2}[f.state]):
        out.append(ph.seq_write(f"fill-{i + 1}", offset=0, length=whole, stop_bytes=whole))
    out.append(ph.Phase(kind="fiojob", name=f"fio-{f.name}", fiojob=ph.FioJobs(file=f.job, jobs=f.jobs)))
    return out


def fio_doc(r, f: FioJobOptions) -> dict:
    """fio's json+ document of the run (the `fio` metric; `--output-format json` prints it
    without the bins)."""
    from ..fioformat.json_write import fio_json

    jobs = (r.latency or {}).get("jobs") or []
    notes = list(f.notes)
    extra = {"job_file": f.job, "state": f.state, "notes": notes,
             "unwritten_read_ios": float(r.totals.get("unwritten_read_ios") or 0.0),
             "virtual_time": True, "duration_s": float(r.totals.get("duration_s") or 0.0)}
    if any(j.get("log_truncated") for j in jobs):
        notes.append("log entries past ssdlab's budget (256 MiB per run) were not kept: "
                     "the log files end early; give a larger log_avg_msec")
    return fio_json(f.jobs, jobs, f.group_reporting, f.log_ms, extra, f.global_options, plus=True,
                    elapsed_s=float(r.totals.get("duration_s") or 0.0))


def _bins(lat: dict) -> dict[int, int]:
    """fio's json+ bins (value -> count) as bin indices (fioformat/plat.py)."""
    return {bin_index(int(v)): int(c) for v, c in lat["bins"].items()}


def analyze(results, opts: Options) -> dict:
    r = next(x for x in results if x.phase.kind == "fiojob")
    f = opts.of(FioJobOptions)
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
            for k, p in json_read.PERCENTILES:
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
    uses=frozenset(),  # the job file's own ranges: no --spare
    cost=1.0,
    in_review=False,
    options=FioFlags(),
)
