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
from array import array
from pathlib import Path

import numpy as np

# cumulative counters whose per-interval differences the series holds
DELTAS = ("reads", "writes", "trims", "flushes", "read_bytes", "write_bytes", "trim_bytes",
          "host_write_bytes", "nand_write_bytes", "nand_slc_write_bytes",
          "nand_native_write_bytes", "erases", "gc_moves", "gc_stalls", "slc_fold_bytes")
LEVELS = ("free_blocks", "slc_used_bytes", "slc_capacity_bytes", "mapped_bytes")
LAG = ("requests", "late", "lag_mean_us", "lag_p99_us", "lag_max_us", "late_lag_mean_us",
       "late_lag_max_us")


CHUNK = 1 << 20  # read at a time: the rows of a long file are parsed one piece at a time


class StatsTail:
    """The stats file read as it grows: each call reads only the bytes added since the last
    (the plugin appends a line per interval, so rereading the whole file every poll would
    cost time that grows with the session). A line still being written waits for its end.
    Every row read is kept in `columns`, not as parsed (about 3 KB a row)."""

    def __init__(self, path: Path):
        self.path = path
        self.offset = 0  # bytes consumed
        self.columns = Columns()  # every complete row so far
        self._part = b""

    def new_rows(self, limit: int = CHUNK) -> list[dict]:
        """The rows added since the last call (at most `limit` bytes of them: a poll
        catches up on a long file a piece at a time)."""
        try:
            with open(self.path, "rb") as f:
                f.seek(self.offset)
                data = f.read(limit)
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
        for r in new:
            self.columns.add(r)
        return new

    def last_line(self) -> list[dict]:
        """The final line, without its newline (the file is complete), if it is whole."""
        if not self._part.strip():
            return []
        try:
            r = json.loads(self._part)
        except (json.JSONDecodeError, UnicodeDecodeError):
            return []
        self._part = b""
        self.columns.add(r)
        return [r]

    def drain(self) -> "Columns":
        """Every row to the end of the file (complete: nbdkit has stopped), in columns."""
        while True:
            before = self.offset
            self.new_rows()
            if self.offset - before < CHUNK:
                break
        self.last_line()
        return self.columns


def _lag_name(k: str) -> str:
    return "lag_requests" if k == "requests" else k


def _f(x) -> float:
    return math.nan if x is None else float(x)


class Columns:
    """The rows of a stats file as one float64 column for each field the series and totals
    use (about 220 bytes a row, where a parsed row is about 3 KB: a session sampled every
    10 ms for a day has 8.6 M rows), and the last row whole."""

    KEPT = ("t_s", "unix_s", *DELTAS, *LEVELS, *(f"i_{k}" for k in LAG))

    def __init__(self) -> None:
        self._cols = {k: array("d") for k in self.KEPT}
        self.last: dict | None = None

    @classmethod
    def of(cls, rows: list[dict]) -> "Columns":
        c = cls()
        for r in rows:
            c.add(r)
        return c

    def add(self, r: dict) -> None:
        for k, col in self._cols.items():
            col.append(_f(r.get(k, 0 if k in DELTAS else None)))
        self.last = r

    def __len__(self) -> int:
        return len(self._cols["t_s"])

    def col(self, k: str) -> np.ndarray:
        return np.array(self._cols[k], dtype=np.float64)

    def series(self) -> dict[str, np.ndarray]:
        """Per-interval series (t_s = wall seconds since serving began at the interval end)."""
        t = self.col("t_s")
        before = lambda x: np.concatenate(([0.0], x[:-1]))  # noqa: E731  (the previous row's; 0 first)
        with np.errstate(invalid="ignore", divide="ignore"):
            dt = np.where(t > before(t), t - before(t), math.nan)
            d = {k: self.col(k) - before(self.col(k)) for k in DELTAS}
            host, nand = d["host_write_bytes"], d["nand_write_bytes"]
            out = {"t_s": t, "iops": (d["reads"] + d["writes"]) / dt,
                   "mbps": (d["read_bytes"] + d["write_bytes"]) / dt / 1e6,
                   "read_mbps": d["read_bytes"] / dt / 1e6, "write_mbps": d["write_bytes"] / dt / 1e6,
                   **d, "waf": np.where(host > 0, nand / np.where(host > 0, host, 1.0), math.nan)}
        out.update({k: self.col(k) for k in LEVELS})
        out.update({_lag_name(k): self.col(f"i_{k}") for k in LAG})
        return out

    def totals(self) -> dict[str, float]:
        """The session's totals: counters at the end and the whole session's lag."""
        last = self.last
        if last is None:
            return {}
        t = {k: _f(last.get(k)) for k in (*DELTAS, *LEVELS, "waf", "cmt_hit_rate")}
        t["duration_s"] = _f(last.get("t_s"))
        t["virtual_s"] = _f(last.get("now_s"))
        if last.get("final"):
            for k in LAG:
                t[_lag_name(k)] = _f(last.get(k))
        else:  # the plugin was killed: the lag of the intervals recorded (a missing one: 0)
            got = lambda k: np.nan_to_num(self.col(f"i_{k}"), nan=0.0).tolist()  # noqa: E731
            req = sum(got("requests"))
            t["lag_requests"] = req
            t["late"] = sum(got("late"))
            t["lag_max_us"] = max(got("lag_max_us"), default=0.0)
            t["lag_mean_us"] = sum(m * n for m, n in zip(got("lag_mean_us"), got("requests"))) / req if req else 0.0
        return _rates(t)


def series(rows: list[dict]) -> dict[str, np.ndarray]:
    return Columns.of(rows).series()


def totals(rows: list[dict]) -> dict[str, float]:
    return Columns.of(rows).totals()


def _rates(t: dict[str, float]) -> dict[str, float]:
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


def counters_at(rows: Columns, t0_unix: float, t_s: np.ndarray) -> dict[str, np.ndarray]:
    """The served drive's counters at the times `t0_unix + t_s` (a fio series' interval
    ends), interpolated between the plugin's samples: levels (`free_blocks`,
    `slc_used_bytes`, `slc_capacity_bytes`) and per-interval amounts (`waf`,
    `nand_write_bytes`, `erases`, `gc_moves`), so the report draws them under the curve
    fio measured. Empty when the samples do not cover the series."""
    u = rows.col("unix_s")
    sampled = ~np.isnan(u)
    u = u[sampled]
    t = np.asarray(t_s, dtype=np.float64)
    if len(u) < 2 or not len(t):
        return {}
    at = t0_unix + t
    if at[0] < u[0] - 2.0 or at[-1] > u[-1] + 2.0:  # the samples must span the series
        return {}
    col = lambda k: rows.col(k)[sampled]  # noqa: E731
    out = {k: np.interp(at, u, col(k)) for k in ("free_blocks", "slc_used_bytes", "slc_capacity_bytes")}
    edges = np.concatenate([[t0_unix], at])
    for k in ("host_write_bytes", "nand_write_bytes", "erases", "gc_moves"):
        cum = np.interp(edges, u, col(k))
        out[k if k != "host_write_bytes" else "drive_host_write_bytes"] = np.diff(cum)
    host, nand = out["drive_host_write_bytes"], out["nand_write_bytes"]
    with np.errstate(invalid="ignore", divide="ignore"):
        out["waf"] = np.where(host > 0, nand / np.where(host > 0, host, 1.0), np.nan)
    return out
