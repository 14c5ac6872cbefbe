"""Reading what fio prints on a real run, robustly (its logs: logs.py; the JSON a
simulated run writes: json_write.py).

fio's stdout can hold warnings before the JSON, and with `--status-interval` several
complete JSON reports one after the other (each cumulative since the start; the last one
is the final report).

Everything here is a pure function of text, so it is tested against recorded outputs
(tests/data/fio/).
"""

from __future__ import annotations

import json
import math
import re
from typing import Any, Iterable

import numpy as np

from .fields import DIRS as DDIRS
from .logs import SERIES_KEYS

PERCENTILES = (("p50_us", 50.0), ("p90_us", 90.0), ("p99_us", 99.0), ("p99_9_us", 99.9),
               ("p99_99_us", 99.99))


class FioOutputError(RuntimeError):
    """fio's output holds no usable report."""


# --------------------------------------------------------------------------- JSON stream
# the scan jumps: over text and whole strings to the next bracket (a batch's status reports
# are megabytes), and over the rest of a string whose end came in a later piece of text
_SKIP = re.compile(r'(?:[^"{}\[\]]+|"[^"\\]*(?:\\.[^"\\]*)*")*', re.S)
_STRING_REST = re.compile(r'[^"\\]*(?:\\.[^"\\]*)*"', re.S)


class JsonStream:
    """Incremental splitter: feed text as it arrives, get back each complete top-level JSON
    object. Text outside objects (fio warnings, notes) is kept in `noise`. An object starts
    only at a '{' that opens a line, so braces inside warning text do not confuse it."""

    def __init__(self) -> None:
        self.buf = ""
        self.noise: list[str] = []
        self._depth = 0
        self._in_str = False  # inside a string: `_pos` is just after its opening quote
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
            if self._in_str:
                m = _STRING_REST.match(buf, i)
                if m is None:
                    break  # the string goes on in text not fed yet: rescan it from here
                self._in_str = False
                i = m.end()
                continue
            i = _SKIP.match(buf, i).end()  # type: ignore[union-attr]  # (it matches "" at least)
            if i >= n:
                break
            c = buf[i]
            if c == '"':  # a string the text fed so far does not close
                self._in_str = True
                i += 1
                continue
            if c == "{" and self._depth > 0 and i > self._start and buf[i - 1] == "\n":
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
        # a bucket's value can lie past the slowest (or below the fastest) I/O in it
        out[name] = min(max(v, out["min_us"]), out["max_us"]) if n and math.isfinite(v) else v
    keys = sorted(bins)
    out["hist_edges"] = "fio"  # each edge is fio's value of its bucket (analysis/latency_hist.py)
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
