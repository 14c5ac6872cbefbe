"""The fingerprint battery: the shortest sequence of phases that shows what a drive's
simulated twin needs (`ssdlab fit`, docs/fit-fingerprint.md), each phase aimed at a few parameters:

- purge, then 4 KiB random reads of the purged (unmapped) area at QD1 and QD32: the drive
  answers them from its mapping table without touching flash, so they show the host path
  and the controller's time per command alone (a QD1 read's latency less its page read,
  the command rate that bounds reads at depth), apart from the NAND's read time;
- a sequential fill of the whole area with per-segment speed: the SLC cache's
  size and policy, the post-cache (native) speed, folding and recovery bursts; its start
  (HEAD_SHARES) a cache of a few tenths of a percent of the drive;
- an idle settle (until the drive is quiet: a simulated drive says when; a real one waits
  the whole SETTLE_S), so the reads below read native pages, not the cache;
- QD1 4 KiB random reads of the filled drive with their histogram: read time per page
  type (one peak each), read retries (the far tail);
- 4 KiB random reads at QD32 and 128 KiB sequential reads: the dies' and planes'
  parallelism at that read time, the read path and the link;
- 128 KiB sequential reads at QD1 of the fill's second half (as HD Tach and the idle test
  read): each read's pages at once only where the fill laid consecutive pages over different
  dies, so they show how the fill's writes were placed (an SLC reclaim or a fold that
  interleaves its moves with the host's writes puts runs of them on one die), which reads at
  depth, many in flight over every die, do not;
- a working-set sweep of QD1 reads over area / 2^k: the mapping cache (flat with DRAM; a
  step where the span outgrows an HMB's or an SRAM's coverage);
- QD1 4 KiB random writes with their histogram: the write path and its waits;
- a 4 KiB QD32 random-write stretch (up to 2 drive writes or --seconds, 1800 by default):
  GC, spare area, WAF, the steady-state level and its dips;
- an idle pause and a random-write burst after it: what idle time recovers;
- a TRIM of the area's last quarter and a short 4 KiB QD32 random-write stretch over the rest
  (the consistency test's "with spare area", short): the spare area. A host write costs
  1 / (1 - u) NAND writes, u the valid share of the blocks GC picks; the TRIM takes a quarter
  of the valid pages out of every block, so the level rises by about (1 - 0.75 u) / (1 - u):
  several times on a drive with little spare area (u near 1), far less with much, whatever
  its program time or GC speed, which scale both levels alike. The stretch alone is matched
  by a small spare area with fast GC as well as by a large one with slow GC; the gain mostly
  is not (docs/fit-fingerprint.md: where GC's own speed bounds both levels, not always).

The phases are given as shares of the written area (bytes written / area) with seconds as
caps (a real drive's time); `plan_of` reads those shares back from a stored run, so `ssdlab
fit` can run the same battery on a smaller simulated drive with the same dies (the same
shares of its area) and compare like with like. Every metric is therefore a rate, a
latency or a share: none grows with the drive's size."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..analysis import fill_shape, rate_mbps
from ..analysis.curves import average_by_share, average_to, by_share, hist_quantiles, quantile_step, rate_by_share
from ..analysis.pts_steady import window
from ..figures import lazy
from .common import Options, by_name
from .fingerprint_plan import (  # noqa: F401  (fp.NAME: the battery's names in one place)
    DEFAULT_SECONDS, SECONDS_HELP, SETTLE_S, QD1_READ_S, DEPTH_S, UNMAPPED_S, SPAN_S,
    QD1_WRITE_SHARE, QD1_WRITE_S, CACHE_SHARE, CACHE_S, STRETCH_SHARE, PAUSE_S, RECOVERY_SHARE,
    RECOVERY_S, TRIM_SHARE, TRIMMED_SHARE, TRIMMED_S, FILL_BINS, STRETCH_BINS, RECOVERY_BINS,
    TRIMMED_BINS, FILL_POINTS, TRIAL_SEGMENTS, FILL_SEGMENTS, HEAD_SHARES, MIN_SEGMENT,
    WRITE_ALIGN, SEQ_BLOCK, STEADY_ROUNDS, STEADY_WINDOW, STEADY_FIRST, STEADY_RANGE,
    STEADY_EXCURSION, Plan, default_plan, span_label, phases, plan_phases, steady, _steady,
    trimmed_phases, unmapped_phases, cache_phases, aligned, _write_bytes, _seconds,
)
from .test import Test

READ_QUANTILES = (("p10", 0.10), ("p25", 0.25), ("p50", 0.50), ("p75", 0.75), ("p90", 0.90),
                  ("p99", 0.99), ("p99_9", 0.999))
WRITE_QUANTILES = (("p50", 0.50), ("p90", 0.90), ("p99", 0.99), ("p99_9", 0.999))


def plan_of(phases: list[dict], area: int) -> Plan:
    """The plan a stored run followed (its phases as the store gives them: name, kind,
    spec, totals): the bytes each write phase moved, as shares of `area`."""
    named = {p["name"]: p for p in phases}

    def written(name: str, default: Any, key: str = "write_bytes") -> Any:
        p = named.get(name)
        b = float(p["totals"].get(key) or 0) if p else 0.0
        return b / area if b > 0 else default

    pause, settle, trim = named.get("pause"), named.get("settle"), named.get("trim_spare")
    trimmed = 0.0
    if trim is not None and trim["spec"].get("length"):
        trimmed = float(trim["spec"]["length"]) / area
    return Plan(spans=sum(1 for n in named if n.startswith("ws_")),
                settle_s=float(settle["spec"]["seconds"]) if settle else 0.0,
                qd1_write_share=written("qd1_write", QD1_WRITE_SHARE),
                stretch_share=written("stretch", STRETCH_SHARE),
                pause_s=float(pause["spec"]["seconds"]) if pause else 0.0,
                recovery_share=written("recovery", RECOVERY_SHARE),
                trim_share=trimmed, trimmed_share=written("trimmed", TRIMMED_SHARE),
                unmapped="unmapped_qd1_read" in named, seq_qd1="read_seq_qd1" in named,
                cache_qd1_write_share=written("cache_qd1_write", None),
                cache_rand_write_share=written("cache_rand_write", None),
                steady_after=steady_share(named.get("stretch")),
                read_seq_share=written("read_seq", None, "read_bytes"),
                read_seq_qd1_share=written("read_seq_qd1", None, "read_bytes"),
                before_fill=tuple((n, int(named[n]["totals"]["write_bytes"]))
                                  for n in ("cache_write", "cache_qd1_write", "cache_rand_write")
                                  if n in named and (named[n]["totals"].get("write_bytes") or 0) > 0))


def steady_share(stretch: dict | None) -> float:
    """Where a stored stretch became steady at its final level, as a share of its bytes: the
    start of its first window of STEADY_WINDOW rounds' worth (1 / STEADY_ROUNDS each) that is
    steady (`steady`'s rule) within STEADY_RANGE of its last window's level (1: it never got
    there; 0: no series stored). A plateau at another level does not count."""
    s = (stretch or {}).get("series") or {}
    if not len(s.get("iops", ())):
        return 0.0
    t = np.asarray(s.get("t_s", []), dtype=np.float64)
    secs = np.diff(np.r_[0.0, t]) if t.size else np.ones(len(s["iops"]))
    iops = np.asarray(s["iops"], dtype=np.float64)
    rates = [math.nan if v is None else v for v in by_share(np.cumsum(iops * secs), iops, secs, STEADY_ROUNDS)]
    level = window(rates[-STEADY_WINDOW:]).average
    for k in range(STEADY_WINDOW, STEADY_ROUNDS + 1):
        w = window(rates[k - STEADY_WINDOW:k])
        if _steady(w) and abs(w.average - level) <= STEADY_RANGE * level:
            return (k - STEADY_WINDOW) / STEADY_ROUNDS
    return 1.0


def resolution_of(phases: list[dict], metrics: dict[str, Any]) -> dict[str, float]:
    """The cache's end is known to a segment of the fill: its share of the capacity moves by
    one segment's share at least (relative to the share itself). A QD1 latency quantile is
    known to its histogram's spread around it (curves.quantile_step). The stretch's level and
    the gains over it are known to the spread of its last two tenths."""
    out: dict[str, float] = {}
    # the stretch's level is the mean of its last two tenths: where those still differ (a
    # plateau ending in the first of them), the level moves with where it ends, half their
    # difference over their mean (so do the gains over it)
    tenths = [v for k, v in (metrics.get("stretch_iops_by_share") or {}).items() if k in ("0.9", "1")]
    if len(tenths) == 2 and all(v and v > 0 for v in tenths):
        spread = abs(tenths[0] - tenths[1]) / (tenths[0] + tenths[1])
        out.update({"steady_iops": spread, "recovery_gain": spread, "trimmed_gain": spread})
    fill = next((p for p in phases if p["name"] == "fill"), None)
    share = metrics.get("slc_cache_share")
    if fill is not None and share:
        out["slc_cache_share"] = 1.0 / max(1, len(fill["segments"].get("mbps", ()))) / share
    for prefix, quantiles in (("qd1_read", READ_QUANTILES), ("qd1_write", WRITE_QUANTILES)):
        p = next((p for p in phases if p["name"] == prefix), None)
        hist = p.get("histogram") or {} if p is not None else {}
        if p is None or "edges_us" not in hist:
            continue
        layout = str((p.get("latency") or {}).get("hist_edges", "upper"))
        for name, q in quantiles:
            step = quantile_step(hist["edges_us"], hist["counts"], q, layout)
            if step is not None:
                out[f"{prefix}_{name}_us"] = step
    return out


# ---- analysis ------------------------------------------------------------------------------
def _f(v: Any) -> float | None:
    try:
        x = float(v)
    except (TypeError, ValueError):
        return None
    return x if math.isfinite(x) else None


def _labels(values: list[float | None], n: int) -> dict[str, float | None]:
    """Bins keyed by the share of the phase at their end ("0.25")."""
    return {f"{(k + 1) / n:g}": v for k, v in enumerate(values)}


def _latency(prefix: str, r, quantiles) -> dict[str, float | None]:
    """Mean and quantiles of a phase's latency; the quantiles all from its histogram (the
    same ~3 % buckets on every target), so they are in order."""
    lat = r.latency or {}
    hist = "edges_us" in lat and "counts" in lat
    qs = hist_quantiles(lat["edges_us"], lat["counts"], [q for _, q in quantiles]) if hist else []
    out = {f"{prefix}_mean_us": _f(lat.get("mean_us"))}
    for (name, _), v in zip(quantiles, qs or [None] * len(quantiles)):
        out[f"{prefix}_{name}_us"] = v
    return out


def _head(r, area: float) -> dict[str, float | None] | None:
    """A sequential write's MB/s from its start to each of HEAD_SHARES of the area (bytes), a
    segment slower than the write's median counting at the median: a stall (a mapping-table
    checkpoint, GC) counts in whatever share its segment spans, and a replay's segments span
    other shares; a cache is at the start. None without segments."""
    seg = r.segments
    if not len(seg.get("gb", ())) or area <= 0:
        return None
    gb, t = np.asarray(seg["gb"], dtype=np.float64), np.asarray(seg["t_s"], dtype=np.float64)
    dg, dt = np.diff(np.r_[0.0, gb]), np.diff(np.r_[0.0, t])
    ok = dt > 0
    median = float(np.median(dg[ok] * 1000.0 / dt[ok])) if ok.any() else None
    shares = [s * area / 1e9 / gb[-1] for s in HEAD_SHARES]
    # a share past the write's end (beyond the rounding to 4 KiB; runs stored before the
    # simulator kept a write's last, partial segment end at its last whole one) is not
    # measured: extrapolated, it reads fast
    return {f"{s:g}": v if x <= 1 + 1e-4 else None
            for s, x, v in zip(HEAD_SHARES, shares, average_to(gb, t, shares, median))}


def _cumulative(bins: list[float | None]) -> list[float | None]:
    """The average IOPS from a burst's start to the end of each of its equal shares of bytes
    (the bins' harmonic means: each bin's time is its bytes over its rate): moves smoothly as a
    burst's end moves (a bin that holds the end jumps from the burst's rate to the level), as
    the fill's average speed does where the cache ends."""
    out: list[float | None] = []
    time = 0.0
    for k, b in enumerate(bins):
        if b is None or b <= 0 or (out and out[-1] is None):
            out.append(None)  # a bin without a rate: no average reaches past it
            continue
        time += 1.0 / b
        out.append((k + 1) / time)
    return out


def _burst(r, n: int) -> list[float | None]:
    iops = np.asarray(r.series.get("iops", []), dtype=np.float64)
    if iops.size == 0:
        return [None] * n
    return by_share(_write_bytes(r), iops, _seconds(r), n)


def joined(results, opts: Options) -> Any:
    """The stretch as one phase: its rounds one after another (each round's whole seconds),
    and when it stopped at steady state, the steady window's seconds again until the plan's
    bytes (None without a stretch)."""
    from ..phase import PhaseResult

    rounds = [r for r in results if r.phase.name == "stretch"]
    if len(rounds) <= 1 or not isinstance(opts.own, Plan):
        return rounds[0] if rounds else None
    keys = [k for k in rounds[0].series if k != "t_s"
            and all(k in r.series and len(r.series[k]) == len(r.series["t_s"]) for r in rounds)]

    def columns(r: Any) -> dict[str, np.ndarray]:
        c = {k: np.asarray(r.series[k], dtype=np.float64) for k in keys}
        c["seconds"], c["bytes"] = _seconds(r), np.diff(np.r_[0.0, _write_bytes(r)])
        return c

    parts = [columns(r) for r in rounds]
    planned = max(4096, int(opts.own.stretch_share * (rounds[0].phase.length or 0)) // 4096 * 4096)
    missing = planned - sum(float(r.totals.get("write_bytes") or 0.0) for r in rounds)
    steady_w = {k: np.concatenate([p[k] for p in parts[-STEADY_WINDOW:]]) for k in parts[0]}
    if missing > 0 and steady_w["bytes"].sum() > 0:
        times = math.ceil(missing / steady_w["bytes"].sum())
        n = int(np.searchsorted(np.cumsum(np.tile(steady_w["bytes"], times)), missing)) + 1
        parts.append({k: np.tile(v, times)[:n] for k, v in steady_w.items()})
    cat = {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}
    series = {"t_s": np.cumsum(cat["seconds"]), **{k: cat[k] for k in keys}}
    totals = {k: float(sum(float(r.totals.get(k) or 0.0) for r in rounds))
              for k in ("host_write_bytes", "nand_write_bytes", "write_bytes")}
    return PhaseResult(rounds[0].phase, series, rounds[0].segments, rounds[-1].latency, totals)


def analyze(results, opts: Options) -> dict:
    r = by_name(results)
    if "stretch" in r:
        r["stretch"] = joined(results, opts)
    out: dict[str, Any] = {}
    fill = r.get("fill")
    if fill is not None and len(fill.segments.get("mbps", [])):
        gb, seg, t = fill.segments["gb"], fill.segments["mbps"], fill.segments["t_s"]
        shape = fill_shape(gb, seg)
        area_gb = float(gb[-1])
        tenth = int((np.asarray(gb) <= 0.9 * area_gb).sum())
        out.update({
            "slc_cache_gb": shape.slc_cache_gb,
            "slc_cache_share": None if shape.slc_cache_gb is None else shape.slc_cache_gb / area_gb,
            "peak_mbps": shape.peak_mbps,
            # bytes over time of the segments before the drop: the cached speed, which unlike the
            # fastest segment does not count the write buffer's head start twice on short segments
            "cached_mbps": rate_mbps(gb[:shape.drop_index], t[:shape.drop_index])
            if shape.drop_index else None,
            "post_cache_mbps": rate_mbps(gb, t, shape.drop_index) if shape.drop_index is not None
            else float(fill.totals["mbps"]),
            "last_tenth_mbps": rate_mbps(gb, t, tenth),
            "avg_mbps": float(fill.totals["mbps"]),
            "recovery_peaks": shape.recovery_peaks,
            "fill_mbps_by_share": _labels(rate_by_share(gb, t, FILL_BINS), FILL_BINS),
            "fill_avg_mbps_by_share": _labels(average_by_share(gb, t, FILL_POINTS), FILL_POINTS),
            "fill_head_mbps_by_share": _head(fill, area_gb * 1e9),
        })
    if "cache_write" in r and fill is not None:
        # the battery's first write, to the purged drive: a cache open only while the drive is
        # nearly empty (performance mode) is gone by the fill's start
        head = _head(r["cache_write"], float(fill.phase.length or 0))
        if head is not None:
            out["cache_write_head_mbps_by_share"] = head
    if "unmapped_qd1_read" in r:
        out.update({"unmapped_qd1_read_mean_us": _f(r["unmapped_qd1_read"].latency.get("mean_us")),
                    "unmapped_qd32_read_iops": _f(r["unmapped_qd32_read"].totals.get("iops"))})
    if "cache_seq_read" in r:
        out.update({"cache_seq_read_mbps": _f(r["cache_seq_read"].totals.get("mbps")),
                    "cache_qd1_read_mean_us": _f(r["cache_qd1_read"].latency.get("mean_us")),
                    "cache_qd32_read_iops": _f(r["cache_qd32_read"].totals.get("iops")),
                    "cache_qd1_write_mean_us": _f(r["cache_qd1_write"].latency.get("mean_us")),
                    "cache_rand_write_iops": _f(r["cache_rand_write"].totals.get("iops"))})
    if "qd1_read" in r:
        out.update(_latency("qd1_read", r["qd1_read"], READ_QUANTILES))
    if "read_qd32" in r:
        out["read_qd32_iops"] = _f(r["read_qd32"].totals.get("iops"))
    if "read_seq" in r:
        out["read_seq_mbps"] = _f(r["read_seq"].totals.get("mbps"))
    if "read_seq_qd1" in r:
        out["read_seq_qd1_mbps"] = _f(r["read_seq_qd1"].totals.get("mbps"))
    spans = {n[3:]: _f(p.latency.get("mean_us")) for n, p in r.items() if n.startswith("ws_")}
    if spans or "qd1_read" in r:
        out["qd1_read_mean_us_by_span"] = {**spans, "1": out.get("qd1_read_mean_us")}
    if "qd1_write" in r:
        out.update(_latency("qd1_write", r["qd1_write"], WRITE_QUANTILES))
        out["qd1_write_iops"] = _f(r["qd1_write"].totals.get("iops"))
    if "stretch" in r:
        s = r["stretch"]
        bins = _burst(s, STRETCH_BINS)
        tail = [b for b in bins[-2:] if b is not None]
        iops = np.asarray(s.series.get("iops", []), dtype=np.float64)
        half = iops[iops.size // 2:]
        host = _f(s.totals.get("host_write_bytes"))
        nand = _f(s.totals.get("nand_write_bytes"))
        out.update({
            "stretch_iops_by_share": _labels(bins, STRETCH_BINS),
            "stretch_avg_iops_by_share": _labels(_cumulative(bins), STRETCH_BINS),
            "steady_iops": float(np.mean(tail)) if tail else None,
            "stretch_p1_low_iops": float(np.percentile(half, 1, method="lower")) if half.size else None,
            "stretch_waf": nand / host if host and nand is not None else None,
        })
    if "recovery" in r:
        bins = _burst(r["recovery"], RECOVERY_BINS)
        out["recovery_iops_by_share"] = _labels(bins, RECOVERY_BINS)
        out["recovery_avg_iops_by_share"] = _labels(_cumulative(bins), RECOVERY_BINS)
        steady = out.get("steady_iops")
        out["recovery_gain"] = bins[0] / steady if bins[0] is not None and steady else None
    if "trimmed" in r:
        tr = r["trimmed"]
        bins = _burst(tr, TRIMMED_BINS)
        steady = out.get("steady_iops")
        # the level after the burst the TRIM frees room for (an SLC cache takes the first writes
        # again), as steady_iops is the stretch's last two tenths: GC's level at more spare area
        late = [b for b in bins[-2:] if b is not None]
        level = float(np.mean(late)) if late else None
        host, nand = _f(tr.totals.get("host_write_bytes")), _f(tr.totals.get("nand_write_bytes"))
        out.update({
            "trimmed_iops_by_share": _labels(bins, TRIMMED_BINS),
            # the level with a quarter more spare area over the stretch's: the spare area's figure
            "trimmed_gain": level / steady if level and steady else None,
            "trimmed_waf": nand / host if host and nand is not None else None,
        })
    return out


TEST = Test(
    name="fingerprint",
    title="Fingerprint battery",
    phases=phases,
    analyze=analyze,
    figures=lazy("fingerprint"),
    default_seconds=DEFAULT_SECONDS,
    seconds_help=SECONDS_HELP,
    uses=frozenset({"spare", "interval"}),
    cost=13.4,
    in_review=False,
    replay=plan_of,
    resolution=resolution_of,
    scale_free=True,
    metric_groups=(
        ("unmapped reads", ("unmapped_",)),
        ("cached write start", ("cache_write_head_",)),
        ("cached data", ("cache_",)),
        ("span sweep", ("qd1_read_mean_us_by_span",)),
        ("QD1 reads", ("qd1_read_mean_us", "qd1_read_p")),
        ("sequential reads at QD1", ("read_seq_qd1_",)),
        ("reads at depth", ("read_qd32_", "read_seq_")),
        ("QD1 writes", ("qd1_write_",)),
        ("random-write stretch", ("stretch_", "steady_iops")),
        ("idle recovery", ("recovery_",)),
        ("trimmed stretch", ("trimmed_",)),
        # the fill's start (and the cached region's write's) a group of its own: among the fill
        # curve's 60 points its 3 would weigh next to nothing, and a small cache costs the rest of
        # the fill little
        ("fill start", ("fill_head_",)),
        ("fill curve", ("fill_",)),
        ("fill", ("",)),
    ),
    # the fastest segment is faster when the write buffer takes a larger part of it (the
    # cumulative fill speed carries the peak); the cache in GB grows with the drive (its share
    # does not); the trimmed stretch's first fifths are the SLC cache's burst again (the fill
    # fits the cache), its gain the spare area
    unfitted=("slc_cache_gb", "peak_mbps", "trimmed_iops_by_share", "stretch_iops_by_share",
              "recovery_iops_by_share"),
    summary="the phases a simulated twin is fitted to (ssdlab fit): reads of the purged drive, fill, "
            "QD1 reads and writes, reads at depth, working-set sweep, random-write stretch, idle recovery, "
            "the stretch with a quarter of the area trimmed",
)
