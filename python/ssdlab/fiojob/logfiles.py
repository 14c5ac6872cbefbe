"""fio's log files for the jobs that ask for them, from the simulator's log entries
(crates/ssdsim/src/fiojob/logs.rs): PREFIX_bw.N.log, PREFIX_iops.N.log (an entry per
direction per interval that completed I/O), PREFIX_lat.N.log, _clat, _slat (the latency
window's mean, the last partial window included), lines `time_ms, value, ddir, bs, prio`;
and PREFIX_clat_hist.N.log (write_hist_log): `time_ms, ddir, bs, bins...`, each line the
window's counts in fio's 1856 latency bins, 2^log_hist_coarseness bins summed per column.
Created new in the directory given (never over a file, never through a link: safe_path)."""

from __future__ import annotations

import os
from pathlib import Path

from .. import safe_path
from .plat import PLAT_NR

KIND_BW, KIND_IOPS, KIND_LAT = 0, 1, 2
LOG_KINDS = (("write_bw_log", (("bw", KIND_BW),)), ("write_iops_log", (("iops", KIND_IOPS),)),
             ("write_lat_log", (("lat", KIND_LAT), ("clat", KIND_LAT), ("slat", KIND_LAT))),
             ("write_hist_log", (("clat_hist", None),)))


def log_files(specs: list[dict]) -> list[tuple[int, str, int | None, str]]:
    """The log files the jobs ask for: (job index from 0, log name, entry kind (None: the
    histogram log), file name), named as fio names them."""
    out = []
    for n, s in enumerate(specs):
        opts = s.get("settings") or s.get("options", {})  # [global]'s and the job's
        for key, names in LOG_KINDS:
            if key in opts:
                prefix = (opts[key] or s["name"]).replace("/", "_")
                out += [(n, name, kind, f"{prefix}_{name}.{n + 1}.log") for name, kind in names]
    return out


def check_log_dir(directory: Path, specs: list[dict]) -> None:
    """--log-dir can take the jobs' log files (checked before the run): a directory reached
    through no other user's link, writable, none of the names there already, each name
    within the filesystem's limit."""
    from ..errors import UserError

    real = safe_path.real(directory, f"--log-dir {directory}")
    if not os.path.isdir(real):
        raise UserError(f"--log-dir {directory}: not a directory")
    if not os.access(real, os.W_OK | os.X_OK):
        raise UserError(f"--log-dir {directory}: not writable (a read-only filesystem or directory); "
                        "give a directory you can write")
    longest = os.pathconf(real, "PC_NAME_MAX")
    for _n, _name, _kind, name in log_files(specs):
        if len(name.encode()) > longest:
            raise UserError(f"--log-dir {directory}: the log file name {name[:40]}... is longer than the "
                            f"filesystem's {longest} bytes; give the job's log a shorter name")
        if os.path.lexists(os.path.join(real, name)):
            raise UserError(f"--log-dir {directory}: {name} exists (ssdlab writes new files only); "
                            "remove it or give another directory")


def _coarseness(opts: dict) -> int:
    try:
        c = int(str(opts.get("log_hist_coarseness", "0")).strip() or 0)
    except ValueError:
        c = 0
    return min(max(c, 0), 6)


def write_logs(specs: list[dict], raw_jobs: list[dict], logs: dict, log_ms: int, directory: Path) -> list[Path]:
    """The log files of every job that asks for them (`logs` and `log_ms`: the old
    whole-file settings, kept for callers; each job's own options rule)."""
    made = []
    for n, name, kind, file in log_files(specs):
        s, j = specs[n], raw_jobs[n]
        path = directory / file
        with os.fdopen(safe_path.create(path, f"--log-dir {directory}", 0o644), "w") as f:
            if kind is None:
                stride = 1 << _coarseness(s.get("settings") or s.get("options", {}))
                for t, d, bs, idx, counts in j.get("hist_log") or []:
                    cols = [0] * (PLAT_NR // stride)
                    for i, c in zip(idx, counts):
                        cols[int(i) // stride] += int(c)
                    f.write(f"{int(t)}, {int(d)}, {int(bs)}, " + ", ".join(map(str, cols)) + "\n")
            else:
                log = j.get("log") or {}
                scale = (4096 + int(s.get("md_bytes", 0))) / 4096  # extended LBA: fio counts the metadata
                for t, d, k, v in zip(*(log.get(c, []) for c in ("t_ms", "dir", "kind", "value"))):
                    if int(k) == kind:
                        v = int(int(v) * scale) if kind == KIND_BW else (0 if name == "slat" else int(v))
                        f.write(f"{int(t)}, {v}, {int(d)}, 0, 0\n")
        made.append(path)
    return made
