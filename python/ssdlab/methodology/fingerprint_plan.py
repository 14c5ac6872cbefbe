"""The fingerprint battery's phases (fingerprint.py holds what it measures): the default
plan, a stored run's plan on a drive of another size (`ssdlab fit`'s trials), and the phases
either makes, as shares of the written area with seconds as caps."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any, Callable, Generator

import numpy as np

from .. import phase as ph
from ..analysis.pts_steady import window
from ..phase import GB
from .common import Options, area_bytes

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
# a replay's shortest segment. Its segments are a 160th of its area, as a run's are (the run's
# own: a 160th under 160 GB): the cache's end is known to a segment, and `slc_cache_share`'s
# tolerance is one of the run's (resolution_of), so a replay with coarser segments reads the
# share in steps larger than its tolerance, a loss of plateaus and walls that the steps cannot
# descend and the size correction (a ratio at one point) cannot map. The floor was 64 MiB: a
# one-die 16 GB drive's 5 GB trial drive had 74 segments, its cache share read in steps of 2.2
# tolerances (a cache of 0.0648 of the area read 0.0592, one of 0.0617 read 0.0625), and the
# closed loop's twin kept a cache 10 % large from 3 of 5 fit seeds (CrystalDiskMark's random
# 4 KiB figures up to 17 % high, its 1 GiB test file just past the cache). The floor keeps
# the write buffer's head start (up to 8 MiB in the built-in profiles) within half of a first
# segment; it is a smooth ratio between the sizes, which the size correction takes out (on
# that closed loop's drive it corrects `cache_write_head_mbps_by_share[0.00625]`, the first)
MIN_SEGMENT = 16 * 2**20
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
    # where the floor on a segment's size (MIN_SEGMENT, an area under 160 of them) leaves the
    # region short of the last of HEAD_SHARES, the write goes on to the end of the segment
    # holding it: that share is read from a whole segment, not from a last, shorter one
    seg = max(4096, segment_bytes)
    head = min(max(4096, area // 4096 * 4096),
               max(n, math.ceil(HEAD_SHARES[-1] * area / seg - 1e-4) * seg))  # (the rounding to 4 KiB)

    def stop(x: float | None, default: int) -> int:
        return default if x is None else max(4096, min(n, int(x * area) // 4096 * 4096))

    res = residues or {}
    if "cache_write" in res:  # only longer: the last head share stays in a whole segment
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
