"""A simulated run in fio's own layouts: the JSON of `--output-format=json` (jobs[], per
direction io_bytes, bw, iops, runtime, slat/clat/lat_ns with percentiles, the job options),
fio's normal text output, and fio's per-interval log files (write_bw_log, write_iops_log,
write_lat_log at log_avg_msec), so fio readers take simulated results unchanged. Figures
fio measures on the host (CPU, context switches, disk utilisation) are 0 or empty; the
simulated drive has no submission latency, so slat is 0."""

from __future__ import annotations

import math
import os
import time
from pathlib import Path

import numpy as np

from .. import safe_path

DIRS = ("read", "write", "trim")
PCTS = (1, 5, 10, 20, 30, 40, 50, 60, 70, 80, 90, 95, 99, 99.5, 99.9, 99.95, 99.99)
FIO_VERSION = "fio-3.33"


def _hist(lat: dict) -> tuple[np.ndarray, np.ndarray]:
    return (np.asarray(lat.get("edges_us", []), dtype=float) * 1e3,
            np.asarray(lat.get("counts", []), dtype=np.int64))


def _merge_lat(lats: list[dict]) -> dict:
    """Latency dicts (simulator's: us, histogram edges/counts) merged."""
    lats = [x for x in lats if x.get("ios")]
    if not lats:
        return {"ios": 0}
    n = sum(int(x["ios"]) for x in lats)
    mean = sum(x["mean_us"] * x["ios"] for x in lats) / n
    var = sum(x["ios"] * (x.get("stddev_us", 0.0) ** 2 + (x["mean_us"] - mean) ** 2) for x in lats) / n
    acc: dict[float, int] = {}
    for x in lats:
        for e, c in zip(*_hist(x)):
            acc[float(e)] = acc.get(float(e), 0) + int(c)
    edges = sorted(acc)
    return {"ios": n, "min_us": min(x["min_us"] for x in lats), "max_us": max(x["max_us"] for x in lats),
            "mean_us": mean, "stddev_us": math.sqrt(var), "edges_us": np.array(edges) / 1e3,
            "counts": np.array([acc[e] for e in edges], dtype=np.int64)}


def _percentiles(lat: dict) -> dict[str, int]:
    edges, counts = _hist(lat)
    out = {}
    if not len(counts):
        return {f"{p:f}": 0 for p in PCTS}
    cum = np.cumsum(counts)
    lo, hi = lat["min_us"] * 1e3, lat["max_us"] * 1e3
    for p in PCTS:
        rank = max(1, math.ceil(p / 100 * cum[-1]))
        i = int(np.searchsorted(cum, rank))
        out[f"{p:f}"] = int(min(max(edges[min(i, len(edges) - 1)], lo), hi))
    return out


def _lat_ns(lat: dict, pct: bool) -> dict:
    n = int(lat.get("ios") or 0)
    d = {"min": int(lat["min_us"] * 1e3) if n else 0, "max": int(lat["max_us"] * 1e3) if n else 0,
         "mean": float(lat["mean_us"] * 1e3) if n else 0.0,
         "stddev": float(lat.get("stddev_us", 0.0) * 1e3) if n else 0.0, "N": n}
    if pct and n:
        d["percentile"] = _percentiles(lat)
    return d


def _stats(vals: list[float]) -> tuple[float, float, float, float, int]:
    if not vals:
        return 0.0, 0.0, 0.0, 0.0, 0
    a = np.asarray(vals, dtype=float)
    return float(a.min()), float(a.max()), float(a.mean()), float(a.std(ddof=1) if len(a) > 1 else 0.0), len(a)


def _samples(jobs: list[dict], d: int, log_ms: int) -> tuple[list[float], list[float]]:
    """Per-interval bandwidth (KiB/s) and IOPS of direction d, the jobs' samples summed."""
    by_t: dict[int, list[float]] = {}
    for j in jobs:
        s = j["samples"]
        for t, dd, b, n in zip(s["t_ms"], s["dir"], s["bytes"], s["ios"]):
            if int(dd) == d:
                e = by_t.setdefault(int(t), [0.0, 0.0])
                e[0] += float(b)
                e[1] += float(n)
    secs = log_ms / 1000
    return ([v[0] / 1024 / secs for v in by_t.values()], [v[1] / secs for v in by_t.values()])


def _dir(jobs: list[dict], d: int, runtime_ms: int, log_ms: int, group_bw: float) -> dict:
    name = DIRS[d]
    ios = sum(int(j[name]["ios"]) for j in jobs)
    nbytes = sum(int(j[name]["bytes"]) for j in jobs)
    lat = _merge_lat([j[name]["lat"] for j in jobs])
    secs = runtime_ms / 1000 if runtime_ms else 0.0
    bw_b = nbytes / secs if secs else 0.0
    bws, iopss = _samples(jobs, d, log_ms) if ios else ([], [])
    bmin, bmax, bmean, bdev, bn = _stats(bws)
    imin, imax, imean, idev, inn = _stats(iopss)
    out = {"io_bytes": nbytes, "io_kbytes": nbytes // 1024, "bw_bytes": int(bw_b),
           "bw": int(bw_b / 1024), "iops": ios / secs if secs else 0.0, "runtime": runtime_ms if ios else 0,
           "total_ios": ios, "short_ios": 0, "drop_ios": 0,
           "slat_ns": {"min": 0, "max": 0, "mean": 0.0, "stddev": 0.0, "N": ios},
           "clat_ns": _lat_ns(lat, True), "lat_ns": _lat_ns(lat, False),
           "bw_min": int(bmin), "bw_max": int(bmax),
           "agg_pct": (100.0 * bw_b / group_bw) if group_bw else 0.0,
           "bw_mean": bmean, "bw_dev": bdev, "bw_samples": bn,
           "iops_min": int(imin), "iops_max": int(imax), "iops_mean": imean, "iops_stddev": idev,
           "iops_samples": inn}
    if d == 0:
        out["unwritten_ios"] = sum(int(j["read"].get("unwritten_ios", 0)) for j in jobs)
    return out


def host_bytes(specs: list[dict], raw_jobs: list[dict]) -> list[dict]:
    """The jobs' byte counts as fio counts them: an extended-LBA job (md_bytes > 0) moved
    4096 data bytes per block in the simulator, fio counts 4096 + md_bytes per block."""
    out = []
    for s, j in zip(specs, raw_jobs):
        md = int(s.get("md_bytes", 0))
        if md:
            j = dict(j)
            for name in DIRS:
                j[name] = dict(j[name], bytes=int(j[name]["bytes"]) // 4096 * (4096 + md))
            smp = dict(j["samples"])
            smp["bytes"] = [int(b) // 4096 * (4096 + md) for b in smp["bytes"]]
            j["samples"] = smp
        out.append(j)
    return out


EIO = 5  # fio's error for a job under its minimum rate (td_verror(td, EIO, "check_min_rate"))


def _runtime_ms(jobs: list[dict]) -> int:
    return max(int(round((j["end_s"] - j["start_s"]) * 1000)) for j in jobs)


def fio_json(specs: list[dict], raw_jobs: list[dict], group_reporting: bool, log_ms: int,
             extra: dict | None = None, global_options: dict | None = None) -> dict:
    """fio's `--output-format=json` document for the simulated jobs (`specs` as compiled,
    `raw_jobs` as the simulator returned them, in the same order)."""
    raw_jobs = host_bytes(specs, raw_jobs)
    units: list[tuple[dict, list[dict]]] = []
    if group_reporting:
        groups: dict[int, tuple[dict, list[dict]]] = {}
        for s, j in zip(specs, raw_jobs):
            groups.setdefault(s["group"], (s, []))[1].append(j)
        units = list(groups.values())
    else:
        units = [(s, [j]) for s, j in zip(specs, raw_jobs)]
    group_bw: dict[tuple[int, int], float] = {}
    for s, js in units:
        rt = _runtime_ms(js)
        for d, name in enumerate(DIRS):
            b = sum(int(j[name]["bytes"]) for j in js)
            group_bw[(s["group"], d)] = group_bw.get((s["group"], d), 0.0) + (b / (rt / 1000) if rt else 0.0)
    jobs = []
    for s, js in units:
        rt = _runtime_ms(js)
        failed = [j["rate_min_failed"] for j in js if j.get("rate_min_failed")]
        job = {"jobname": s["name"], "groupid": s["group"], "jobs": len(js),
               "error": EIO if failed else 0, "eta": 0,
               "elapsed": max(1, math.ceil(max(j["end_s"] for j in js) - min(j["start_s"] for j in js))),
               "job options": dict(s.get("options", {}))}
        for d, name in enumerate(DIRS):
            job[name] = _dir(js, d, rt, log_ms, group_bw[(s["group"], d)])
        job["sync"] = {"total_ios": 0, "lat_ns": {"min": 0, "max": 0, "mean": 0.0, "stddev": 0.0, "N": 0}}
        job.update({"job_runtime": rt, "usr_cpu": 0.0, "sys_cpu": 0.0, "ctx": 0, "majf": 0, "minf": 0,
                    "iodepth_level": {str(k): 0.0 for k in (1, 2, 4, 8, 16, 32)} | {">=64": 0.0},
                    "iodepth_submit": {}, "iodepth_complete": {},
                    "latency_ns": {}, "latency_us": {}, "latency_ms": {},
                    "latency_depth": int(s["iodepth"]), "latency_target": 0,
                    "latency_percentile": 100.0, "latency_window": 0})
        depth = int(s["iodepth"])
        level = "32" if depth >= 32 and depth < 64 else (">=64" if depth >= 64 else str(1 << (depth.bit_length() - 1)))
        job["iodepth_level"][level] = 100.0
        if failed:  # fio's message for a job under its rate_min / rate_iops_min
            d, rate, iops = failed[0]
            job["ssdlab_error"] = (f"{s['name']}: rate_iops_min={s['rate_min_iops'][d]} not met, got {rate} IOPS"
                                   if iops else
                                   f"{s['name']}: rate_min={s['rate_min_bps'][d]}B/s not met, got {rate}B/s")
        if s.get("zbd_zone_size") and (s["write"] or s["trim"]):
            job["zone_resets"] = sum(int(j.get("zone_resets", 0)) for j in js)  # fio's nr_zone_resets
        if s.get("ss"):
            ios = sum(int(j[n]["ios"]) for j in js for n in DIRS)
            b = sum(int(j[n]["bytes"]) for j in js for n in DIRS)
            secs = rt / 1000 if rt else 0.0
            job["steadystate"] = {"ss": f"{s['ss']}:{s['ss_limit']:g}{'%' if s['ss_pct'] else ''}",
                                  "duration": int(s["ss_dur_ns"] // 10**9),
                                  "attained": int(any(j.get("ss_attained") for j in js)),
                                  "data": {"bw_mean": int(b / 1024 / secs) if secs else 0,
                                           "iops_mean": int(ios / secs) if secs else 0}}
        jobs.append(job)
    now = time.time()
    doc = {"fio version": FIO_VERSION, "timestamp": int(now), "timestamp_ms": int(now * 1000),
           "time": time.strftime("%a %b %d %H:%M:%S %Y", time.localtime(now)),
           "global options": dict(global_options or {}), "jobs": jobs, "disk_util": []}
    if extra:
        doc["ssdlab"] = extra
    return doc


def _num(x: float) -> str:
    """fio's short number form: 1234, 12.3k, 406k, 1.2M."""
    for div, suf in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if x >= 10 * div or (suf != "k" and x >= div):
            v = x / div
            return f"{v:.3g}{suf}" if v < 100 else f"{v:.0f}{suf}"
    return f"{x:.0f}"


def _bw(bps: float) -> str:
    mib = bps / 2**20
    if mib >= 1:
        return f"{mib:.4g}MiB/s ({bps / 1e6:.4g}MB/s)"
    return f"{bps / 1024:.4g}KiB/s ({bps / 1e3:.4g}kB/s)"


def _size(b: float) -> str:
    for div, suf in ((2**40, "TiB"), (2**30, "GiB"), (2**20, "MiB"), (2**10, "KiB")):
        if b >= div:
            return f"{b / div:.4g}{suf}"
    return f"{b:.0f}B"


def fio_text(doc: dict) -> str:
    """fio's normal output for a fio_json document."""
    lines = []
    for j in doc["jobs"]:
        if j.get("ssdlab_error"):
            lines.append(j["ssdlab_error"])
        err = f"err= {j['error']}" + (": func=check_min_rate, error=Input/output error" if j["error"] else "")
        lines.append(f"{j['jobname']}: (groupid={j['groupid']}, jobs={j.get('jobs', 1)}): {err}: pid=0: {doc['time']}")
        for name in DIRS:
            d = j[name]
            if not d["total_ios"]:
                continue
            resets = f"; {j['zone_resets']} zone resets" if "zone_resets" in j else ""
            lines.append(f"  {name}: IOPS={_num(d['iops'])}, BW={_bw(d['bw_bytes'])}"
                         f"({_size(d['io_bytes'])}/{d['runtime']}msec){resets}")
            for what, key in (("slat", "slat_ns"), ("clat", "clat_ns"), (" lat", "lat_ns")):
                x = d[key]
                lines.append(f"    {what} (usec): min={x['min'] / 1e3:.0f}, max={x['max'] / 1e3:.0f}, "
                             f"avg={x['mean'] / 1e3:.2f}, stdev={x['stddev'] / 1e3:.2f}")
            pct = list(d["clat_ns"].get("percentile", {}).items())
            lines.append("    clat percentiles (usec):")
            for i in range(0, len(pct), 4):
                row = ", ".join(f"{float(k):5.2f}th=[{v / 1e3:5.0f}]" for k, v in pct[i:i + 4])
                lines.append(f"     | {row}" + ("," if i + 4 < len(pct) else ""))
            lines.append(f"   bw (  KiB/s): min={d['bw_min']}, max={d['bw_max']}, per={d['agg_pct']:.2f}%, "
                         f"avg={d['bw_mean']:.2f}, stdev={d['bw_dev']:.2f}, samples={d['bw_samples']}")
            lines.append(f"   iops        : min={d['iops_min']}, max={d['iops_max']}, avg={d['iops_mean']:.2f}, "
                         f"stdev={d['iops_stddev']:.2f}, samples={d['iops_samples']}")
            if name == "read" and d.get("unwritten_ios"):
                lines.append(f"  note: {d['unwritten_ios']} reads touched blocks never written "
                             "(a drive answers them without reading flash)")
        lines.append(f"  lat percentiles and IOPS in virtual time; iodepth={j['latency_depth']}")
    groups: dict[int, list[dict]] = {}
    for j in doc["jobs"]:
        groups.setdefault(j["groupid"], []).append(j)
    for g, js in groups.items():
        lines.append("")
        lines.append(f"Run status group {g} (all jobs):")
        for name in DIRS:
            ds = [j[name] for j in js if j[name]["total_ios"]]
            if not ds:
                continue
            tot = sum(d["io_bytes"] for d in ds)
            rt = [d["runtime"] for d in ds]
            agg = tot / (max(rt) / 1000) if max(rt) else 0.0
            lo, hi = min(d["bw_bytes"] for d in ds), max(d["bw_bytes"] for d in ds)
            lines.append(f"  {name.upper():>5}: bw={_bw(agg)}, {_bw(lo)}-{_bw(hi)}, io={_size(tot)} "
                         f"({tot / 1e6:.4g}MB), run={min(rt)}-{max(rt)}msec")
    return "\n".join(lines)


LOG_KINDS = (("write_bw_log", ("bw",)), ("write_iops_log", ("iops",)), ("write_lat_log", ("lat", "clat", "slat")))


def log_files(specs: list[dict]) -> list[tuple[int, str, str]]:
    """The log files the jobs ask for: (job index from 0, log kind, file name), named as
    fio names them: PREFIX_bw.N.log, PREFIX_iops.N.log, PREFIX_lat.N.log (and _clat, _slat)."""
    out = []
    for n, s in enumerate(specs):
        opts = s.get("options", {})
        for key, names in LOG_KINDS:
            if key in opts:
                prefix = (opts[key] or s["name"]).replace("/", "_")
                out += [(n, name, f"{prefix}_{name}.{n + 1}.log") for name in names]
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
    for _n, _kind, name in log_files(specs):
        if len(name.encode()) > longest:
            raise UserError(f"--log-dir {directory}: the log file name {name[:40]}... is longer than the "
                            f"filesystem's {longest} bytes; give the job's log a shorter name")
        if os.path.lexists(os.path.join(real, name)):
            raise UserError(f"--log-dir {directory}: {name} exists (ssdlab writes new files only); "
                            "remove it or give another directory")


def write_logs(specs: list[dict], raw_jobs: list[dict], logs: dict, log_ms: int, directory: Path) -> list[Path]:
    """fio's log files for the jobs that ask for them (log_files), lines `time_ms, value,
    ddir, bs, prio`, one per direction per log_avg_msec interval. Created new in
    `directory` (never over a file, never through a link: safe_path)."""
    made = []
    raw_jobs = host_bytes(specs, raw_jobs)
    secs = log_ms / 1000
    for n, name, file in log_files(specs):
        smp = raw_jobs[n]["samples"]
        path = directory / file
        with os.fdopen(safe_path.create(path, f"--log-dir {directory}", 0o644), "w") as f:
            for t, d, b, k, ls in zip(smp["t_ms"], smp["dir"], smp["bytes"], smp["ios"], smp["lat_sum_ns"]):
                if name == "bw":
                    v = int(b / 1024 / secs)
                elif name == "iops":
                    v = int(k / secs)
                elif name == "slat":
                    v = 0
                else:
                    v = int(ls / k) if k else 0
                if k or name in ("bw", "iops"):
                    f.write(f"{int(t)}, {v}, {int(d)}, 0, 0\n")
        made.append(path)
    return made
