"""Figure-ready data shared by every test's figures, derived from ReportRuns so that the
HTML and PNG exporters show exactly the same numbers: counter panels, thinning, phase
pickers, bar groups, metric titles. Pure functions; anything missing yields no entry."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .model import ReportDrive, ReportPhase

GB = 1e9
MAX_POINTS = 4000  # per trace; keeps the HTML small for long runs on large drives


@dataclass(frozen=True)
class Panel:
    key: str
    title: str  # above the panel
    unit: str  # y-axis title
    lines: tuple[str, ...]  # Counters.lines keys drawn in it
    zero: bool = True  # y axis from zero (temperature is read on its own band)


# SLC is drawn as used and allowance in GB rather than their ratio. The simulator's
# `slc_capacity_bytes` is the room the firmware still allows for new SLC blocks: a dynamic
# cache's allowance shrinks as the drive fills, below what SLC blocks still hold (data
# waiting to be folded), so "used" can sit above it for a long stretch.
PANELS = (Panel("waf", "Write amplification", "WAF", ("waf",)),
          Panel("slc", "SLC cache, GB: used (solid), allowance for new SLC blocks (dashed)",
                "SLC GB", ("slc_used_gb", "slc_allowance_gb")),
          Panel("free_blocks", "Free blocks", "free blk", ("free_blocks",)),
          Panel("temp", "Drive temperature (°C)", "°C", ("temp_c",), zero=False),
          Panel("cpu_wait", "fio waiting for a CPU (% of each second, its busiest task)", "wait %",
                ("cpu_wait_pct",)))
# a real run whose fio never waited this long for a CPU in any second gets no panel: the
# host did not hold it back (a few % is the scheduler's ordinary jitter)
CPU_WAIT_SHOWN_PCT = 5.0


DASHED = {"slc_allowance_gb"}


@dataclass
class Counters:
    """Lines beneath a curve, against the same x: the simulator's internal counters, and a
    real drive's temperature (`temp_c`, sampled about once a second by smartctl/nvme-cli)
    and fio's wait for a CPU (`cpu_wait_pct`, targets/fio/cpu_wait.py)."""

    x: np.ndarray
    lines: dict[str, np.ndarray] = field(default_factory=dict)

    def panels(self) -> list[Panel]:
        return [p for p in PANELS if any(k in self.lines for k in p.lines)]


def union_panels(counters: list["Counters | None"]) -> list[Panel]:
    keys = {p.key for c in counters if c is not None for p in c.panels()}
    return [p for p in PANELS if p.key in keys]


@dataclass
class QuickSeries:
    label: str
    value: np.ndarray  # the bar: what the tool shows (CrystalDiskMark: best run; AS SSD: mean)
    lo: np.ndarray  # slowest run (the whisker's lower end)
    hi: np.ndarray  # fastest run
    points: list[list[float]]  # every run, so clusters stay visible
    color: str = ""  # the drive's colour in its report ("": by position)

    @property
    def whiskers(self) -> np.ndarray:
        """(2, n) distances from the bar to the slowest and the fastest run, never negative
        (a mean of equal runs can sit a rounding error outside them); 0 without runs."""
        lo = np.nan_to_num(self.value - self.lo)
        hi = np.nan_to_num(self.hi - self.value)
        return np.vstack([np.maximum(lo, 0.0), np.maximum(hi, 0.0)])


@dataclass
class QuickGroup:
    """Horizontal bars, one group per metric, one bar per drive: the quick tests, and the
    idle / copy tests' sequential figures (those without repeats have no error bars)."""

    unit: str  # "MB/s", "IOPS", "points", "us"
    key: str  # slug for ids and file names
    metrics: list[str]
    series: list[QuickSeries]
    test: str = "quick"  # the test the bars belong to: the figure's id is fig-<test>[-<key>]
    title: str = ""
    names: list[str] = field(default_factory=list)  # bar labels; default from metric names
    note: str = ""  # how to read the bars, where they need it

    @property
    def fig_key(self) -> str:
        return f"{self.test}-{self.key}" if self.key else self.test

    @property
    def labels(self) -> list[str]:
        return self.names or [quick_title(m) for m in self.metrics]

    @property
    def heading(self) -> str:
        return self.title or f"Quick tests ({self.unit})"


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "x"


def spare_label(pct: float) -> str:
    return f"{pct:g}% spare" if pct else "no extra spare"


def thin(x: np.ndarray, *ys: np.ndarray | None, max_points: int = MAX_POINTS):
    """Bucket means down to max_points so the page stays light; short series pass through."""
    n = len(x)
    if n <= max_points:
        return (x, *ys)
    edges = np.linspace(0, n, max_points + 1).astype(int)

    def red(a):  # NaN-aware mean per bucket (WAF is NaN in seconds without host writes)
        if a is None:
            return None
        a = np.asarray(a, dtype=float)
        ok = ~np.isnan(a)
        tot = np.add.reduceat(np.where(ok, a, 0.0), edges[:-1])
        cnt = np.add.reduceat(ok.astype(float), edges[:-1])
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(cnt > 0, tot / np.where(cnt > 0, cnt, 1), np.nan)

    return (red(x), *(red(y) for y in ys))


def _io_phases(d: ReportDrive) -> list[ReportPhase]:
    return [p for p in d.phases if p.kind not in ("purge", "trim", "idle")]


def _series(p: ReportPhase) -> dict[str, np.ndarray]:
    """The per-second series without a trailing partial interval: a phase that stops
    mid-second reports a last row of a few milliseconds whose rate is meaningless."""
    s = p.series
    t = s.get("t_s")
    if t is None or len(t) < 3 or (t[-1] - t[-2]) >= 0.5 * (t[-2] - t[-3]):
        return s
    return {k: (v[:-1] if len(v) == len(t) else v) for k, v in s.items()}


def _counters(s: dict[str, np.ndarray], x: np.ndarray) -> Counters | None:
    lines = {}
    if "waf" in s:
        lines["waf"] = s["waf"]
    # a drive without an SLC cache (MLC, or a cache off) has both at 0 throughout: no panel
    slc = [k for k in ("slc_used_bytes", "slc_capacity_bytes") if k in s]
    if any(np.any(np.asarray(s[k], dtype=float) != 0) for k in slc):
        if "slc_used_bytes" in s:
            lines["slc_used_gb"] = s["slc_used_bytes"] / GB
        if "slc_capacity_bytes" in s:
            lines["slc_allowance_gb"] = s["slc_capacity_bytes"] / GB
    if "free_blocks" in s:
        lines["free_blocks"] = s["free_blocks"]
    if "temp_c" in s and np.isfinite(np.asarray(s["temp_c"], dtype=float)).any():
        lines["temp_c"] = s["temp_c"]
    if "cpu_wait_pct" in s and np.nanmax(np.asarray(s["cpu_wait_pct"], dtype=float), initial=0.0) >= CPU_WAIT_SHOWN_PCT:
        lines["cpu_wait_pct"] = s["cpu_wait_pct"]
    lines = {k: v for k, v in lines.items() if len(v) == len(x)}
    if not lines:
        return None
    keys = list(lines)
    x2, *vals = thin(x, *(lines[k] for k in keys))
    return Counters(x=x2, lines=dict(zip(keys, vals)))


def _phase_named(d: ReportDrive, name: str) -> ReportPhase | None:
    return next((p for p in d.phases if p.name == name), None)


def _num_map(v: Any) -> dict[float, float]:
    if not isinstance(v, dict):
        return {}
    out = {}
    for k, x in v.items():
        try:
            out[float(k)] = float(x)
        except (TypeError, ValueError):
            continue
    return out


def _f(v: Any) -> float | None:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    return None if np.isnan(v) else float(v)


def _is_spread(name: str, metrics: dict) -> bool:
    """x_stdev and x_mean beside x are x's spread and mean over runs (the figures show the
    runs themselves); steady_stdev alone is a figure of its own."""
    for suffix in ("_stdev", "_std", "_sd", "_mean"):
        if name.endswith(suffix) and name[: -len(suffix)] in metrics:
            return True
    return False


def _scalar_or_list(v: Any) -> bool:
    if isinstance(v, bool):
        return False
    if isinstance(v, (int, float)):
        return True
    return isinstance(v, (list, tuple)) and all(isinstance(x, (int, float)) for x in v)


METRIC_TITLES = {
    "slc_cache_gb": "SLC cache (GB)", "peak_mbps": "Peak (MB/s)",
    "post_cache_mbps": "After cache (MB/s)", "last16_mbps": "Last 16 GB (MB/s)",
    "avg_mbps": "Average (MB/s)", "fill_seconds": "Fill time (s)",
    "recovery_peaks": "Recovery peaks", "mbps_per_watt": "MB/s per W",
    "steady_iops": "Steady-state IOPS", "steady_stdev": "Steady-state std dev",
    "p1_low_iops": "Lowest 1% IOPS", "min_iops": "Minimum IOPS",
    "steady_start_s": "Steady state from (s)", "waf": "Phase WAF (whole random-write phase)",
    "steady_waf": "Steady-state WAF (last 600 s; a run under 1200 s: its second half)",
    "idle_wait_s": "Idle before the reads (s)",
    "clean_read_mbps": "Clean read, unwritten LBAs (MB/s)",
    "read_written_mbps": "Read of freshly written data (MB/s)",
}


LOWER_IS_BETTER = re.compile(r"(seconds|stdev|_us|_ms|waf|steady_start|lat_)")


def lower_is_better(name: str) -> bool:
    return bool(LOWER_IS_BETTER.search(name))


def metric_title(name: str) -> str:
    m = re.fullmatch(r"(\w+)\[(.+)\]", name)
    if m:  # iops_by_gb[4] -> "IOPS @ 4 GB"
        base = {"iops_by_gb": "IOPS", "lat_p99_us_by_gb": "p99 latency (µs)",
                "lat_mean_us_by_gb": "mean latency (µs)"}.get(m[1], m[1])
        return f"{base} @ {m[2]} GB" if m[1].endswith("_by_gb") else f"{base} [{m[2]}]"
    if name in METRIC_TITLES:
        return METRIC_TITLES[name]
    if name.startswith(("cdm_", "asssd_")):
        title = quick_title(name)
        return title + (" (MB/s)" if name.endswith("_mbps") else " (ms)"
                        if name.endswith("_ms") else "")
    return generic_title(name)


UNITS = {"mbps": "MB/s", "iops": "IOPS", "ms": "ms", "us": "µs", "gb": "GB", "s": "s",
         "seconds": "s", "pct": "%", "w": "W"}


def generic_title(name: str) -> str:
    """clean_write_mbps -> "clean write (MB/s)": readable without a table of every name;
    a percentile's decimals stay one number (read_lat_p99_9_us -> "read lat p99.9 (µs)")."""
    parts = re.sub(r"(?:^|(?<=_))(p\d\d)_(\d+)(?=_|$)", r"\1.\2", name).split("_")
    if len(parts) > 1 and parts[-1] in UNITS:
        return f"{' '.join(parts[:-1])} ({UNITS[parts[-1]]})"
    return " ".join(parts)


def quick_title(name: str) -> str:
    """cdm_rnd4k_q32t1_read_mbps -> "CDM RND4K Q32T1 read"; other names pass through."""
    parts = name.split("_")
    if parts[0] not in ("cdm", "asssd"):
        return name
    unit = parts[-1] if parts[-1] in ("mbps", "iops", "ms", "us") else ""
    body = parts[1:-1] if unit else parts[1:]
    words = [{"access": "access time", "score": "score"}.get(w, w) if w in (
        "read", "write", "total", "access", "score") else w.upper() for w in body]
    head = "CDM" if parts[0] == "cdm" else "AS-SSD"
    return " ".join([head, *words]) + ({"mbps": "", "iops": " IOPS"}.get(unit, ""))


def fmt_row(vals: Sequence[float | None]) -> list[str]:
    """One metric's values (a comparison's row, every drive) in one format: whole numbers if
    every value is one, else the decimals fmt gives the largest (1,000 and up none, 10 and
    up one, below that three significant digits); – where there is none."""
    nums = [float(v) for v in vals if v is not None and math.isfinite(float(v))]
    if not nums:
        return [fmt(None) for _ in vals]
    if all(x.is_integer() for x in nums):
        d = 0
    else:
        a = max(abs(x) for x in nums)
        d = 0 if a >= 1000 else 1 if a >= 10 else (2 - math.floor(math.log10(a)) if a else 1)
    return [fmt(None) if v is None or not math.isfinite(float(v)) else f"{float(v):,.{d}f}" for v in vals]


def fmt(v: float | None, pct: bool = False) -> str:
    if v is None:
        return "–"
    if pct:
        return f"{v:+.1f} %"
    a = abs(v)
    if a >= 1000:
        return f"{v:,.0f}"
    if a >= 10:
        return f"{v:.1f}"
    return f"{v:.3g}"
