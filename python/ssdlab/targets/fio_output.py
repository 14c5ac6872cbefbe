"""Parsing what fio logs, robustly; its printed JSON reports are read by fio_report.py
(re-exported here).

fio's logs are CSV lines `time_ms, value, ddir, bs, offset[, prio]`, one file per job,
possibly empty or with a torn last line when fio was killed.

Everything here is a pure function of text or files, so it is tested against recorded
outputs (tests/data/fio/).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from .fio_report import (DDIRS, PERCENTILES, SERIES_KEYS, FioOutputError,  # noqa: F401 (re-exported)
                         FioOutputWarning, JsonStream, StatusTracker, final_report,
                         latency_from_report, merged_bins, parse_stream, percentile_from_bins,
                         report_bytes, report_errors, report_ios, report_runtime_s, reports,
                         shortfall, totals_from_report)

# fio's latency histogram layout (stat.h): 29 groups of 64 buckets, values in ns.
PLAT_BITS = 6
PLAT_VAL = 1 << PLAT_BITS
PLAT_NR = 29 * PLAT_VAL


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
