"""Parsing what fio prints, robustly (its logs: fio_logs.py).

fio's stdout can hold warnings before the JSON, and with `--status-interval` several
complete JSON reports one after the other (each cumulative since the start; the last one
is the final report).

Everything here is a pure function of text, so it is tested against recorded outputs
(tests/data/fio/).
"""

from __future__ import annotations

import json
import math
from typing import Any, Iterable

import numpy as np

# the logs half (per-interval series, histogram logs, per-GB segments) is fio_logs.py;
# its names stay importable from here
from .fio_logs import (PLAT_BITS, PLAT_NR, PLAT_VAL, SERIES_KEYS, _hist_bins,  # noqa: F401
                       job_logs, plat_idx_to_val, read_hist_logs, read_log, segments_from_hist,
                       series_from_logs)

DDIRS = ("read", "write", "trim")
PERCENTILES = (("p50_us", 50.0), ("p90_us", 90.0), ("p99_us", 99.0), ("p99_9_us", 99.9),
               ("p99_99_us", 99.99))


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
                        else:
                            self.noise.append(chunk)
                    except json.JSONDecodeError:
                        self.noise.extend(chunk.splitlines())
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
def _sum_dir(report: dict, d: str, key: str) -> float:
    return float(sum(j.get(d, {}).get(key, 0) or 0 for j in report.get("jobs", [])))


def report_bytes(report: dict) -> dict[str, float]:
    return {d: _sum_dir(report, d, "io_bytes") for d in DDIRS}


def report_ios(report: dict) -> dict[str, float]:
    return {d: _sum_dir(report, d, "total_ios") for d in DDIRS}


def report_errors(report: dict) -> list[str]:
    errs = []
    for j in report.get("jobs", []):
        e = j.get("error", 0)
        if e:
            errs.append(f"job {j.get('jobname', '?')}: error {e}")
    return errs


def report_runtime_s(report: dict) -> float:
    """Wall time of the run: the longest direction runtime of any job (ms -> s)."""
    rt = 0.0
    for j in report.get("jobs", []):
        for d in DDIRS:
            rt = max(rt, float(j.get(d, {}).get("runtime", 0) or 0))
    return rt / 1000.0


def _lat_block(jd: dict) -> dict:
    # total latency when lat_percentiles=1 gives bins, else completion latency
    lat = jd.get("lat_ns") or {}
    if lat.get("bins") or lat.get("percentile"):
        return lat
    return jd.get("clat_ns") or lat


def merged_bins(report: dict) -> dict[int, int]:
    """The latency histogram of all directions and jobs (json+ `bins`: value_ns -> count)."""
    bins: dict[int, int] = {}
    for j in report.get("jobs", []):
        for d in DDIRS:
            jd = j.get(d) or {}
            if not jd.get("total_ios"):
                continue
            for k, v in (_lat_block(jd).get("bins") or {}).items():
                bins[int(k)] = bins.get(int(k), 0) + int(v)
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
    pcts_single: dict | None = None
    dirs_used = 0
    for j in report.get("jobs", []):
        for d in DDIRS:
            jd = j.get(d) or {}
            cnt = float(jd.get("total_ios") or 0)
            if not cnt:
                continue
            lat = jd.get("lat_ns") or {}
            if lat.get("N"):
                cnt = float(lat["N"])
            n += cnt
            s += float(lat.get("mean", 0.0)) * cnt
            if lat.get("min") is not None and cnt:
                lo = min(lo, float(lat["min"]))
            hi = max(hi, float(lat.get("max", 0.0)))
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
        elif dirs_used == 1 and pcts_single:
            for k, val in pcts_single.items():
                if abs(float(k) - p) < 1e-6:
                    v = float(val) / 1000.0
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
        ts = float(report.get("timestamp_ms") or 0.0)
        if ts <= self.prev_ms:
            return None
        b = report_bytes(report)
        ios = sum(report_ios(report).values())
        lat_sum = 0.0
        lat_max = 0.0
        for j in report.get("jobs", []):
            for d in DDIRS:
                lat = (j.get(d) or {}).get("lat_ns") or {}
                lat_sum += float(lat.get("mean", 0.0)) * float(lat.get("N", 0) or 0)
                lat_max = max(lat_max, float(lat.get("max", 0.0)))
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
