"""The fingerprint battery: the shortest sequence of phases that shows what a drive's
simulated twin needs (`ssdlab fit`, docs/fit.md), each phase aimed at a few parameters:

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
  is not (docs/fit.md: where GC's own speed bounds both levels, not always).

The phases are given as shares of the written area (bytes written / area) with seconds as
caps (a real drive's time); `plan_of` reads those shares back from a stored run, so `ssdlab
fit` can run the same battery on a smaller simulated drive with the same dies (the same
shares of its area) and compare like with like. Every metric is therefore a rate, a
latency or a share: none grows with the drive's size."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any, Callable, Generator

import numpy as np

from .. import phase as ph
from ..analysis import fill_shape, rate_mbps
from ..analysis.curves import average_by_share, average_to, by_share, hist_quantiles, quantile_step, rate_by_share
from ..analysis.pts_steady import window
from ..figures import lazy
from ..phase import GB
from .common import Options, area_bytes, by_name
from .test import Test

DEFAULT_SECONDS = 1800
SECONDS_HELP = ("cap on the random-write stretch (it stops at 2 drive writes or this, whichever first) and on "
                "the trimmed stretch (a quarter of the area, 300 s at most)")
SETTLE_S = 300.0  # as working-set: every profile's post-fill folding is done by then
QD1_READ_S = 10.0
DEPTH_S = 2.0  # QD32 random reads, sequential reads: a rate settles in well under a second
UNMAPPED_S = 1.0  # each read phase of the purged area (no flash: its rate settles at once)
SPAN_S = 3.0  # each working-set span
QD1_WRITE_SHARE, QD1_WRITE_S = 0.01, 10.0
CACHE_SHARE, CACHE_S = 0.02, 3.0  # the region written first (into the SLC cache) and read back
STRETCH_SHARE = 2.0  # drive writes
PAUSE_S = 600.0
RECOVERY_SHARE, RECOVERY_S = 0.10, 120.0
TRIM_SHARE = 0.25  # the share of the area at its end TRIMmed before the trimmed stretch
TRIMMED_SHARE, TRIMMED_S = 0.25, 300.0  # the trimmed stretch: bytes (of the area), cap (or --seconds)
FILL_BINS, STRETCH_BINS, RECOVERY_BINS, TRIMMED_BINS = 20, 10, 5, 5
FILL_POINTS = 40  # the fill's average speed from the start to each 2.5 %: smooth where the cache ends
TRIAL_SEGMENTS = 160  # a replay's fill segments: enough for FILL_BINS at any drive size
FILL_SEGMENTS = TRIAL_SEGMENTS  # at least this many fill segments (so a replay's first holds one)
# the fill's average speed from the start to 1, 2 and 3 of a replay's segments (0.625 %, 1.25 %,
# 1.875 %; each share holds a segment of any run and any replay): a cache of a few tenths of a
# percent of the drive, which the 2.5 % points average away
HEAD_SHARES = tuple(k / TRIAL_SEGMENTS for k in (1, 2, 3))
MIN_SEGMENT = 64 * 2**20  # a replay's shortest: the write buffer's head start stays a few % of one
# where the fill's pages land on the dies depends on what the writes before it left half done
# (the write buffer's partial stripe): a replay's writes before the fill move as many bytes as
# the run's, modulo this (a multiple of any stripe: dies x planes x a program unit of 16 KiB
# pages, 3 of them at once for TLC, up to 256 die-planes); the fill's QD1 sequential reads of a
# 256 GB MLC drive at 54 GB came out 347 MB/s, 423 with the run's residues as at full size
WRITE_ALIGN = 3 * 4 * 2**20
SEQ_BLOCK = 128 * 1024  # the sequential writes' requests (ph.seq_write's default)
# a trial's stretch (`ssdlab fit`) in rounds of 1/25 of its bytes, stopped at steady state: a
# window of 5 rounds (a fifth of the stretch, the span steady_iops averages) whose range is
# within twice steady_iops's tolerance and whose least-squares excursion within half of it
# (the PTS rule, with the limits of the figure it feeds); the rest of the stretch is the
# steady window's seconds again (the level is stationary). Not before 4/5 of the stretch:
# the level settles by a quarter of it in every class, but what comes after the stretch does
# not: the random writes go on mixing the fill's sequential blocks (the share of the area
# not yet rewritten falls as exp(-drive writes)), and the trimmed stretch's gain reads that
# mix (stopped at 2/5 its gain came out up to 7 % high, at 4/5 within 0.8 %: another seed 0.6 %)
STEADY_ROUNDS, STEADY_WINDOW, STEADY_FIRST = 25, 5, 20
STEADY_RANGE, STEADY_EXCURSION = 0.10, 0.025
READ_QUANTILES = (("p10", 0.10), ("p25", 0.25), ("p50", 0.50), ("p75", 0.75), ("p90", 0.90),
                  ("p99", 0.99), ("p99_9", 0.999))
WRITE_QUANTILES = (("p50", 0.50), ("p90", 0.90), ("p99", 0.99), ("p99_9", 0.999))


@dataclass(frozen=True)
class Plan:
    """How much each phase does, as shares of the area; `caps`: stop at the seconds caps
    too (a real drive's time; a scaled copy of a run sets False and follows the bytes)."""

    spans: int  # working-set spans area / 2^k, k = spans .. 1
    qd1_write_share: float = QD1_WRITE_SHARE
    stretch_share: float = STRETCH_SHARE
    pause_s: float = PAUSE_S
    recovery_share: float = RECOVERY_SHARE
    stretch_s: float = DEFAULT_SECONDS
    caps: bool = True
    settle_s: float = SETTLE_S  # cap on the idle after the fill (0: none)
    fill_segments: int | None = None  # None: the fill test's segments (1 GB)
    # the bytes the cached region's QD1 and random writes moved, as shares of the area (None:
    # the battery's own stops; a run's replay writes what the run wrote before its time caps,
    # so the fill starts with the SLC cache in the state the run left it in)
    cache_qd1_write_share: float | None = None
    cache_rand_write_share: float | None = None
    trim_share: float = TRIM_SHARE  # 0: no trimmed stretch (a run of a battery without it)
    trimmed_share: float = TRIMMED_SHARE
    until_steady: bool = False  # the stretch in rounds, stopped at steady state (STEADY_*)
    # the share of the stretch before which its rounds may not stop: where the run it replays
    # became steady (a drive whose SLC cache absorbs writes at a plateau for 0.85 of the
    # stretch before GC sets in would look steady on the plateau)
    steady_after: float = 0.0
    # the shares of the area the sequential reads at depth and at QD1 read (None: the
    # battery's DEPTH_S): a replay reads what the run read, where the run's seconds would
    # cover 17 times the share of a drive 17 times smaller
    read_seq_share: float | None = None
    read_seq_qd1_share: float | None = None
    unmapped: bool = True  # reads of the purged area (False: a run of a battery without them)
    seq_qd1: bool = True  # QD1 sequential reads of the fill (False: a run of a battery without them)
    # the bytes the run's writes before the fill moved (phase name, bytes): a replay on a drive
    # of another size writes as many modulo WRITE_ALIGN
    before_fill: tuple[tuple[str, int], ...] = ()

    def scaled(self, time_scale: float, until_steady: bool = True) -> "Plan":
        """The same battery on a drive of `time_scale` times the blocks: idle work (folding,
        GC) shrinks with the blocks, so the settle's cap and the pause do too; the stretch
        stops at steady state unless told otherwise."""
        # at the run's own size its own segments (what the evidence was measured in)
        return replace(self, pause_s=self.pause_s * time_scale, settle_s=self.settle_s * time_scale, caps=False,
                       fill_segments=self.fill_segments if time_scale == 1.0 else TRIAL_SEGMENTS,
                       until_steady=until_steady)


def default_plan(area: int, opts: Options) -> Plan:
    """Spans down to about 1 GB (at least one: half the area); `--seconds` caps the stretch,
    `--interval` sets the pause (and caps the settle)."""
    spans = max(1, int(math.floor(math.log2(area / GB) + 0.01))) if area >= 2 * GB else 1
    pause = PAUSE_S if opts.interval is None else float(opts.interval)
    return Plan(spans=spans, stretch_s=opts.secs(DEFAULT_SECONDS), pause_s=pause,
                settle_s=min(SETTLE_S, pause))


def span_label(k: int) -> str:
    return "1" if k == 0 else f"1/{2 ** k}"


def phases(capacity: int, opts: Options) -> Generator[ph.Phase, Any, None]:
    """The battery on the area; a Plan as the test's own options (`ssdlab fit`'s trials: a
    stored run's shares on a smaller drive) replaces the default one."""
    area = area_bytes(capacity, opts)
    return plan_phases(area, opts.own if isinstance(opts.own, Plan) else default_plan(area, opts))


def plan_phases(area: int, plan: Plan) -> Generator[ph.Phase, Any, None]:
    """The phases in order; a generator, as the stretch of a plan `until_steady` depends on
    the rounds it has run (the runner sends each result back)."""
    def cap(s: float) -> dict[str, Any]:
        return {"stop_seconds": s} if plan.caps else {}

    def share(x: float) -> int:
        return max(4096, int(x * area) // 4096 * 4096)

    def reach(x: float | None, room: int) -> dict[str, Any]:
        return dict(stop_bytes=room, stop_seconds=DEPTH_S) if x is None else dict(stop_bytes=min(room, share(x)))

    whole = dict(offset=0, length=area)
    half = area // 2 // (128 * 1024) * (128 * 1024)
    # 1 GB segments, finer on a drive under 160 GB (the cache's end is known to a segment)
    seg = max(MIN_SEGMENT, area // plan.fill_segments // 4096 * 4096) if plan.fill_segments \
        else min(GB, area // FILL_SEGMENTS // 4096 * 4096)
    spans = [ph.rand_io(f"ws_{span_label(k)}", read_pct=100, queue_depth=1, offset=0,
                        length=max(4096, area // 2 ** k // 4096 * 4096), stop_seconds=SPAN_S)
             for k in range(plan.spans, 0, -1)]
    before = [
        ph.purge(),
        *(unmapped_phases(area) if plan.unmapped else []),
        *cache_phases(area, plan.caps, plan.cache_qd1_write_share, plan.cache_rand_write_share, seg,
                      dict(plan.before_fill)),
        ph.seq_write("fill", **whole, stop_bytes=area, segment_bytes=max(4096, seg)),
        *([ph.idle(plan.settle_s, name="settle", until_quiet=True)] if plan.settle_s > 0 else []),
        ph.rand_io("qd1_read", read_pct=100, queue_depth=1, **whole, stop_seconds=QD1_READ_S),
        ph.rand_io("read_qd32", read_pct=100, queue_depth=32, **whole, stop_seconds=DEPTH_S),
        ph.seq_read("read_seq", **whole, **reach(plan.read_seq_share, area)),
        *([ph.seq_read("read_seq_qd1", queue_depth=1, offset=half, length=area - half,
                       **reach(plan.read_seq_qd1_share, area - half))] if plan.seq_qd1 else []),
        *spans,
        ph.rand_io("qd1_write", read_pct=0, queue_depth=1, **whole,
                   stop_bytes=share(plan.qd1_write_share), **cap(QD1_WRITE_S)),
    ]
    after = [
        *([ph.idle(plan.pause_s, name="pause")] if plan.pause_s > 0 else []),
        ph.rand_io("recovery", read_pct=0, **whole, stop_bytes=share(plan.recovery_share),
                   **cap(RECOVERY_S)),
        *trimmed_phases(area, plan, cap, share),
    ]
    for p in before:
        yield p
    stretch = share(plan.stretch_share)
    if not plan.until_steady:
        yield ph.rand_io("stretch", read_pct=0, **whole, stop_bytes=stretch, **cap(plan.stretch_s))
    else:
        rounds: list[Any] = []
        step = max(4096, stretch // STEADY_ROUNDS // 4096 * 4096)
        for k in range(STEADY_ROUNDS):
            last = stretch - step * (STEADY_ROUNDS - 1)
            rounds.append((yield ph.rand_io("stretch", read_pct=0, **whole,
                                            stop_bytes=step if k < STEADY_ROUNDS - 1 else max(4096, last))))
            if k + 1 >= max(STEADY_FIRST, plan.steady_after * STEADY_ROUNDS + STEADY_WINDOW) \
                    and steady(rounds[-STEADY_WINDOW:]):
                break
    for p in after:
        yield p


def _rate(r: Any) -> float:
    """A round's write rate (bytes over seconds of its whole-second samples)."""
    if r is None:
        return math.nan
    b, t = _write_bytes(r), _seconds(r)
    return float(b[-1] / t.sum()) if b.size and t.sum() > 0 else math.nan


def steady(rounds: list[Any]) -> bool:
    """The stretch's last STEADY_WINDOW rounds are at steady state (STEADY_*)."""
    if len(rounds) < STEADY_WINDOW:
        return False
    return _steady(window([_rate(r) for r in rounds]))


def _steady(w: Any) -> bool:
    return bool(w.average > 0 and w.data_excursion <= STEADY_RANGE * w.average
                and w.slope_excursion <= STEADY_EXCURSION * w.average)


def trimmed_phases(area: int, plan: Plan, cap: Callable[[float], dict[str, Any]],
                   share: Callable[[float], int]) -> list[ph.Phase]:
    """The area's last `trim_share` TRIMmed, then random writes over the rest: the same drive
    with that much more spare area (none when the plan has no trim)."""
    keep = int((1.0 - plan.trim_share) * area) // 4096 * 4096
    if plan.trim_share <= 0 or keep <= 0 or keep >= area:
        return []
    return [ph.trim("trim_spare", offset=keep, length=area - keep),
            ph.rand_io("trimmed", read_pct=0, offset=0, length=keep, stop_bytes=share(plan.trimmed_share),
                       **cap(min(TRIMMED_S, plan.stretch_s)))]


def unmapped_phases(area: int) -> list[ph.Phase]:
    """4 KiB random reads of the purged area at QD1 and QD32: no LBA is mapped, so no page is
    read (a DRAM-less drive's table-page directory says so too): the host's round trip, the
    command's firmware time and the link."""
    whole = dict(offset=0, length=area)
    return [ph.rand_io("unmapped_qd1_read", read_pct=100, queue_depth=1, **whole, stop_seconds=UNMAPPED_S),
            ph.rand_io("unmapped_qd32_read", read_pct=100, queue_depth=32, **whole, stop_seconds=UNMAPPED_S)]


def cache_phases(area: int, caps: bool = True, qd1_write_share: float | None = None,
                 rand_write_share: float | None = None, segment_bytes: int = GB,
                 residues: dict[str, int] | None = None) -> list[ph.Phase]:
    """Data that sits in the SLC cache (a CrystalDiskMark test file on a purged drive): written
    sequentially (in the fill's segments: the battery's first write, its start the cache of a
    drive that opens it only while nearly empty), read back sequentially (the channels and the
    link, at the SLC read time), at QD1 (the SLC read time) and at QD32, and written at random
    at QD32 (the cache's write path and buffer, at QD1 its latency); the fill then overwrites
    it. The writes' shares of the area, when given, replace their own stops (a 40th of the
    region, the region); `residues` (a run's bytes of each write) set their bytes modulo
    WRITE_ALIGN (aligned())."""
    n = max(4096, int(CACHE_SHARE * area) // 4096 * 4096)
    region = dict(offset=0, length=n)
    cap: dict[str, Any] = {"stop_seconds": CACHE_S} if caps else {}
    # a write's segments are whole ones (a last, partial one is not kept): where the floor on a
    # segment's size (MIN_SEGMENT, an area under 160 of them) leaves the region short of the
    # last of HEAD_SHARES, the write goes on to the end of the segment holding it
    seg = max(4096, segment_bytes)
    head = min(max(4096, area // 4096 * 4096),
               max(n, math.ceil(HEAD_SHARES[-1] * area / seg - 1e-4) * seg))  # (the rounding to 4 KiB)

    def stop(x: float | None, default: int) -> int:
        return default if x is None else max(4096, min(n, int(x * area) // 4096 * 4096))

    res = residues or {}
    if "cache_write" in res:  # only longer: a last, partial segment is not kept (nor measured)
        longer = aligned(head, res["cache_write"], up=True, block=SEQ_BLOCK)
        head = longer if longer <= area else head
    qd1 = aligned(stop(qd1_write_share, max(4096, n // 40 // 4096 * 4096)), res.get("cache_qd1_write"))
    rand = aligned(stop(rand_write_share, n), res.get("cache_rand_write"))
    return [ph.seq_write("cache_write", offset=0, length=head, stop_bytes=head, segment_bytes=seg,
                         block_size=SEQ_BLOCK),
            ph.seq_read("cache_seq_read", **region, stop_bytes=n, **cap),
            ph.rand_io("cache_qd1_read", read_pct=100, queue_depth=1, **region, stop_seconds=CACHE_S),
            ph.rand_io("cache_qd32_read", read_pct=100, **region, stop_seconds=DEPTH_S),
            ph.rand_io("cache_qd1_write", read_pct=0, queue_depth=1, **region, stop_bytes=qd1, **cap),
            ph.rand_io("cache_rand_write", read_pct=0, **region, stop_bytes=rand, **cap)]


def aligned(planned: int, run: int | None, up: bool = False, block: int = 4096) -> int:
    """`planned` bytes (a stop: whole `block`s of it are written) moved to the nearest (`up`:
    the next) count that writes as many bytes as the run modulo WRITE_ALIGN (a block at
    least); as planned without a run's count. At the run's own size, the run's bytes."""
    if run is None:
        return planned
    d = (run - planned // block * block) % WRITE_ALIGN
    if not up and d > WRITE_ALIGN // 2 and planned + d - WRITE_ALIGN >= block:
        d -= WRITE_ALIGN
    return planned + d


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
    known to its histogram's spread around it (curves.quantile_step)."""
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
    # a share past the write's whole segments (beyond the rounding to 4 KiB) is not measured:
    # extrapolated, it reads fast
    return {f"{s:g}": v if x <= 1 + 1e-4 else None
            for s, x, v in zip(HEAD_SHARES, shares, average_to(gb, t, shares, median))}


def _write_bytes(r) -> np.ndarray:
    """Cumulative bytes written at each second's end (the simulator counts them; a real
    drive's per-second IOPS times the 4 KiB block)."""
    s = r.series
    if "host_write_bytes" in s and len(s["host_write_bytes"]) == len(s["iops"]):
        return np.cumsum(np.asarray(s["host_write_bytes"], dtype=np.float64))
    return np.cumsum(np.asarray(s["iops"], dtype=np.float64) * _seconds(r) * r.phase.block_size)


def _seconds(r) -> np.ndarray:
    t = np.asarray(r.series.get("t_s", []), dtype=np.float64)
    return np.diff(np.r_[0.0, t]) if t.size else np.ones(len(r.series.get("iops", [])))


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
    cost=5.0,
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
