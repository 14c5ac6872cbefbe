"""Figure-ready data, derived once from ReportRuns so that the HTML and PNG exporters show
exactly the same numbers. Pure functions; anything missing simply yields no entry."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .model import ReportDrive, ReportPhase, ReportRun

GB = 1e9
WINDOW_START_S = 1400.0  # methodology.md: the consistency "window" views start here
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
          Panel("temp", "Drive temperature (°C)", "°C", ("temp_c",), zero=False))
DASHED = {"slc_allowance_gb"}


@dataclass
class Counters:
    """Lines beneath a curve, against the same x: the simulator's internal counters, and a
    real drive's temperature (`temp_c`, sampled about once a second by smartctl/nvme-cli)."""

    x: np.ndarray
    lines: dict[str, np.ndarray] = field(default_factory=dict)

    def panels(self) -> list[Panel]:
        return [p for p in PANELS if any(k in self.lines for k in p.lines)]


def union_panels(counters: list["Counters | None"]) -> list[Panel]:
    keys = {p.key for c in counters if c is not None for p in c.panels()}
    return [p for p in PANELS if p.key in keys]


@dataclass
class FillCurve:
    run_id: int
    drive: str
    label: str
    gb: np.ndarray
    mbps: np.ndarray
    counters: Counters | None = None
    metrics: dict[str, Any] = field(default_factory=dict)


@dataclass
class ConsistencyCombo:
    """One (drive, spare area) pair: per-second IOPS and, for simulated drives, counters."""

    run_id: int
    drive: str
    label: str
    spare_pct: float
    t: np.ndarray
    iops: np.ndarray
    window_start: float
    counters: Counters | None = None
    steady_iops: float | None = None  # the test's own figures, marked on the curves
    steady_start_s: float | None = None

    @property
    def key(self) -> str:
        return f"{self.label} | {spare_label(self.spare_pct)}"


@dataclass
class WorkingSet:
    label: str
    gb: np.ndarray
    iops: np.ndarray
    lat_p99_us: np.ndarray | None = None


@dataclass
class QuickSeries:
    label: str
    value: np.ndarray  # the bar: what the tool shows (CrystalDiskMark: best run; AS SSD: mean)
    lo: np.ndarray  # slowest run (the whisker's lower end)
    hi: np.ndarray  # fastest run
    points: list[list[float]]  # every run, so clusters stay visible

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
    test: str = "quick"
    title: str = ""
    names: list[str] = field(default_factory=list)  # bar labels; default from metric names

    @property
    def fig_key(self) -> str:
        return f"{self.test}-{self.key}" if self.key else self.test

    @property
    def labels(self) -> list[str]:
        return self.names or [quick_title(m) for m in self.metrics]

    @property
    def heading(self) -> str:
        return self.title or f"Quick tests ({self.unit})"

    @property
    def note(self) -> str:
        """How to read the bars, where they need it."""
        return NOTES.get(self.test, "")


@dataclass
class TrimCurves:
    """TRIM validation: the clean sequential pass and the one after torture + TRIM."""

    label: str
    clean_gb: np.ndarray
    clean_mbps: np.ndarray
    after_gb: np.ndarray
    after_mbps: np.ndarray


@dataclass
class CompareTable:
    test: str
    spare_pct: float
    run_ids: list[int]
    labels: list[str]
    rows: list[tuple[str, list[float | None], list[float | None]]]  # metric, values, % vs first
    warnings: list[str] = field(default_factory=list)

    @property
    def spare_text(self) -> str:
        """Spare area matters to consistency runs (and any run that restricted its LBAs)."""
        return spare_label(self.spare_pct) if self.spare_pct or self.test == "consistency" else ""

    @property
    def key(self) -> str:
        return slug(f"{self.test}-{self.spare_text}")


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


# --- picking the right phase -------------------------------------------------------------

def _io_phases(d: ReportDrive) -> list[ReportPhase]:
    return [p for p in d.phases if p.kind not in ("purge", "trim", "idle")]


def _fill_phase(d: ReportDrive) -> ReportPhase | None:
    """The whole-drive write: the phase with the most per-GB segments."""
    cands = [p for p in _io_phases(d) if len(p.segments.get("mbps", ())) > 0]
    named = [p for p in cands if "fill" in p.name.lower()]
    return max(named or cands, key=lambda p: len(p.segments["mbps"]), default=None)


def _random_phase(d: ReportDrive) -> ReportPhase | None:
    """The random-write phase of a consistency run (not the preconditioning fill)."""
    cands = [p for p in _io_phases(d) if len(p.series.get("iops", ())) > 0]
    named = [p for p in cands if re.search(r"rand|random|steady|torture", p.name.lower())]
    if named:
        return named[-1]
    return cands[-1] if cands else None


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
    if "slc_used_bytes" in s:
        lines["slc_used_gb"] = s["slc_used_bytes"] / GB
    if "slc_capacity_bytes" in s:
        lines["slc_allowance_gb"] = s["slc_capacity_bytes"] / GB
    if "free_blocks" in s:
        lines["free_blocks"] = s["free_blocks"]
    if "temp_c" in s and np.isfinite(np.asarray(s["temp_c"], dtype=float)).any():
        lines["temp_c"] = s["temp_c"]
    lines = {k: v for k, v in lines.items() if len(v) == len(x)}
    if not lines:
        return None
    keys = list(lines)
    x2, *vals = thin(x, *(lines[k] for k in keys))
    return Counters(x=x2, lines=dict(zip(keys, vals)))


# --- figures' data -----------------------------------------------------------------------

def fill_curves(runs: list[ReportRun]) -> list[FillCurve]:
    out = []
    for r in runs:
        if r.test != "fill":
            continue
        for d in r.drives:
            p = _fill_phase(d)
            if p is None:
                continue
            gb, mbps = p.segments.get("gb"), p.segments["mbps"]
            if gb is None or len(gb) != len(mbps):
                gb = np.arange(1, len(mbps) + 1, dtype=float)
            counters = None
            s = _series(p)
            if "host_write_bytes" in s:  # counters are per second: put them on GB written
                counters = _counters(s, np.cumsum(s["host_write_bytes"]) / GB)
            elif "t_s" in s and "t_s" in p.segments and len(p.segments["t_s"]) == len(gb):
                # seconds -> GB written, from (0 s, 0 GB) through each segment's end
                counters = _counters(s, np.interp(s["t_s"], np.r_[0.0, p.segments["t_s"]],
                                                  np.r_[0.0, gb]))
            out.append(FillCurve(r.run_id, d.drive, d.label, gb, mbps, counters, d.metrics))
    return out


def fill_y_max(curves: list[FillCurve], y_max: float | None) -> float:
    """One y scale for every compared drive: the user's, else just above the highest peak."""
    if y_max:
        return float(y_max)
    peaks = [float(np.nanmax(c.mbps)) for c in curves if len(c.mbps)]
    top = max(peaks, default=100.0)
    step = 100.0 if top <= 2000 else 500.0
    return float(np.ceil(top * 1.05 / step) * step)


def consistency_combos(runs: list[ReportRun]) -> list[ConsistencyCombo]:
    out = []
    for r in runs:
        if r.test != "consistency":
            continue
        for d in r.drives:
            p = _random_phase(d)
            if p is None:
                continue
            ser = _series(p)
            iops = ser["iops"]
            t = ser.get("t_s")
            if t is None or len(t) != len(iops):
                t = np.arange(1, len(iops) + 1, dtype=float)
            end = float(t[-1]) if len(t) else 0.0
            # a shortened run (--seconds) keeps the same proportions as 1400 of 2000 s
            w0 = WINDOW_START_S if end > WINDOW_START_S else round(0.7 * end)
            counters = _counters(ser, t)
            t, iops = thin(t, iops)
            out.append(ConsistencyCombo(r.run_id, d.drive, d.label, float(r.spare_pct), t,
                                        iops, w0, counters, _f(d.metrics.get("steady_iops")),
                                        _f(d.metrics.get("steady_start_s"))))
    return out


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


def working_sets(runs: list[ReportRun]) -> list[WorkingSet]:
    out = []
    for r in runs:
        if r.test != "working-set":
            continue
        for d in r.drives:
            iops = _num_map(d.metrics.get("iops_by_gb"))
            if not iops:
                continue
            gb = np.array(sorted(iops))
            lat = _num_map(d.metrics.get("lat_p99_us_by_gb"))
            p99 = np.array([lat.get(g, np.nan) for g in gb]) if lat else None
            out.append(WorkingSet(d.label, gb, np.array([iops[g] for g in gb]), p99))
    return out


QUICK_UNITS = [("_mbps", "MB/s", "mbps"), ("_iops", "IOPS", "iops"), ("_us", "µs", "us"),
               ("_ms", "ms", "ms"), ("score", "points", "score")]


def _quick_unit(name: str):
    for suffix, unit, key in QUICK_UNITS:
        if name.endswith(suffix) or (key == "score" and "score" in name):
            return unit, key
    return None


def quick_groups(runs: list[ReportRun]) -> list[QuickGroup]:
    drives = [d for r in runs if r.test == "quick" for d in r.drives]
    if not drives:
        return []
    names: list[str] = []
    for d in drives:
        for k, v in {**d.metrics, **d.repeats}.items():
            if (k not in names and _quick_unit(k) and _scalar_or_list(v)
                    and not _is_spread(k, {**d.metrics, **d.repeats})):
                names.append(k)
    groups = []
    for suffix, unit, key in QUICK_UNITS:
        metrics = [n for n in names if _quick_unit(n) == (unit, key)]
        if not metrics:
            continue
        series = []
        for d in drives:
            value, lo, hi, pts = [], [], [], []
            for m in metrics:
                vals = [float(x) for x in (d.repeats.get(m) or [])]
                mv = d.metrics.get(m)
                if not vals and isinstance(mv, (list, tuple)):
                    vals = [float(x) for x in mv]
                if not vals and isinstance(mv, (int, float)):
                    vals = [float(mv)]
                # the figure the test reports is the bar; runs without one: their mean
                value.append(float(mv) if isinstance(mv, (int, float)) else (
                    float(np.mean(vals)) if vals else np.nan))
                lo.append(min(vals) if vals else np.nan)
                hi.append(max(vals) if vals else np.nan)
                pts.append(vals)
            series.append(QuickSeries(d.label, np.array(value), np.array(lo), np.array(hi), pts))
        groups.append(QuickGroup(unit, key, metrics, series))
    return groups


def _phase_named(d: ReportDrive, name: str) -> ReportPhase | None:
    return next((p for p in d.phases if p.name == name), None)


def trim_curves(runs: list[ReportRun]) -> list[TrimCurves]:
    out = []
    for r in runs:
        if r.test != "trim":
            continue
        for d in r.drives:
            a, b = _phase_named(d, "clean"), _phase_named(d, "after_trim")
            if a is None or b is None or "mbps" not in a.segments or "mbps" not in b.segments:
                continue
            ga = a.segments.get("gb", np.arange(1.0, len(a.segments["mbps"]) + 1))
            gb = b.segments.get("gb", np.arange(1.0, len(b.segments["mbps"]) + 1))
            out.append(TrimCurves(d.label, ga, a.segments["mbps"], gb, b.segments["mbps"]))
    return out


SCALAR_BARS = {
    "idle": ("Sequential passes, HD Tach style: clean, full, after idle; purge vs after TRIM",
             ["clean_read_mbps", "read_written_mbps", "full_read_mbps", "idle_read_mbps",
              "clean_write_mbps", "full_write_mbps", "idle_write_mbps", "purge_write_mbps",
              "trim_write_mbps"]),
    "copy": ("File copy: within the drive and from a rate-limited source",
             ["large_copy_mbps", "large_transfer_mbps", "small_copy_mbps",
              "small_transfer_mbps"]),
}


# the idle test's two read baselines, named for what they read
BAR_NAMES = {"clean_read_mbps": "clean read (unwritten LBAs)",
             "read_written_mbps": "read of freshly written data"}
NOTES = {
    "quick": ("bar: the tool's figure (CrystalDiskMark: its best run; AS SSD: the mean of its "
              "runs); whiskers: slowest to fastest run; dots: each run"),
    "idle": ("Two read baselines: the clean read covers LBAs that were never written, which a "
             "drive answers without reading flash (the interface limit); the read of freshly "
             "written data is the baseline for the full and after-idle reads."),
}


def scalar_bars(runs: list[ReportRun]) -> list[QuickGroup]:
    """Bars of single-valued MB/s metrics (idle, copy), every drive side by side."""
    out = []
    for test, (title, metrics) in SCALAR_BARS.items():
        drives = [d for r in runs if r.test == test for d in r.drives]
        present = [m for m in metrics if any(_f(d.metrics.get(m)) is not None for d in drives)]
        if not present:
            continue
        series = []
        for d in drives:
            v = np.array([_f(d.metrics.get(m)) if _f(d.metrics.get(m)) is not None else np.nan
                          for m in present])
            series.append(QuickSeries(d.label, v, v, v, [[] for _ in present]))
        out.append(QuickGroup("MB/s", "", present, series, test=test, title=title,
                              names=[BAR_NAMES.get(m) or generic_title(m).replace(" (MB/s)", "")
                                     for m in present]))
    return out


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


def compare_tables(runs: list[ReportRun]) -> list[CompareTable]:
    """Per test (and spare area), every drive side by side with % change vs the first."""
    groups: dict[tuple[str, float], list[ReportRun]] = {}
    for r in runs:
        groups.setdefault((r.test, float(r.spare_pct)), []).append(r)
    tables = []
    for (test, spare), rs in groups.items():
        drives = [d for r in rs for d in r.drives]
        if not drives:
            continue
        flat = [_flatten(d.metrics) for d in drives]
        names: list[str] = []
        for m in flat:  # a spread (x_stdev) stays out: the figures show it as error bars
            names += [k for k in m if k not in names and not _is_spread(k, m)]
        rows = []
        for n in names:
            vals = [m.get(n) for m in flat]
            base = vals[0]
            pct = [None if (v is None or base in (None, 0)) else 100.0 * (v - base) / abs(base)
                   for v in vals]
            rows.append((n, vals, pct))
        warns = []
        beds = {str(r.tags.get("testbed", "")) for r in rs}
        if len(beds) > 1:
            warns.append("runs come from different testbeds: " + ", ".join(sorted(beds)))
        vers = {str(r.tags.get("methodology_version", "")) for r in rs}
        if len(vers) > 1:
            warns.append("runs use different methodology versions: " + ", ".join(sorted(vers)))
        bad = [f"{d.label} ({d.status})" for d in drives if d.status != "complete"]
        if bad:
            warns.append("incomplete: " + ", ".join(bad))
        tables.append(CompareTable(test, spare, [r.run_id for r in rs],
                                   [d.label for d in drives], rows, warns))
    return tables


def _flatten(metrics: dict[str, Any]) -> dict[str, float]:
    """Scalar metrics as they are; a {key: number} metric (iops_by_gb) as name[key] rows."""
    out: dict[str, float] = {}
    for k, v in metrics.items():
        if isinstance(v, dict):
            for kk, vv in v.items():
                if _f(vv) is not None:
                    out[f"{k}[{kk}]"] = _f(vv)
        elif _f(v) is not None:
            out[k] = _f(v)
    return out


def _f(v: Any) -> float | None:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    return None if np.isnan(v) else float(v)


METRIC_TITLES = {
    "slc_cache_gb": "SLC cache (GB)", "peak_mbps": "Peak (MB/s)",
    "post_cache_mbps": "After cache (MB/s)", "last16_mbps": "Last 16 GB (MB/s)",
    "avg_mbps": "Average (MB/s)", "fill_seconds": "Fill time (s)",
    "recovery_peaks": "Recovery peaks", "mbps_per_watt": "MB/s per W",
    "steady_iops": "Steady-state IOPS", "steady_stdev": "Steady-state std dev",
    "p1_low_iops": "Lowest 1% IOPS", "min_iops": "Minimum IOPS",
    "steady_start_s": "Steady state from (s)", "waf": "Phase WAF (whole random-write phase)",
    "steady_waf": "Steady-state WAF (last 600 s)", "idle_wait_s": "Idle before the reads (s)",
    "clean_read_mbps": "Clean read, unwritten LBAs (MB/s)",
    "read_written_mbps": "Read of freshly written data (MB/s)",
}


LOWER_IS_BETTER = re.compile(r"(seconds|stdev|_us|_ms|waf|steady_start|lat_)")


def lower_is_better(name: str) -> bool:
    return bool(LOWER_IS_BETTER.search(name))


def metric_title(name: str) -> str:
    m = re.fullmatch(r"(\w+)\[(.+)\]", name)
    if m:  # iops_by_gb[4] -> "IOPS @ 4 GB"
        base = {"iops_by_gb": "IOPS", "lat_p99_us_by_gb": "p99 latency (µs)"}.get(m[1], m[1])
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
    """clean_write_mbps -> "clean write (MB/s)": readable without a table of every name."""
    parts = name.split("_")
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
