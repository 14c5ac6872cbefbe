"""What a fio job reports and logs, read from its merged options: the sample intervals, the
log windows, the reporting units and directions, and the options fio's outputs read again
(its log files, percentiles, and the engine and depth that decide submission latencies)."""

from __future__ import annotations

from . import FioJobError
from . import options as O

# the merged options the outputs read: fio's log files, its percentile options, and the engine
# and depth that decide whether it records submission latencies (with filename, sync and
# direct for sg: fields.sg_in_call; thread for the text's `Starting` line)
SETTINGS = frozenset("""write_bw_log write_iops_log write_lat_log write_hist_log log_hist_coarseness
clat_percentiles lat_percentiles slat_percentiles percentile_list ioengine iodepth filename sync direct
thread""".split())
UNIFIED = {"0": "none", "none": "none", "1": "mixed", "mixed": "mixed", "2": "both", "both": "both"}


def reporting(o: dict, flag, num) -> dict:
    """What the job reports and logs: fio's sample intervals (bwavgtime, iopsavgtime; a
    bandwidth or IOPS log's log_avg_msec when they are not set), the latency log's window
    (log_avg_msec; fio's 0: an entry per I/O), the histogram log's (log_hist_msec), the
    logs' columns (log_offset, log_prio), group_reporting and unified_rw_reporting as the job
    sets them."""
    log_ms = num("log_avg_msec", 0, 0, 2**32 - 1)  # fio's unsigned int (fio_values.py)
    if "percentile_list" in o:  # refused before the run (the output reads it after)
        O.percentile_list(*o["percentile_list"])
    out = {"log_ms": log_ms, "log_offset": flag("log_offset"), "log_prio": flag("log_prio"),
           "group_reporting": flag("group_reporting"),
           "keep_log": any(k in o for k in ("write_bw_log", "write_iops_log", "write_lat_log",
                                             "write_hist_log")),
           "hist_ms": num("log_hist_msec", 0, 0, 86_400_000) if "write_hist_log" in o else 0}
    for key, log, name in (("bwavgtime", "write_bw_log", "bw_ns"), ("iopsavgtime", "write_iops_log", "iops_ns")):
        ms = num(key, 500, 1, 86_400_000)
        if key not in o and log in o:
            ms = log_ms or 500
        out[name] = ms * 1_000_000
    v, where = o.get("unified_rw_reporting", ("none", ""))
    if v.strip().lower() not in UNIFIED:
        raise FioJobError(f"{where}: unified_rw_reporting={v[:40]}: write none, mixed or both (0, 1, 2)")
    out["unified"] = UNIFIED[v.strip().lower()]
    out["unit_avg"] = averaged_unit_logs(o, log_ms, num)
    return out


def averaged_unit_logs(o: dict, log_ms: int, num) -> list[tuple[int, int]]:
    """The bandwidth (0) and IOPS (1) logs fio samples per I/O but averages per window, with
    the window's ms: `log_compression` makes a log fio's per_unit_log (iolog.h), so each I/O
    is a sample of the JSON's statistics, while add_log_sample still keeps the mean of each
    `log_avg_msec` window (or `bwavgtime` / `iopsavgtime` when set and smaller, as init.c)."""
    if "log_compression" not in o:
        return []
    v, where = o["log_compression"]
    if not 1024 <= O.size(v, "log_compression", where) <= 512 << 20:  # fio's minval, maxval
        raise FioJobError(f"{where}: log_compression={v.strip()[:40]}: must be 1024 to 536870912 bytes "
                          "(a chunk size, as fio reads it)")
    if not log_ms:
        return []  # each I/O is a log entry already
    return [(kind, min(log_ms, num(key, 500, 1, 86_400_000)) if key in o else log_ms)
            for kind, log, key in ((0, "write_bw_log", "bwavgtime"), (1, "write_iops_log", "iopsavgtime"))
            if log in o]
