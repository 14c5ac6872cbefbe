"""A simulated run in fio's own layouts: the JSON of `--output-format=json` and `json+`
(jobs[], per direction io_bytes, bw, iops, runtime, slat/clat/lat_ns with percentiles and,
for json+, fio's latency bins; bw/iops sample statistics; the depth and latency bucket
tables), and fio's normal text output, built from the simulator's per-job figures as fio
builds its own (stat.c): reporting units by group_reporting (consecutive jobs of one
group that set it), `unified_rw_reporting` (mixed, both), percentiles from fio's bins.
Figures fio measures on the host (CPU, context switches, disk utilisation) are 0 or
empty; the simulated drive has no submission latency, so slat is 0 (no samples at all for
a synchronous engine, psync being fio's default, as fio records none) and lat is clat."""

from __future__ import annotations

import math
import time

from .fields import DIRS, MIXED, measures_slat
from .plat import DEFAULT_PERCENTILES, bin_value, percentiles

FIO_VERSION = "fio-3.33"
EIO = 5  # fio's error for a job under its minimum rate (td_verror(td, EIO, "check_min_rate"))
EINVAL = 22  # and for fsync_on_close's fsync(2) failing as a file closes (put_file_log: "file close")
_LAT_KEYS = ("2", "4", "10", "20", "50", "100", "250", "500", "750", "1000")
# a job's syncs under unified_rw_reporting=mixed: fio's text prints them, its JSON has no
# sync entry (dropped from the printed JSON: `printed`)
TEXT_SYNC = "ssdlab_text_sync"


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
        out.append(j)
    return out


class Stat:
    """fio's io_stat: merged as fio merges latency (Welford's) or summed as it sums the
    bandwidth and IOPS samples of a group (pure sums of min, max, count, mean, S)."""

    def __init__(self, mn: float = 0, mx: float = 0, n: int = 0, mean: float = 0.0, s: float = 0.0):
        self.min, self.max, self.n, self.mean, self.s = mn, mx, n, mean, s

    def merge(self, o: "Stat") -> None:
        if not o.n:
            return
        if not self.n:
            self.min, self.max, self.n, self.mean, self.s = o.min, o.max, o.n, o.mean, o.s
            return
        n = self.n + o.n
        delta = o.mean - self.mean
        self.s += o.s + delta * delta * self.n * o.n / n
        self.mean += delta * o.n / n
        self.min, self.max, self.n = min(self.min, o.min), max(self.max, o.max), n

    def add(self, o: "Stat") -> None:
        if not o.n:
            return
        if not self.n:
            self.min, self.max, self.n, self.mean, self.s = o.min, o.max, o.n, o.mean, o.s
            return
        self.min += o.min
        self.max += o.max
        self.n += o.n
        self.mean += o.mean
        self.s += o.s

    @property
    def dev(self) -> float:
        return math.sqrt(self.s / (self.n - 1)) if self.n > 1 else 0.0


class Dir:
    """One direction of one reporting unit: the simulator's figures of its jobs merged."""

    def __init__(self) -> None:
        self.ios = self.nbytes = self.runtime = self.unwritten = 0
        self.lat = Stat()
        self.bins: dict[int, int] = {}
        self.bw = Stat()
        self.iops = Stat()

    def add(self, raw: dict) -> None:
        self.ios += int(raw["ios"])
        self.nbytes += int(raw["bytes"])
        self.unwritten += int(raw.get("unwritten_ios", 0))
        ns = int(raw.get("runtime_ns", 0))
        self.runtime = max(self.runtime, (ns // 1000 + 999) // 1000)  # fio rounds its us up to ms
        lat = raw["lat"]
        n = int(lat["ios"])
        if n:
            sd = float(lat["stddev_ns"])
            self.lat.merge(Stat(int(lat["min_ns"]), int(lat["max_ns"]), n, float(lat["mean_ns"]),
                                sd * sd * (n - 1)))
            for i, c in zip(lat["bins"], lat["counts"]):
                self.bins[int(i)] = self.bins.get(int(i), 0) + int(c)
        for mine, key in ((self.bw, "bw_stat"), (self.iops, "iops_stat")):
            st = raw.get(key) or {}
            mine.add(Stat(st.get("min", 0), st.get("max", 0), int(st.get("samples", 0)),
                          float(st.get("mean", 0.0)), float(st.get("s", 0.0))))

    def merge(self, o: "Dir") -> None:
        """Directions of one unit into `mixed` (fio's unified_rw_reporting)."""
        self.ios += o.ios
        self.nbytes += o.nbytes
        self.unwritten += o.unwritten
        self.runtime = max(self.runtime, o.runtime)
        self.lat.merge(o.lat)
        for i, c in o.bins.items():
            self.bins[i] = self.bins.get(i, 0) + c
        self.bw.add(o.bw)
        self.iops.add(o.iops)


def _lat_json(st: Stat, bins: dict[int, int], pcts: list[float] | None, plus: bool,
              slat_n: int | None = None) -> dict:
    if slat_n is not None:  # slat: the simulated drive submits in no time; fio records one per queued I/O
        st = Stat(0, 0, slat_n)
        bins = {0: st.n} if st.n else {}
    d: dict[str, object] = {"min": int(st.min), "max": int(st.max), "mean": float(st.mean), "stddev": st.dev,
                            "N": st.n}
    if pcts and st.n:
        d["percentile"] = {f"{p:f}": v for p, v in zip(pcts, percentiles(bins, st.n, pcts))}
        if plus:
            d["bins"] = {str(bin_value(i)): c for i, c in sorted(bins.items())}
    return d


def _dir_json(d: Dir, agg: float, opts: dict, plus: bool, slat_n: int) -> dict:
    rt = d.runtime if d.ios else 0
    bw_bytes = 1000 * d.nbytes // rt if rt else 0
    clat, lat, slat = opts["clat"], opts["lat"], opts["slat"]
    out = {"io_bytes": d.nbytes, "io_kbytes": d.nbytes >> 10, "bw_bytes": bw_bytes, "bw": bw_bytes // 1024,
           "iops": 1000.0 * d.ios / rt if rt else 0.0, "runtime": rt, "total_ios": d.ios,
           "short_ios": 0, "drop_ios": 0,
           "slat_ns": _lat_json(d.lat, d.bins, opts["pcts"] if slat else None, plus, slat_n),
           "clat_ns": _lat_json(d.lat, d.bins, opts["pcts"] if clat else None, plus),
           "lat_ns": _lat_json(d.lat, d.bins, opts["pcts"] if lat else None, plus)}
    if d.bw.n:
        p_agg = min(100.0, d.bw.mean * 100.0 / (agg / 1024.0)) if agg > 1024 else 100.0
    else:
        p_agg = 0.0
    out.update({"bw_min": int(d.bw.min) if d.bw.n else 0, "bw_max": int(d.bw.max) if d.bw.n else 0,
                "bw_agg": p_agg, "bw_mean": float(d.bw.mean), "bw_dev": d.bw.dev,
                "bw_samples": d.bw.n, "iops_min": int(d.iops.min) if d.iops.n else 0,
                "iops_max": int(d.iops.max) if d.iops.n else 0, "iops_mean": float(d.iops.mean),
                "iops_stddev": d.iops.dev, "iops_samples": d.iops.n})
    return out


def sync_counts(spec: dict, raw: dict) -> tuple[int, int, int]:
    """A job's syncs as (fsyncs, fdatasyncs, sync_file_ranges): the simulator counts them all
    as syncs, and how many were sync_file_ranges; the rest are the job's sync_kind."""
    n = int((raw.get("sync") or {}).get("ios", 0))
    ranges = int(raw.get("sync_ranges", 0))
    kind = spec.get("sync_kind")
    return (n - ranges if kind == "fsync" else 0, n - ranges if kind == "fdatasync" else 0, ranges)


def short_ios(specs: list[dict], raw_jobs: list[dict], members: list[int]) -> list[int]:
    """fio 3.33's short_ios per direction for a reporting unit: no I/O is short on a
    simulated drive, but fio counts each fdatasync in total_io_u[DDIR_DATASYNC] and each
    sync_file_range in total_io_u[DDIR_SYNC_FILE_RANGE], past that four-entry array: in
    the read's and the write's short_io_u, which follow it (stat.h thread_stat)."""
    out = [0, 0, 0]
    for i in members:
        _, datasyncs, ranges = sync_counts(specs[i], raw_jobs[i])
        out[0] += datasyncs
        out[1] += ranges
    return out


def fio_floats(x):
    """`x` with each float as fio prints it (json.c: "%f", six decimals)."""
    if isinstance(x, float):
        return float(f"{x:.6f}")
    if isinstance(x, dict):
        return {k: fio_floats(v) for k, v in x.items()}
    if isinstance(x, list):
        return [fio_floats(v) for v in x]
    return x


def _dist(counts: list[int], total: int) -> list[float]:
    """fio's stat_calc_dist: % of the total, at least 0.1 where anything counted."""
    return [(max(100.0 * c / total, 0.1) if c else 0.0) if total else 0.0 for c in counts]


def _lat_dist(counts: list[int], total: int) -> list[float]:
    """fio's stat_calc_lat: % of the I/Os, at least 0.01 where any."""
    return [(max(100.0 * c / total, 0.01) if c else 0.0) if total else 0.0 for c in counts]


def report_options(opts: dict) -> dict:
    """The job's percentile options as fio reads them (clat on, lat and slat off; a
    percentile_list of up to 20 values, sorted), and whether its engine queues (slat) the
    I/Os of each direction."""
    def on(key: str, default: bool) -> bool:
        v = str(opts.get(key, "1" if default else "0")).strip().lower()
        return v in ("", "1", "true", "yes", "on")

    pcts = list(DEFAULT_PERCENTILES)
    if str(opts.get("percentile_list", "")).strip():
        pcts = sorted(float(x) for x in str(opts["percentile_list"]).split(":") if x.strip())[:20]
    return {"clat": on("clat_percentiles", True), "lat": on("lat_percentiles", False),
            "slat": on("slat_percentiles", False), "pcts": pcts,
            "queued": [measures_slat(opts, d) for d in DIRS]}


def units(specs: list[dict]) -> list[list[int]]:
    """fio's reporting units (stat.c __show_run_stats): a job that sets group_reporting
    joins the unit of the job before it when both are in one group; any other job starts
    its own."""
    out: list[list[int]] = []
    for i, s in enumerate(specs):
        prev = specs[out[-1][-1]] if out else None
        if prev is not None and s.get("group_reporting") and prev["group"] == s["group"]:
            out[-1].append(i)
        else:
            out.append([i])
    return out


def fio_json(specs: list[dict], raw_jobs: list[dict], group_reporting: bool = False, log_ms: int = 500,
             extra: dict | None = None, global_options: dict | None = None, plus: bool = False,
             elapsed_s: float | None = None) -> dict:
    """fio's `--output-format=json` (or `json+`, `plus`) document for the simulated jobs
    (`specs` as compiled, `raw_jobs` as the simulator returned them, in the same order).
    Reporting units and sample intervals follow each job's own options; `group_reporting`
    and `log_ms` are the old whole-file settings, kept for callers. `elapsed_s`: the run's
    virtual seconds (fio's elapsed, the same for every job)."""
    raw_jobs = host_bytes(specs, raw_jobs)
    groups = units(specs)
    if elapsed_s is None:
        elapsed_s = max((j["end_s"] for j in raw_jobs), default=0.0) - min(
            (j["start_s"] - (s.get("ramp_ns", 0) + s.get("startdelay_ns", 0)) / 1e9
             for s, j in zip(specs, raw_jobs)), default=0.0)
    merged = []
    for members in groups:
        dirs = [Dir() for _ in DIRS]
        for i in members:
            for d, name in enumerate(DIRS):
                dirs[d].add(raw_jobs[i][name])
        merged.append(dirs)
    # fio's group aggregate per direction: the group's bytes over its longest runtime
    moved: dict[tuple[int, int], list[int]] = {}
    for members, dirs in zip(groups, merged):
        for d in range(3):
            m = moved.setdefault((specs[members[0]]["group"], d), [0, 0])
            m[0] += dirs[d].nbytes
            m[1] = max(m[1], dirs[d].runtime)
    rates = {k: (b * 1000 / rt if rt else 0.0) for k, (b, rt) in moved.items()}
    jobs = []
    for members, dirs in zip(groups, merged):
        s = specs[members[0]]  # the unit's name, group and reporting mode: its first job's
        last = specs[members[-1]]  # its options and percentiles: its last job's (as fio's)
        js = [raw_jobs[i] for i in members]
        opts = report_options(last.get("settings") or last.get("options", {}))
        failed = [j["rate_min_failed"] for j in js if j.get("rate_min_failed")]
        job: dict = {"jobname": s["name"], "groupid": s["group"], "jobs": len(js),
                     "error": EIO if failed else EINVAL if any(j.get("close_failed") for j in js) else 0, "eta": 0, "elapsed": max(1, math.ceil(elapsed_s - 1e-9)),
                     "job options": dict(last.get("options", {}))}
        unified = s.get("unified", "none")
        shorts = short_ios(specs, raw_jobs, members)
        if unified != "mixed":
            for d, name in enumerate(DIRS):
                job[name] = _dir_json(dirs[d], rates[(s["group"], d)], opts, plus,
                                      dirs[d].ios if opts["queued"][d] else 0)
                if d == 0:
                    job[name]["unwritten_ios"] = dirs[0].unwritten
            for d, name in enumerate(DIRS):
                job[name]["short_ios"] = shorts[d]
        sync = Dir()  # fio's syncs: the latencies of all, the count of fsyncs
        for i, j in zip(members, js):
            if j.get("sync"):
                fsyncs, _, _ = sync_counts(specs[i], j)
                sync.add({"ios": fsyncs, "bytes": 0, "lat": j["sync"]})
        # under unified_rw_reporting=mixed fio's JSON has no sync entry, its text still the syncs
        job["sync" if unified != "mixed" else TEXT_SYNC] = {
            "total_ios": sync.ios, "lat_ns": _lat_json(sync.lat, sync.bins, opts["pcts"], plus)}
        if unified != "none":
            mixed = Dir()
            for part in dirs:
                mixed.merge(part)
            job[MIXED] = _dir_json(mixed, sum(rates[(s["group"], d)] for d in range(3)), opts, plus,
                                   sum(x.ios for x, q in zip(dirs, opts["queued"]) if q))
            job[MIXED]["short_ios"] = sum(shorts)
        ios = sum(d.ios for d in dirs)
        lat_b = [sum(int(j["lat_buckets"][k]) for j in js) for k in range(32)]
        depth = {k: [sum(int(j["depths"][k][i]) for j in js) for i in range(7)]
                 for k in ("level", "submit", "complete")}
        job.update({"job_runtime": sum(int(round((j["end_s"] - j["start_s"]) * 1000)) for j in js),
                    "usr_cpu": 0.0, "sys_cpu": 0.0, "ctx": 0, "majf": 0, "minf": 0,
                    "iodepth_level": dict(zip(("1", "2", "4", "8", "16", "32", ">=64"),
                                              _dist(depth["level"], ios))),
                    "iodepth_submit": dict(zip(("0", "4", "8", "16", "32", "64", ">=64"),
                                               _dist(depth["submit"], sum(depth["submit"])))),
                    "iodepth_complete": dict(zip(("0", "4", "8", "16", "32", "64", ">=64"),
                                                 _dist(depth["complete"], sum(depth["complete"])))),
                    "latency_ns": dict(zip(_LAT_KEYS, _lat_dist(lat_b[:10], ios))),
                    "latency_us": dict(zip(_LAT_KEYS, _lat_dist(lat_b[10:20], ios))),
                    "latency_ms": dict(zip((*_LAT_KEYS, "2000", ">=2000"), _lat_dist(lat_b[20:], ios))),
                    "latency_depth": int(s["iodepth"]),
                    "latency_target": int(s.get("lat_target_ns", 0)),
                    "latency_percentile": float(s.get("lat_pct", 100.0)),
                    "latency_window": int(s.get("lat_window_ns", 0))})
        desc = (job.get("job options") or {}).get("description") or (global_options or {}).get("description")
        if desc:  # fio's job description, after the latency keys
            job["desc"] = str(desc)
        if failed:  # fio's message for a job under its rate_min / rate_iops_min
            d, rate, iops = failed[0]
            job["ssdlab_error"] = (f"{s['name']}: rate_iops_min={s['rate_min_iops'][d]} not met, got {rate} IOPS"
                                   if iops else
                                   f"{s['name']}: rate_min={s['rate_min_bps'][d]}B/s not met, got {rate}B/s")
        if s.get("zbd_zone_size") and (s["write"] or s["trim"]):
            job["zone_resets"] = sum(int(j.get("zone_resets", 0)) for j in js)  # fio's nr_zone_resets
        if s.get("ss"):
            n = sum(d.ios for d in dirs)
            b = sum(d.nbytes for d in dirs)
            rt = max(int(round((j["end_s"] - j["start_s"]) * 1000)) for j in js)
            secs = rt / 1000 if rt else 0.0
            job["steadystate"] = {"ss": f"{s['ss']}:{s['ss_limit']:g}{'%' if s['ss_pct'] else ''}",
                                  "duration": int(s["ss_dur_ns"] // 10**9),
                                  "attained": int(any(j.get("ss_attained") for j in js)),
                                  "data": {"bw_mean": int(b / 1024 / secs) if secs else 0,
                                           "iops_mean": int(n / secs) if secs else 0}}
        jobs.append(fio_floats(job))
    now = time.time()
    doc = {"fio version": FIO_VERSION, "timestamp": int(now), "timestamp_ms": int(now * 1000),
           "time": time.asctime(time.localtime(now)),  # fio's ctime: "Sun Dec  6 ..."
           **({"global options": dict(global_options)} if global_options is not None else {}),
           "jobs": jobs, "disk_util": []}
    if extra:
        doc["ssdlab"] = extra
    return doc


def printed(doc: dict, plus: bool) -> dict:
    """The document as fio prints it: without what only the text prints, and (`plus` false:
    plain json) without the latency bins."""
    doc = dict(doc, jobs=[{k: v for k, v in j.items() if k != TEXT_SYNC} for j in doc["jobs"]])
    return doc if plus else strip_bins(doc)


def strip_bins(doc: dict) -> dict:
    """The json+ document as plain json: without the latency bins."""
    out = dict(doc, jobs=[])
    for j in doc["jobs"]:
        j = dict(j)
        for name in (*DIRS, MIXED, "sync", TEXT_SYNC):
            if name in j:
                j[name] = {k: ({kk: vv for kk, vv in v.items() if kk != "bins"} if k.endswith("_ns") else v)
                           for k, v in j[name].items()}
        out["jobs"].append(j)
    return out


__all__ = ["TEXT_SYNC", "fio_json", "host_bytes", "printed", "report_options", "strip_bins", "units"]
