"""Parsing what fio prints and logs, robustly.

fio's stdout can hold warnings before the JSON, and with `--status-interval` several
complete JSON reports one after the other (each cumulative since the start; the last one
is the final report). Its logs are CSV lines `time_ms, value, ddir, bs, offset[, prio]`,
one file per job, possibly empty or with a torn last line when fio was killed.

Everything here is a pure function of text or files, so it is tested against recorded
outputs (tests/data/fio/).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any, Iterable

import numpy as np

# fio's latency histogram layout (stat.h): 29 groups of 64 buckets, values in ns.
PLAT_BITS = 6
PLAT_VAL = 1 << PLAT_BITS
PLAT_NR = 29 * PLAT_VAL
DDIRS = ("read", "write", "trim")
PERCENTILES = (("p50_us", 50.0), ("p90_us", 90.0), ("p99_us", 99.0), ("p99_9_us", 99.9),
               ("p99_99_us", 99.99))
SERIES_KEYS = ("t_s", "iops", "mbps", "read_mbps", "write_mbps", "lat_mean_us", "lat_max_us")


class FioOutputError(RuntimeError):
    """fio's output holds no usable report."""


# --------------------------------------------------------------------------- JSON stream
class JsonStream:
    """Incremental splitter: feed text as it arrives, get back each complete top-level JSON
    object. Text outside objects (fio warnings, notes) is kept in `noise`. An object starts
    only at a '{' that opens a line, so braces inside warning text do not confuse it."""

    def __init__(self) -> None:
        self.buf = ""
        self.noise: list[str] = []
        self._depth = 0
        self._in_str = False
        self._esc = False
        self._start = -1  # index in buf of the current object's '{'
        self._pos = 0  # next index of buf to scan
        # an object was cut short or garbled after the last good one: when fio's output
        # ends that way, its final report is torn (the last good one is an earlier status)
        self.torn_tail = False

    def feed(self, text: str) -> list[dict]:
        self.buf += text
        out: list[dict] = []
        buf = self.buf
        i = self._pos
        n = len(buf)
        while i < n:
            if self._start < 0:
                j = buf.find("{", i)
                if j < 0:
                    i = n
                    break
                line_start = buf.rfind("\n", 0, j) + 1
                if buf[line_start:j].strip():
                    i = j + 1  # a brace inside a warning line
                    continue
                pre = buf[:line_start]
                if pre.strip():
                    self.noise.extend(x for x in pre.splitlines() if x.strip())
                buf = buf[line_start:]
                n = len(buf)
                i = j - line_start
                self._start = i
                self._depth = 0
                self._in_str = False
                self._esc = False
            c = buf[i]
            if self._in_str:
                if self._esc:
                    self._esc = False
                elif c == "\\":
                    self._esc = True
                elif c == '"':
                    self._in_str = False
                i += 1
                continue
            if c == '"':
                self._in_str = True
            elif c == "{" and self._depth > 0 and i > self._start and buf[i - 1] == "\n":
                # a new top-level object (fio writes those at column 0, nested ones indented)
                # while one is open: the open one was torn; keep it as noise, start over here
                self.noise.extend(x for x in buf[self._start:i].splitlines() if x.strip())
                self.torn_tail = True
                buf = buf[i:]
                n = len(buf)
                i = 0
                self._start = 0
                self._depth = 0
                continue
            elif c == "{" or c == "[":
                self._depth += 1
            elif c == "}" or c == "]":
                self._depth -= 1
                if self._depth == 0:
                    chunk = buf[self._start:i + 1]
                    try:
                        obj = json.loads(chunk)
                        if isinstance(obj, dict):
                            out.append(obj)
                            self.torn_tail = False
                        else:
                            self.noise.append(chunk)
                    except (json.JSONDecodeError, RecursionError):
                        self.noise.extend(chunk.splitlines())
                        self.torn_tail = True
                    buf = buf[i + 1:]
                    n = len(buf)
                    i = 0
                    self._start = -1
                    continue
            i += 1
        if self._start < 0:
            # keep only the unfinished last line (an object may start on it)
            cut = buf.rfind("\n") + 1
            if buf[:cut].strip():
                self.noise.extend(x for x in buf[:cut].splitlines() if x.strip())
            buf = buf[cut:]
            i = 0  # rescan the unfinished line next time: an object may start on it
        self.buf = buf
        self._pos = i
        return out

    def close(self) -> list[str]:
        """End of stream: whatever is left (a torn object, trailing text) becomes noise."""
        if self._start >= 0 and self.buf.strip():
            self.torn_tail = True
        if self.buf.strip():
            self.noise.extend(x for x in self.buf.splitlines() if x.strip())
        self.buf = ""
        return self.noise


def parse_stream(text: str) -> tuple[list[dict], list[str]]:
    """All JSON objects in `text` and the non-JSON lines around them."""
    s = JsonStream()
    objs = s.feed(text)
    return objs, s.close()


def reports(objs: Iterable[dict]) -> list[dict]:
    """The fio reports among parsed objects (status objects and the final one)."""
    return [o for o in objs if isinstance(o.get("jobs"), list)]


def final_report(text: str) -> dict:
    objs, noise = parse_stream(text)
    reps = reports(objs)
    if not reps:
        hint = f": {noise[-1]}" if noise else ""
        raise FioOutputError(f"fio printed no JSON report{hint}")
    return reps[-1]


# --------------------------------------------------------------------------- reports
# fio's reports are read defensively: a field of the wrong type (an odd fio version, a
# wrapper script, a torn write) makes that figure unknown (NaN) with a warning instead of
# failing the phase; the run then stores what is known.
class FioOutputWarning(UserWarning):
    pass


def _warn(msg: str) -> None:
    import warnings

    warnings.warn(f"fio report: {msg}; that figure is unknown", FioOutputWarning, stacklevel=3)


def _num(x: Any, where: str, default: float = 0.0) -> float:
    """A JSON number as float; missing (None from .get) is `default`, anything else NaN."""
    if x is None:
        return default
    if isinstance(x, (int, float)) and not isinstance(x, bool):
        return float(x)
    _warn(f"{where} = {str(x)[:40]!r} is not a number")
    return math.nan


def _obj(x: Any) -> dict:
    return x if isinstance(x, dict) else {}


def _jobs(report: dict) -> list[dict]:
    jobs = report.get("jobs") if isinstance(report, dict) else None
    if not isinstance(jobs, list):
        return []
    good = [j for j in jobs if isinstance(j, dict)]
    if len(good) < len(jobs):
        _warn("a job entry is not an object")
    return good


def _sum_dir(report: dict, d: str, key: str) -> float:
    return float(sum(_num(_obj(j.get(d)).get(key), f"{d}.{key}") for j in _jobs(report)))


def report_bytes(report: dict) -> dict[str, float]:
    return {d: _sum_dir(report, d, "io_bytes") for d in DDIRS}


def report_ios(report: dict) -> dict[str, float]:
    return {d: _sum_dir(report, d, "total_ios") for d in DDIRS}


def report_errors(report: dict) -> list[str]:
    errs = []
    for j in _jobs(report):
        e = j.get("error", 0)
        if e:
            errs.append(f"job {j.get('jobname', '?')}: error {e}")
    return errs


def report_runtime_s(report: dict) -> float:
    """Wall time of the run: the longest direction runtime of any job (ms -> s)."""
    rt = 0.0
    for j in _jobs(report):
        for d in DDIRS:
            rt = max(rt, _num(_obj(j.get(d)).get("runtime"), f"{d}.runtime"))
    return rt / 1000.0


def _lat_block(jd: dict) -> dict:
    # total latency when lat_percentiles=1 gives bins, else completion latency
    lat = _obj(jd.get("lat_ns"))
    if lat.get("bins") or lat.get("percentile"):
        return lat
    return _obj(jd.get("clat_ns")) or lat


def merged_bins(report: dict) -> dict[int, int]:
    """The latency histogram of all directions and jobs (json+ `bins`: value_ns -> count);
    empty (unknown) when any bin is malformed."""
    bins: dict[int, int] = {}
    for j in _jobs(report):
        for d in DDIRS:
            jd = _obj(j.get(d))
            if not jd.get("total_ios"):
                continue
            raw = _lat_block(jd).get("bins") or {}
            if not isinstance(raw, dict):
                _warn(f"{d} latency bins are not an object")
                return {}
            for k, v in raw.items():
                try:
                    kk, vv = int(k), v
                except ValueError:
                    kk, vv = -1, None
                if kk < 0 or not isinstance(vv, int) or isinstance(vv, bool) or vv < 0:
                    _warn(f"{d} latency bin {str(k)[:20]!r}: {str(v)[:20]!r}")
                    return {}
                bins[kk] = bins.get(kk, 0) + vv
    return bins


def percentile_from_bins(bins: dict[int, int], pct: float) -> float:
    if not bins:
        return math.nan
    keys = sorted(bins)
    total = sum(bins.values())
    need = total * pct / 100.0
    acc = 0
    for k in keys:
        acc += bins[k]
        if acc >= need:
            return float(k)
    return float(keys[-1])


def latency_from_report(report: dict) -> dict[str, Any]:
    """Percentiles, mean, min, max (µs) and the histogram over all directions."""
    n = 0.0
    s = 0.0
    lo = math.inf
    hi = 0.0
    pcts_single: Any = None
    dirs_used = 0
    for j in _jobs(report):
        for d in DDIRS:
            jd = _obj(j.get(d))
            cnt = _num(jd.get("total_ios"), f"{d}.total_ios")
            if not cnt or math.isnan(cnt):
                continue
            lat = _obj(jd.get("lat_ns"))
            if lat.get("N"):
                cnt = _num(lat["N"], f"{d}.lat_ns.N")
            n += cnt
            s += _num(lat.get("mean"), f"{d}.lat_ns.mean") * cnt
            if lat.get("min") is not None and cnt:
                lo = min(lo, _num(lat["min"], f"{d}.lat_ns.min"))
            hi = max(hi, _num(lat.get("max"), f"{d}.lat_ns.max"))
            dirs_used += 1
            pcts_single = _lat_block(jd).get("percentile")
    bins = merged_bins(report)
    out: dict[str, Any] = {
        "min_us": lo / 1000.0 if n and lo < math.inf else math.nan,
        "mean_us": s / n / 1000.0 if n else math.nan,
        "max_us": hi / 1000.0 if n else math.nan,
    }
    for name, p in PERCENTILES:
        v = math.nan
        if bins:
            v = percentile_from_bins(bins, p) / 1000.0
        elif dirs_used == 1 and isinstance(pcts_single, dict):
            for k, val in pcts_single.items():
                try:
                    hit = abs(float(k) - p) < 1e-6
                except ValueError:
                    hit = False
                if hit:
                    v = _num(val, f"percentile {k}", math.nan) / 1000.0
        out[name] = v
    keys = sorted(bins)
    out["edges_us"] = np.array([k / 1000.0 for k in keys], dtype=np.float64)
    out["counts"] = np.array([bins[k] for k in keys], dtype=np.float64)
    return out


def totals_from_report(report: dict, runtime_s: float | None = None) -> dict[str, float]:
    b = report_bytes(report)
    ios = report_ios(report)
    dur = runtime_s if runtime_s else report_runtime_s(report)
    total_ios = ios["read"] + ios["write"] + ios["trim"]
    moved = b["read"] + b["write"] + b["trim"]
    return {
        "duration_s": dur,
        "ios": total_ios,
        "read_ios": ios["read"],
        "write_ios": ios["write"],
        "read_bytes": b["read"],
        "write_bytes": b["write"],
        "host_write_bytes": b["write"],
        "iops": total_ios / dur if dur else 0.0,
        "mbps": moved / dur / 1e6 if dur else 0.0,
        "read_mbps": b["read"] / dur / 1e6 if dur else 0.0,
        "write_mbps": b["write"] / dur / 1e6 if dur else 0.0,
    }


class StatusTracker:
    """Turns the cumulative status reports into per-interval samples for live progress."""

    def __init__(self, t0_ms: float):
        self.t0_ms = t0_ms
        self.prev_ms = t0_ms
        self.prev_bytes = {d: 0.0 for d in DDIRS}
        self.prev_ios = 0.0
        self.prev_lat_sum = 0.0
        self.rows: list[dict[str, float]] = []

    def update(self, report: dict) -> dict[str, float] | None:
        """The sample since the previous status; None for a status that is not newer or
        whose counters are unreadable (skipped: the next good one covers its interval)."""
        ts = _num(report.get("timestamp_ms"), "timestamp_ms")
        if not ts > self.prev_ms:
            return None
        b = report_bytes(report)
        ios = sum(report_ios(report).values())
        lat_sum = 0.0
        lat_max = 0.0
        for j in _jobs(report):
            for d in DDIRS:
                lat = _obj(_obj(j.get(d)).get("lat_ns"))
                lat_sum += _num(lat.get("mean"), f"{d}.lat_ns.mean") * _num(lat.get("N"), f"{d}.lat_ns.N")
                lat_max = max(lat_max, _num(lat.get("max"), f"{d}.lat_ns.max"))
        if math.isnan(ios) or any(math.isnan(x) for x in b.values()):
            return None
        lat_sum = lat_sum if math.isfinite(lat_sum) else self.prev_lat_sum
        dt = (ts - self.prev_ms) / 1000.0
        dios = ios - self.prev_ios
        row = {
            "t_s": (ts - self.t0_ms) / 1000.0,
            "iops": dios / dt,
            "read_mbps": (b["read"] - self.prev_bytes["read"]) / dt / 1e6,
            "write_mbps": (b["write"] - self.prev_bytes["write"]) / dt / 1e6,
            "lat_mean_us": (lat_sum - self.prev_lat_sum) / dios / 1000.0 if dios > 0 else math.nan,
            "lat_max_us": lat_max / 1000.0,  # running maximum (the status stream has no per-interval max)
            "read_bytes": b["read"] - self.prev_bytes["read"],
            "host_write_bytes": b["write"] - self.prev_bytes["write"],
            "done_bytes": b["read"] + b["write"] + b["trim"],
        }
        row["mbps"] = row["read_mbps"] + row["write_mbps"] + (b["trim"] - self.prev_bytes["trim"]) / dt / 1e6
        self.prev_ms = ts
        self.prev_bytes = b
        self.prev_ios = ios
        self.prev_lat_sum = lat_sum
        self.rows.append(row)
        return row

    def series(self) -> dict[str, np.ndarray]:
        return {k: np.array([r[k] for r in self.rows], dtype=np.float64) for k in SERIES_KEYS}


def shortfall(spec: dict, totals: dict) -> str:
    """Why a phase fio reported as done did not do what it was asked ("" when it did): a
    report from before the end (fio printed its final one torn or not at all) must not be
    stored as a complete phase."""
    stop_b, stop_s = spec.get("stop_bytes"), spec.get("stop_seconds")
    moved = float(totals.get("read_bytes") or 0) + float(totals.get("write_bytes") or 0)
    dur = float(totals.get("duration_s") or 0)
    if stop_b and not stop_s and moved < int(stop_b):
        return f"moved {moved:.0f} of its {int(stop_b)} bytes"
    if stop_s and not stop_b and dur < 0.9 * float(stop_s) - 0.5:
        return f"ran {dur:.1f} of its {float(stop_s):g} s"
    return ""


# --------------------------------------------------------------------------- logs
def read_log(path: str | Path) -> np.ndarray:
    """A fio iops/bw/lat log as an (n, 4) float array: time_ms, value, ddir, bs.
    Missing or empty files give an empty array; malformed lines (a torn last line) are
    skipped."""
    rows = []
    try:
        text = Path(path).read_text(errors="replace")
    except FileNotFoundError:
        return np.zeros((0, 4))
    for line in text.splitlines():
        parts = line.split(",")
        if len(parts) < 3:
            continue
        try:
            t = float(parts[0])
            v = float(parts[1])
            d = float(parts[2])
            bs = float(parts[3]) if len(parts) > 3 and parts[3].strip() else 0.0
        except ValueError:
            continue
        rows.append((t, v, d, bs))
    return np.array(rows, dtype=np.float64).reshape(-1, 4)


def job_logs(prefix: str | Path, kind: str) -> list[Path]:
    """The per-job log files `<prefix>_<kind>.<n>.log` (also a plain `<prefix>_<kind>.log`)."""
    p = Path(prefix)
    files = sorted(p.parent.glob(f"{p.name}_{kind}.*.log"),
                   key=lambda x: int(x.name.rsplit(".", 2)[-2]) if x.name.rsplit(".", 2)[-2].isdigit() else 0)
    plain = p.parent / f"{p.name}_{kind}.log"
    if plain.exists():
        files.append(plain)
    return [f for f in files if f.name.rsplit(".", 2)[-2].isdigit() or f == plain]


def _bucket(t_ms: np.ndarray, interval_ms: float) -> np.ndarray:
    # an entry at 1000 ms closes interval 1; 1001..2000 close interval 2; a few ms of jitter
    # at the boundary belong to the interval just closed.
    return np.maximum(1, np.ceil((t_ms - 0.02 * interval_ms) / interval_ms)).astype(np.int64)


def _per_bucket(logs: list[np.ndarray], interval_ms: float):
    """{(job, ddir, bucket): (t_ms, value)} keeping the first (longest-window) entry."""
    out: dict[tuple[int, int, int], tuple[float, float]] = {}
    for job, arr in enumerate(logs):
        if not len(arr):
            continue
        bk = _bucket(arr[:, 0], interval_ms)
        for (t, v, d, _bs), b in zip(arr, bk):
            key = (job, int(d), int(b))
            if key not in out:
                out[key] = (float(t), float(v))
    return out


def series_from_logs(prefix: str | Path, interval_ms: float = 1000.0,
                     totals: dict | None = None) -> dict[str, np.ndarray]:
    """The per-interval series from fio's averaged iops, bw (KiB/s) and lat (ns) logs, and
    the per-interval maximum latency from the histogram log when present.

    fio does not write the last, partial averaging window of its iops/bw logs (and with
    several jobs sometimes misses a job's last full one). Given the final report's
    `totals` (duration_s, ios, read_bytes, write_bytes), the I/O the logs miss is put into
    that incomplete last interval, so the series adds up to the report."""
    iops = _per_bucket([read_log(f) for f in job_logs(prefix, "iops")], interval_ms)
    bw = _per_bucket([read_log(f) for f in job_logs(prefix, "bw")], interval_ms)
    lat = _per_bucket([read_log(f) for f in job_logs(prefix, "lat")], interval_ms)
    buckets = sorted({k[2] for k in iops} | {k[2] for k in bw} | {k[2] for k in lat})
    dur_ms = float(totals["duration_s"]) * 1000.0 if totals and totals.get("duration_s") else None
    if dur_ms is not None:
        end_b = int(_bucket(np.array([dur_ms]), interval_ms)[0])
        buckets = [b for b in buckets if b <= end_b]
        if not buckets or buckets[-1] < end_b:
            buckets.append(end_b)
    if not buckets:
        return {k: np.zeros(0) for k in SERIES_KEYS}
    idx = {b: i for i, b in enumerate(buckets)}
    n = len(buckets)
    t = np.array([b * interval_ms for b in buckets], dtype=np.float64)
    tmax = np.zeros(n)
    io = np.zeros(n)
    rd = np.zeros(n)
    wr = np.zeros(n)
    other = np.zeros(n)
    lat_w = np.zeros(n)
    lat_n = np.zeros(n)
    cnt = np.zeros(n)
    for (job, d, b), (tm, v) in iops.items():
        if b not in idx:
            continue
        io[idx[b]] += v
        cnt[idx[b]] += 1
        tmax[idx[b]] = max(tmax[idx[b]], tm)
    for (job, d, b), (tm, v) in bw.items():
        if b not in idx:
            continue
        mb = v * 1024.0 / 1e6
        (rd if d == 0 else wr if d == 1 else other)[idx[b]] += mb
        tmax[idx[b]] = max(tmax[idx[b]], tm)
    for (job, d, b), (tm, v) in lat.items():
        if b not in idx:
            continue
        w = iops.get((job, d, b), (0.0, 1.0))[1] or 0.0
        lat_w[idx[b]] += v * w
        lat_n[idx[b]] += w
        tmax[idx[b]] = max(tmax[idx[b]], tm)
    # the last interval may be partial: its time is when it really ended
    last = np.minimum(t, np.maximum(tmax, t - interval_ms + 1))
    if dur_ms is not None:
        last[-1] = min(t[-1], max(dur_ms, t[-1] - interval_ms + 1))
    if totals and dur_ms and n and cnt[-1] < cnt.max(initial=0) or (totals and dur_ms and cnt[-1] == 0):
        widths = np.diff(np.concatenate([[0.0], last])) / 1000.0
        w_last = widths[-1] if widths[-1] > 0 else interval_ms / 1000.0
        for arr, total, scale in ((io, totals.get("ios"), 1.0),
                                  (rd, totals.get("read_bytes"), 1e6),
                                  (wr, totals.get("write_bytes"), 1e6)):
            if total is None:
                continue
            rem = float(total) / scale - float(np.sum(arr * widths))
            if rem > 0:
                arr[-1] += rem / w_last
    with np.errstate(invalid="ignore", divide="ignore"):
        lat_mean = np.where(lat_n > 0, lat_w / np.where(lat_n > 0, lat_n, 1) / 1000.0, np.nan)
    out = {
        "t_s": last / 1000.0,
        "iops": io,
        "mbps": rd + wr + other,
        "read_mbps": rd,
        "write_mbps": wr,
        "lat_mean_us": lat_mean,
        "lat_max_us": np.full(n, np.nan),
    }
    hist = read_hist_logs(prefix)
    if hist:
        mx = np.full(n, np.nan)
        for arr_t, _d, _bs, _counts, maxv in hist:
            hb = np.minimum(_bucket(arr_t, interval_ms), buckets[-1])
            for b, m in zip(hb, maxv):
                if int(b) in idx and m > 0:
                    i = idx[int(b)]
                    mx[i] = m / 1000.0 if math.isnan(mx[i]) else max(mx[i], m / 1000.0)
        out["lat_max_us"] = mx
    return out


def plat_idx_to_val(idx: int) -> float:
    """fio's bucket index -> representative latency (ns), as in fio's stat.c."""
    if idx < (PLAT_VAL << 1):
        return float(idx)
    error_bits = (idx >> PLAT_BITS) - 1
    base = 1 << (error_bits + PLAT_BITS)
    k = idx % PLAT_VAL
    return base + (k + 0.5) * (1 << error_bits)


def read_hist_logs(prefix: str | Path):
    """Each job's latency histogram log (`log_hist_msec`) as (t_ms, ddir, bs, counts per
    window, max latency ns per window). Bins are merged by `log_hist_coarseness`; the
    stride is inferred from the column count."""
    out = []
    for f in job_logs(prefix, "clat_hist"):
        fast = _read_hist_fast(f)
        if fast is not None:
            if len(fast[0]):
                out.append(fast)
            continue
        ts, ds, bss, cnts, mx = [], [], [], [], []
        try:
            text = f.read_text(errors="replace")
        except FileNotFoundError:
            continue
        for line in text.splitlines():
            parts = line.split(",")
            if len(parts) < 4:
                continue
            try:
                vals = [int(x) for x in parts]
            except ValueError:
                continue
            nb = _hist_bins(len(vals))
            if not nb:
                continue
            stride = PLAT_NR // nb
            counts = vals[len(vals) - nb:]
            top = 0.0
            for i in range(nb - 1, -1, -1):
                if counts[i]:
                    top = plat_idx_to_val(min(PLAT_NR - 1, (i + 1) * stride - 1))
                    break
            ts.append(vals[0])
            ds.append(vals[1])
            bss.append(vals[2])
            cnts.append(sum(counts))
            mx.append(top)
        if ts:
            out.append((np.array(ts, dtype=np.float64), np.array(ds), np.array(bss, dtype=np.float64),
                        np.array(cnts, dtype=np.float64), np.array(mx, dtype=np.float64)))
    return out


HIST_BINS = tuple(PLAT_NR >> c for c in range(7))  # by log_hist_coarseness 0..6


def _hist_bins(ncols: int) -> int:
    """Bins in a histogram-log line of `ncols` columns: time, ddir, bs (and, in newer fio
    with log_prio, a priority) come first, the bins last. 0 when it does not fit."""
    for nb in HIST_BINS:
        if ncols - nb in (3, 4):
            return nb
    return 0


def _read_hist_fast(f: Path):
    """Vectorised read of a well-formed histogram log; None when it is not (torn line,
    odd width) so the line-by-line reader takes over."""
    import warnings

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            a = np.loadtxt(f, delimiter=",", dtype=np.int64, ndmin=2)
    except (ValueError, OSError):
        return None
    if a.size == 0:
        return (np.zeros(0), np.zeros(0), np.zeros(0), np.zeros(0), np.zeros(0))
    nb = _hist_bins(a.shape[1])
    if not nb:
        return None
    stride = PLAT_NR // nb
    counts = a[:, a.shape[1] - nb:]
    nz = counts > 0
    has = nz.any(axis=1)
    top_idx = nb - 1 - np.argmax(nz[:, ::-1], axis=1)
    tops = np.array([plat_idx_to_val(min(PLAT_NR - 1, (i + 1) * stride - 1)) for i in range(nb)])
    mx = np.where(has, tops[top_idx], 0.0)
    return (a[:, 0].astype(np.float64), a[:, 1], a[:, 2].astype(np.float64),
            counts.sum(axis=1).astype(np.float64), mx.astype(np.float64))


def segments_from_hist(prefix: str | Path, segment_bytes: int, total_bytes: float | None = None,
                       runtime_s: float | None = None, block_size: int | None = None,
                       directions: tuple[int, ...] = (0, 1)) -> dict[str, np.ndarray]:
    """Per-`segment_bytes` series (gb at segment end, mbps, t_s) from the fine histogram
    log: each window's completions x block size are the bytes moved in it. The final
    report's byte total and runtime, when given, close the curve (the log can miss the
    last window of a job). A final partial segment is kept (its gb is where it ended)."""
    hist = read_hist_logs(prefix)
    ts_list, b_list = [], []
    for t, d, bs, cnt, _mx in hist:
        m = np.isin(d, directions)
        size = bs if block_size is None else np.full_like(bs, float(block_size))
        ts_list.append(t[m])
        b_list.append(cnt[m] * size[m])
    if ts_list and sum(len(x) for x in ts_list):
        t = np.concatenate(ts_list) / 1000.0
        b = np.concatenate(b_list)
        order = np.argsort(t, kind="stable")
        t = t[order]
        cum = np.cumsum(b[order])
    else:
        t = np.zeros(0)
        cum = np.zeros(0)
    if total_bytes is not None and runtime_s:
        if not len(cum) or total_bytes > cum[-1] or runtime_s > t[-1]:
            t = np.append(t, max(runtime_s, t[-1] if len(t) else 0.0))
            cum = np.append(cum, max(total_bytes, cum[-1] if len(cum) else 0.0))
    if not len(cum) or cum[-1] <= 0:
        return {"gb": np.zeros(0), "mbps": np.zeros(0), "t_s": np.zeros(0)}
    t = np.concatenate([[0.0], t])
    cum = np.concatenate([[0.0], cum])
    nseg = int(cum[-1] // segment_bytes)
    marks = [segment_bytes * (k + 1) for k in range(nseg)]
    if cum[-1] - nseg * segment_bytes > 0:
        marks.append(float(cum[-1]))
    # time at which the cumulative bytes reach each mark (linear within a window)
    cross_t = np.interp(marks, cum, t)
    gb, mbps, ts = [], [], []
    prev_b, prev_t = 0.0, 0.0
    for mk, ct in zip(marks, cross_t):
        dt = ct - prev_t
        if dt <= 0:
            continue
        gb.append(mk / 1e9)
        mbps.append((mk - prev_b) / dt / 1e6 if dt > 0 else math.nan)
        ts.append(ct)
        prev_b, prev_t = mk, ct
    return {"gb": np.array(gb), "mbps": np.array(mbps), "t_s": np.array(ts)}
