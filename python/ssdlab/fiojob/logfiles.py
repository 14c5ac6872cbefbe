"""fio's log files for the jobs that ask for them, from the simulator's log entries
(crates/ssdsim/src/fiojob/logs.rs): PREFIX_bw.N.log, PREFIX_iops.N.log (an entry per
direction per interval that completed I/O), PREFIX_lat.N.log, _clat, _slat (the latency
window's mean, the last partial window included), lines `time_ms, value, ddir, bs, prio`;
and PREFIX_clat_hist.N.log (write_hist_log): `time_ms, ddir, bs, bins...`, each line the
window's counts in fio's 1856 latency bins, 2^log_hist_coarseness bins summed per column.
Created new in the directory given (never over a file, never through a link)."""

from __future__ import annotations

import os
from pathlib import Path

from .plat import PLAT_NR

KIND_BW, KIND_IOPS, KIND_LAT = 0, 1, 2


def _create(path: Path):
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
    return os.fdopen(fd, "w")


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
    kinds = [("write_bw_log", (("bw", KIND_BW),)), ("write_iops_log", (("iops", KIND_IOPS),)),
             ("write_lat_log", (("lat", KIND_LAT), ("clat", KIND_LAT), ("slat", KIND_LAT)))]
    for n, (s, j) in enumerate(zip(specs, raw_jobs), 1):
        opts = s.get("options", {})
        log = j.get("log") or {}
        scale = (4096 + int(s.get("md_bytes", 0))) / 4096  # extended LBA: fio counts the metadata
        rows = list(zip(*(log.get(k, []) for k in ("t_ms", "dir", "kind", "value"))))
        for key, names in kinds:
            if key not in opts:
                continue
            prefix = (opts[key] or s["name"]).replace("/", "_")
            for name, kind in names:
                path = directory / f"{prefix}_{name}.{n}.log"
                with _create(path) as f:
                    for t, d, k, v in rows:
                        if int(k) != kind:
                            continue
                        v = int(int(v) * scale) if kind == KIND_BW else (0 if name == "slat" else int(v))
                        f.write(f"{int(t)}, {v}, {int(d)}, 0, 0\n")
                made.append(path)
        if "write_hist_log" in opts:
            prefix = (opts["write_hist_log"] or s["name"]).replace("/", "_")
            path = directory / f"{prefix}_clat_hist.{n}.log"
            stride = 1 << _coarseness(opts)
            with _create(path) as f:
                for t, d, bs, idx, counts in j.get("hist_log") or []:
                    cols = [0] * (PLAT_NR // stride)
                    for i, c in zip(idx, counts):
                        cols[int(i) // stride] += int(c)
                    f.write(f"{int(t)}, {int(d)}, {int(bs)}, " + ", ".join(map(str, cols)) + "\n")
            made.append(path)
    return made
