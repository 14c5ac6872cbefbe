"""fio's log files, read and written. fio names them PREFIX_KIND.N.log (N: the job, from
1; `log_name`): bw, iops, lat, clat, slat are CSV lines `time_ms, value, ddir, bs,
[offset, ]prio` (the offset with log_offset; the priority in hex with log_prio); clat_hist (write_hist_log) lines are `time_ms, ddir, bs, bins...`, each the
window's counts in fio's 1856 latency bins (plat.py), 2^log_hist_coarseness bins summed
per column.

Read robustly (a real run's logs, possibly empty or with a torn last line when fio was
killed): the per-interval series from the averaged iops, bw and lat logs, the per-interval
maximum latency and the per-segment (per GB written) series from the histogram log; pure
functions of files, tested against recorded logs (tests/data/fio/) and made-up ones.
Written (`write_logs`) for a simulated run's jobs that ask for them, from the simulator's
log entries (crates/ssdsim/src/fiojob/logs.rs): an entry per direction per interval that
completed I/O; lat, clat and slat the latency window's mean, the last partial window
included; a log of an entry per I/O (log_avg_msec=0) is written by the simulator as the job
runs (crates/ssdsim/src/fiojob/unit_log.rs). Created new in the directory given (never over a file, never through a link:
safe_path)."""

from __future__ import annotations

import math
import os
from pathlib import Path

import numpy as np

from .. import safe_path
from .fields import DIRS, measures_slat
from .plat import PLAT_NR, plat_idx_to_val

MAX_COARSENESS = 6  # log_hist_coarseness: 2^0 to 2^6 bins summed per column
HIST_LEAD = 3  # a histogram log line's columns before the bins: time_ms, ddir, bs
SERIES_KEYS = ("t_s", "iops", "mbps", "read_mbps", "write_mbps", "lat_mean_us", "lat_max_us")


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


def log_name(prefix: str, kind: str, job: int | str) -> str:
    """fio's name of job `job`'s (from 1; "*" matches any) log of `kind` (bw, iops, lat,
    clat, slat, clat_hist)."""
    return f"{prefix}_{kind}.{job}.log"


def job_logs(prefix: str | Path, kind: str) -> list[Path]:
    """The per-job log files `<prefix>_<kind>.<n>.log` (also a plain `<prefix>_<kind>.log`)."""
    p = Path(prefix)
    files = sorted(p.parent.glob(log_name(p.name, kind, "*")),
                   key=lambda x: int(x.name.rsplit(".", 2)[-2]) if x.name.rsplit(".", 2)[-2].isdigit() else 0)
    plain = p.parent / f"{p.name}_{kind}.log"
    if plain.exists():
        files.append(plain)
    return [f for f in files if f.name.rsplit(".", 2)[-2].isdigit() or f == plain]


def _bucket(t_ms: np.ndarray, interval_ms: float) -> np.ndarray:
    # an entry at 1000 ms closes interval 1; 1001..2000 close interval 2; a few ms of jitter
    # at the boundary belong to the interval just closed.
    return np.maximum(1, np.ceil((t_ms - 0.02 * interval_ms) / interval_ms)).astype(np.int64)


def _windows(t_ms: np.ndarray, interval_ms: float) -> np.ndarray:
    """Window numbers (1 = the first interval) of one job's entries in one direction.

    fio takes a sample when at least one interval has passed since the last one, so each
    entry lands a little late and the lateness adds up (a 60 s run's entries at 1000,
    2000, 3002 ... 17031 ... 59058 ms): no fixed tolerance around absolute boundaries
    holds. Counting from the previous entry does: the next window, or more when whole
    intervals passed without an entry (fio writes none for an interval in which no I/O
    completed, and a late log timer can cover more than one)."""
    out = np.empty(len(t_ms), dtype=np.int64)
    prev_t, prev_b = 0.0, 0
    for i, t in enumerate(t_ms):
        prev_b += max(1, int(round((float(t) - prev_t) / interval_ms)))
        out[i] = prev_b
        prev_t = float(t)
    return out


def _per_bucket(logs: list[np.ndarray], interval_ms: float):
    """{(job, ddir, bucket): (t_ms, value)}, windows numbered per job and direction."""
    out: dict[tuple[int, int, int], tuple[float, float]] = {}
    for job, arr in enumerate(logs):
        if not len(arr):
            continue
        for d in np.unique(arr[:, 2]):
            rows = arr[arr[:, 2] == d]
            rows = rows[np.argsort(rows[:, 0], kind="stable")]
            for (t, v, _d, _bs), b in zip(rows, _windows(rows[:, 0], interval_ms)):
                key = (job, int(d), int(b))
                if key not in out:
                    out[key] = (float(t), float(v))
    return out


def _completions(hist, t0_ms: float, t1_ms: float) -> float | None:
    """I/Os completed in (t0, t1] by the histogram logs (None without them)."""
    if not hist:
        return None
    n = 0.0
    for arr_t, _d, _bs, counts, _mx in hist:
        n += float(counts[(arr_t > t0_ms) & (arr_t <= t1_ms)].sum())
    return n


def series_from_logs(prefix: str | Path, interval_ms: float = 1000.0,
                     totals: dict | None = None, block_size: int | None = None) -> dict[str, np.ndarray]:
    """The per-interval series from fio's averaged iops, bw (KiB/s) and lat (ns) logs, and
    the per-interval maximum latency from the histogram log when present.

    Intervals are numbered per log from entry to entry (`_windows`), so fio's drifting log
    timer neither skips nor doubles one. An interval no job logged is a stall (0) when the
    histogram log shows no completion in it, else a missing sample (NaN; `_gap_values`).
    fio does not write the last, partial averaging window of its iops/bw logs (and with
    several jobs sometimes misses a job's last full one). Given the final report's
    `totals` (duration_s, ios, read_bytes, write_bytes), the I/O the logs miss is put into
    that incomplete last interval, so the series adds up to the report (unless samples are
    missing earlier: the I/O then has no one place). Given `block_size`, the bandwidth is
    the IOPS log's times it: the job's bandwidth log is the finer one (`segments_from_bw`)."""
    iops = _per_bucket([read_log(f) for f in job_logs(prefix, "iops")], interval_ms)
    if block_size:  # KiB/s as the bandwidth log gives it
        bw = {k: (tm, v * block_size / 1024.0) for k, (tm, v) in iops.items()}
    else:
        bw = _per_bucket([read_log(f) for f in job_logs(prefix, "bw")], interval_ms)
    lat = _per_bucket([read_log(f) for f in job_logs(prefix, "lat")], interval_ms)
    seen = {k[2] for k in iops} | {k[2] for k in bw} | {k[2] for k in lat}
    dur_ms = float(totals["duration_s"]) * 1000.0 if totals and totals.get("duration_s") else None
    if dur_ms is not None:
        end_b = int(_bucket(np.array([dur_ms]), interval_ms)[0])
        seen = {b for b in seen if b <= end_b} | {end_b}
    if not seen:
        return {k: np.zeros(0) for k in SERIES_KEYS}
    n = max(seen)  # every interval of the run, also those no log has an entry for
    t = np.arange(1, n + 1, dtype=np.float64) * interval_ms
    tmax = np.zeros(n)
    tio = np.zeros(n)  # when the iops/bw entries of the interval were written
    io = np.zeros(n)
    rd = np.zeros(n)
    wr = np.zeros(n)
    other = np.zeros(n)
    lat_w = np.zeros(n)
    lat_n = np.zeros(n)
    cnt = np.zeros(n)
    for (job, d, b), (tm, v) in iops.items():
        if b > n:
            continue
        io[b - 1] += v
        cnt[b - 1] += 1
        tio[b - 1] = max(tio[b - 1], tm)
    for (job, d, b), (tm, v) in bw.items():
        if b > n:
            continue
        mb = v * 1024.0 / 1e6
        (rd if d == 0 else wr if d == 1 else other)[b - 1] += mb
        tio[b - 1] = max(tio[b - 1], tm)
    for (job, d, b), (tm, v) in lat.items():
        if b > n:
            continue
        w = iops.get((job, d, b), (0.0, 1.0))[1] or 0.0
        lat_w[b - 1] += v * w
        lat_n[b - 1] += w
        tmax[b - 1] = max(tmax[b - 1], tm)
    tmax = np.maximum(tmax, tio)
    # when each interval really ended (the log timer's time; one interval on where none)
    ends = np.empty(n)
    for i in range(n):
        ends[i] = tio[i] if tio[i] > 0 else (ends[i - 1] if i else 0.0) + interval_ms
    hist = read_hist_logs(prefix)
    gaps = _gap_values(cnt, ends, interval_ms, hist)
    # the last interval may be partial: its time is when it really ended
    last = np.where(tmax > 0, np.minimum(t, np.maximum(tmax, t - interval_ms + 1)), t)
    if dur_ms is not None:
        last[-1] = min(t[-1], max(dur_ms, t[-1] - interval_ms + 1))
    fill_last = bool(totals and dur_ms) and (cnt[-1] < cnt.max(initial=0) or cnt[-1] == 0)
    if fill_last and totals is not None and not np.isnan(gaps[:-1]).any():
        gaps[-1] = 0.0  # the report's totals supply it
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
    for arr in (io, rd, wr, other):
        arr += gaps  # NaN where a sample is missing, + 0 elsewhere
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
    if hist:
        mx = np.full(n, np.nan)
        for arr_t, _d, _bs, _counts, maxv in hist:
            # the interval whose span holds the histogram window's end
            hb = np.minimum(np.searchsorted(ends, arr_t, side="left"), n - 1)
            for i, m in zip(hb, maxv):
                if m > 0:
                    mx[i] = m / 1000.0 if math.isnan(mx[i]) else max(mx[i], m / 1000.0)
        out["lat_max_us"] = mx
    return out


def _gap_values(cnt: np.ndarray, ends: np.ndarray, interval_ms: float, hist) -> np.ndarray:
    """0 for every interval, NaN where its sample is missing. An interval without an iops
    entry from any job is either a stall (fio logs nothing for an interval in which no I/O
    completed: 0 IOPS, a real sample) or a log timer that ran late past it. The histogram
    log (completions every 100 ms) tells them apart; without it the sample is missing."""
    out = np.zeros(len(cnt))
    for i in np.nonzero(cnt == 0)[0]:
        t0 = ends[i - 1] if i else 0.0
        done = _completions(hist, t0, t0 + interval_ms)
        if done is None or done > 0:
            out[i] = np.nan
    return out


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


HIST_BINS = tuple(PLAT_NR >> c for c in range(MAX_COARSENESS + 1))  # by log_hist_coarseness


def _hist_bins(ncols: int) -> int:
    """Bins in a histogram-log line of `ncols` columns: time, ddir, bs (and, in newer fio
    with log_prio, a priority) come first, the bins last. 0 when it does not fit."""
    for nb in HIST_BINS:
        if ncols - nb in (HIST_LEAD, HIST_LEAD + 1):
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
    ts_list, b_list = [], []
    for t, d, bs, cnt, _mx in read_hist_logs(prefix):
        m = np.isin(d, directions)
        size = bs if block_size is None else np.full_like(bs, float(block_size))
        ts_list.append(t[m])
        b_list.append(cnt[m] * size[m])
    return _segments(ts_list, b_list, segment_bytes, total_bytes, runtime_s)


def segments_from_bw(prefix: str | Path, segment_bytes: int, window_ms: float, total_bytes: float | None = None,
                     runtime_s: float | None = None, directions: tuple[int, ...] = (0, 1)) -> dict[str, np.ndarray]:
    """`segments_from_hist` from a bandwidth log averaged over `window_ms` (bwavgtime): an
    entry's KiB/s times the time since the job's previous entry in its direction are the
    bytes moved. fio writes no entry for a window that moved nothing, so an entry counts
    at most 1.5 windows (its rate is its own window's: fio's log timer runs a little late,
    rarely more), and nothing moved in the gap before it."""
    ts_list, b_list = [], []
    for arr in (read_log(f) for f in job_logs(prefix, "bw")):
        for d in directions:
            rows = arr[arr[:, 2] == d]
            rows = rows[np.argsort(rows[:, 0], kind="stable")]
            t = rows[:, 0]
            spent = np.minimum(np.diff(np.concatenate([[0.0], t])), 1.5 * window_ms)
            # nothing moved until the entry's window began (after the entries: the stable
            # sort keeps a window's start after the previous window's end at the same ms)
            ts_list += [t, t - spent]
            b_list += [rows[:, 1] * 1024.0 * spent / 1000.0, np.zeros(len(t))]
    return _segments(ts_list, b_list, segment_bytes, total_bytes, runtime_s, stalls=True)


def _segments(ts_list: list[np.ndarray], b_list: list[np.ndarray], segment_bytes: int,
              total_bytes: float | None, runtime_s: float | None, stalls: bool = False) -> dict[str, np.ndarray]:
    """Per-segment series from the bytes `b_list` moved by the times `ts_list` (ms), per log.
    `stalls`: the bytes may stand still (a stretch no entry moved anything), and a mark
    is crossed when they first reach it."""
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
    marks: list[float] = [segment_bytes * (k + 1) for k in range(nseg)]
    if cum[-1] - nseg * segment_bytes > 0:
        marks.append(float(cum[-1]))
    # time at which the cumulative bytes reach each mark (linear within a window)
    cross_t = np.interp(marks, cum, t) if not stalls else _first_reach(np.array(marks), cum, t)
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


def _first_reach(marks: np.ndarray, cum: np.ndarray, t: np.ndarray) -> np.ndarray:
    """When nondecreasing `cum` (at times `t`) first reaches each mark, linear between
    points (np.interp takes the end of a level stretch that equals a mark)."""
    i = np.clip(np.searchsorted(cum, marks, side="left"), 1, len(cum) - 1)
    c0, c1 = cum[i - 1], cum[i]
    frac = np.where(c1 > c0, (marks - c0) / np.where(c1 > c0, c1 - c0, 1.0), 1.0)
    return t[i - 1] + np.clip(frac, 0.0, 1.0) * (t[i] - t[i - 1])


# ---- writing a simulated run's logs -------------------------------------------------------
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
                out += [(n, name, kind, log_name(prefix, name, n + 1)) for name, kind in names]
    return out


def check_log_dir(directory: Path, specs: list[dict]) -> str:
    """--log-dir can take the jobs' log files (checked before the run): a directory reached
    through no other user's link in which no one else may rename entries (safe_path.check_dirs),
    writable, none of the names there already, each name within the filesystem's limit. The
    directory, its links resolved."""
    from ..errors import UserError

    real = safe_path.real(directory, f"--log-dir {directory}")
    if not os.path.isdir(real):
        raise UserError(f"--log-dir {directory}: not a directory")
    # the simulator opens a per-I/O log again by name each time its buffer fills: in a
    # directory others may rename entries in, they could swap in a FIFO or another name of a
    # file of root's between two opens
    safe_path.check_dirs(os.path.join(real, "-"), f"--log-dir {directory}")
    why = safe_path.cannot_make_files(real)
    if why:
        raise UserError(f"--log-dir {directory}: no file can be made in {real} ({why}); give a directory "
                        "you can write")
    longest = os.pathconf(real, "PC_NAME_MAX")
    for _n, _name, _kind, name in log_files(specs):
        if len(name.encode()) > longest:
            raise UserError(f"--log-dir {directory}: the log file name {name[:40]}... is longer than the "
                            f"filesystem's {longest} bytes; give the job's log a shorter name")
        if os.path.lexists(os.path.join(real, name)):
            raise UserError(f"--log-dir {directory}: {name} exists (ssdlab writes new files only); "
                            "remove it or give another directory")
    return str(real)


def _coarseness(opts: dict) -> int:
    try:
        c = int(str(opts.get("log_hist_coarseness", "0")).strip() or 0)
    except ValueError:
        c = 0
    return min(max(c, 0), MAX_COARSENESS)


def _line(*columns: int) -> str:
    """One log line as fio writes it (and read_log, read_hist_logs read it)."""
    return ", ".join(map(str, columns)) + "\n"


def write_logs(specs: list[dict], raw_jobs: list[dict], logs: dict, log_ms: int, directory: Path) -> list[Path]:
    """The log files of every job that asks for them (`logs` and `log_ms`: the old
    whole-file settings, kept for callers; each job's own options rule)."""
    made = []
    for n, name, kind, file in log_files(specs):
        s, j = specs[n], raw_jobs[n]
        path = directory / file
        if any(u[1] == file for u in s.get("unit_logs") or ()):
            if os.path.isfile(path):  # an entry per I/O: written as the job ran
                made.append(path)
            continue
        with os.fdopen(safe_path.create(path, f"--log-dir {directory}", 0o644), "w") as f:
            if kind is None:
                stride = 1 << _coarseness(s.get("settings") or s.get("options", {}))
                for t, d, bs, idx, counts in j.get("hist_log") or []:
                    cols = [0] * (PLAT_NR // stride)
                    for i, c in zip(idx, counts):
                        cols[int(i) // stride] += int(c)
                    f.write(_line(int(t), int(d), int(bs), *cols))
            else:
                log = j.get("log") or {}
                opts = s.get("settings") or s.get("options", {})
                # fio logs no submission latency where its engine does not queue (a sync engine;
                # libaio's trims): none of those entries
                unqueued = {d for d, x in enumerate(DIRS) if not measures_slat(opts, x)}
                # fio's averaged entries: bs 0, offset 0 (log_offset), priority 0 (hex with log_prio)
                tail = ("0, " if s.get("log_offset") else "") + ("0x0000" if s.get("log_prio") else "0")
                for t, d, k, v in zip(*(log.get(c, []) for c in ("t_ms", "dir", "kind", "value"))):
                    if name == "slat" and int(d) in unqueued:
                        continue
                    if int(k) == kind:
                        v = 0 if name == "slat" and kind != KIND_BW else int(v)
                        f.write(f"{int(t)}, {v}, {int(d)}, 0, {tail}\n")
        made.append(path)
    return made
