"""The plugin's stats file (one JSON object per interval, a final one at exit) as what
the store keeps: a time series of the drive's counters and the lag, and totals.

Counters in the file are cumulative since serving began (levels for free blocks, SLC
occupancy and mapped data); the series holds per-interval amounts under the simulator's
names (docs/sim-api.md: host_write_bytes, nand_write_bytes, waf, erases, gc_moves per
interval; free_blocks, slc_used_bytes, slc_capacity_bytes at the interval's end), plus
the served requests and their lag (docs/serve.md)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np

# cumulative counters whose per-interval differences the series holds
DELTAS = ("reads", "writes", "trims", "flushes", "read_bytes", "write_bytes", "trim_bytes",
          "host_write_bytes", "nand_write_bytes", "nand_slc_write_bytes",
          "nand_native_write_bytes", "erases", "gc_moves", "gc_stalls", "slc_fold_bytes")
LEVELS = ("free_blocks", "slc_used_bytes", "slc_capacity_bytes", "mapped_bytes")
LAG = ("requests", "late", "lag_mean_us", "lag_p99_us", "lag_max_us", "late_lag_mean_us",
       "late_lag_max_us")


def read_lines(path: Path) -> list[dict]:
    """Every complete line (a line cut short by a kill is left out)."""
    return StatsTail(path).all_rows()


class StatsTail:
    """The stats file read as it grows: each call reads only the bytes added since the last
    (the plugin appends a line per interval, so rereading the whole file every poll would
    cost time that grows with the session). A line still being written waits for its end."""

    def __init__(self, path: Path):
        self.path = path
        self.offset = 0  # bytes consumed
        self.rows: list[dict] = []  # every complete row so far
        self._part = b""

    def new_rows(self) -> list[dict]:
        try:
            with open(self.path, "rb") as f:
                f.seek(self.offset)
                data = f.read()
        except FileNotFoundError:
            return []
        self.offset += len(data)
        *lines, self._part = (self._part + data).split(b"\n")
        new = []
        for line in lines:
            try:
                new.append(json.loads(line))
            except (json.JSONDecodeError, UnicodeDecodeError):
                continue
        self.rows += new
        return new

    def all_rows(self) -> list[dict]:
        """Every complete row, the last one included once the file is complete."""
        self.new_rows()
        if self._part.strip():  # the final line, without its newline
            try:
                self.rows.append(json.loads(self._part))
                self._part = b""
            except (json.JSONDecodeError, UnicodeDecodeError):
                pass
        return self.rows


def _lag_name(k: str) -> str:
    return "lag_requests" if k == "requests" else k


def _f(x) -> float:
    return math.nan if x is None else float(x)


def series(rows: list[dict]) -> dict[str, np.ndarray]:
    """Per-interval series (t_s = wall seconds since serving began at the interval end)."""
    out: dict[str, list[float]] = {k: [] for k in ("t_s", "iops", "mbps", "read_mbps",
                                                   "write_mbps", *DELTAS, "waf", *LEVELS,
                                                   *map(_lag_name, LAG))}
    prev: dict = {}
    t_prev = 0.0
    for r in rows:
        t = _f(r["t_s"])
        dt = t - t_prev if t > t_prev else math.nan
        d = {k: _f(r.get(k, 0)) - _f(prev.get(k, 0)) for k in DELTAS}
        out["t_s"].append(t)
        out["iops"].append((d["reads"] + d["writes"]) / dt)
        out["read_mbps"].append(d["read_bytes"] / dt / 1e6)
        out["write_mbps"].append(d["write_bytes"] / dt / 1e6)
        out["mbps"].append((d["read_bytes"] + d["write_bytes"]) / dt / 1e6)
        for k in DELTAS:
            out[k].append(d[k])
        out["waf"].append(d["nand_write_bytes"] / d["host_write_bytes"] if d["host_write_bytes"] > 0 else math.nan)
        for k in LEVELS:
            out[k].append(_f(r.get(k)))
        for k in LAG:
            out[_lag_name(k)].append(_f(r.get(f"i_{k}")))
        prev, t_prev = r, t
    return {k: np.asarray(v, dtype=np.float64) for k, v in out.items()}


def totals(rows: list[dict]) -> dict[str, float]:
    """The session's totals: counters at the end and the whole session's lag."""
    if not rows:
        return {}
    last = rows[-1]
    t = {k: _f(last.get(k)) for k in (*DELTAS, *LEVELS, "waf", "cmt_hit_rate")}
    t["duration_s"] = _f(last.get("t_s"))
    t["virtual_s"] = _f(last.get("now_s"))
    if last.get("final"):
        for k in LAG:
            t[_lag_name(k)] = _f(last.get(k))
    else:  # the plugin was killed: the lag of the intervals recorded
        req = sum(_f(r.get("i_requests", 0)) for r in rows)
        t["lag_requests"] = req
        t["late"] = sum(_f(r.get("i_late", 0)) for r in rows)
        t["lag_max_us"] = max((_f(r.get("i_lag_max_us", 0)) for r in rows), default=0.0)
        t["lag_mean_us"] = (sum(_f(r.get("i_lag_mean_us", 0)) * _f(r.get("i_requests", 0)) for r in rows) / req
                            if req else 0.0)
    n = t.get("lag_requests", 0.0)
    t["late_pct"] = 100.0 * t.get("late", 0.0) / n if n else 0.0
    dur = t["duration_s"]
    ios = t["reads"] + t["writes"]
    t["ios"] = ios
    t["iops"] = ios / dur if dur > 0 else 0.0
    return t


METRICS = ("duration_s", "ios", "iops", "reads", "writes", "trims", "flushes", "trim_bytes",
           "host_write_bytes", "nand_write_bytes", "waf", "erases", "gc_moves",
           "lag_requests", "late", "late_pct", "lag_mean_us", "lag_p99_us", "lag_max_us")


def metrics(t: dict[str, float]) -> dict[str, float]:
    return {k: t[k] for k in METRICS if k in t}


def counters_at(rows: list[dict], t0_unix: float, t_s: np.ndarray) -> dict[str, np.ndarray]:
    """The served drive's counters at the times `t0_unix + t_s` (a fio series' interval
    ends), interpolated between the plugin's samples: levels (`free_blocks`,
    `slc_used_bytes`, `slc_capacity_bytes`) and per-interval amounts (`waf`,
    `nand_write_bytes`, `erases`, `gc_moves`), so the report draws them under the curve
    fio measured. Empty when the samples do not cover the series."""
    rows = [r for r in rows if r.get("unix_s") is not None]
    t = np.asarray(t_s, dtype=np.float64)
    if len(rows) < 2 or not len(t):
        return {}
    u = np.array([r["unix_s"] for r in rows], dtype=np.float64)
    at = t0_unix + t
    if at[0] < u[0] - 2.0 or at[-1] > u[-1] + 2.0:  # the samples must span the series
        return {}
    col = lambda k: np.array([_f(r.get(k, 0)) for r in rows], dtype=np.float64)  # noqa: E731
    out = {k: np.interp(at, u, col(k)) for k in ("free_blocks", "slc_used_bytes", "slc_capacity_bytes")}
    edges = np.concatenate([[t0_unix], at])
    for k in ("host_write_bytes", "nand_write_bytes", "erases", "gc_moves"):
        cum = np.interp(edges, u, col(k))
        out[k if k != "host_write_bytes" else "drive_host_write_bytes"] = np.diff(cum)
    host, nand = out["drive_host_write_bytes"], out["nand_write_bytes"]
    with np.errstate(invalid="ignore", divide="ignore"):
        out["waf"] = np.where(host > 0, nand / np.where(host > 0, host, 1.0), np.nan)
    return out
