"""Whole-drive fill: purge, then one sequential pass of 128 KiB writes at QD32 over the
user area, recording MB/s per 1 GB written (per 1/MIN_SEGMENTS of the area on a drive
smaller than MIN_SEGMENTS GB: 1 GB segments would give a 4 GB device four points, too few
to tell a cache from a slowdown at the end). The curve ends with the pass's last, partial
segment (an area that is not a whole number of segments), at its own speed over its own
size, so it and the rates read from it cover the whole area."""

from __future__ import annotations

from .. import phase as ph
from ..analysis import fill_shape, rate_mbps
from ..analysis.segments import completed, rate_last
from ..analysis.slc import MIN_SPAN
from ..phase import GB
from .common import Options, area_bytes, by_name, mbps, opt_total
from ..figures import lazy
from .test import Test

DEFAULT_SECONDS = None
SECONDS_HELP = "not used"
MIN_SEGMENTS = 32
MB = 10**6
LAST_GB = 16  # last16_mbps: the review's average of the last 16 GB


def segment_bytes(area: int) -> int:
    """1 GB, or 1/MIN_SEGMENTS of a smaller area in whole MB, rounded down so that
    MIN_SEGMENTS whole segments fit (8 GB: 249 MB; 250 MB made 31 and left the pass's last
    0.25 GB off the curve)."""
    return GB if area >= MIN_SEGMENTS * GB else max(MB, area // MIN_SEGMENTS // MB * MB)


def phases(capacity: int, opts: Options) -> list[ph.Phase]:
    n = area_bytes(capacity, opts)
    return [ph.purge(), ph.seq_write("fill", offset=0, length=n, stop_bytes=n,
                                     segment_bytes=segment_bytes(n))]


def cached_throughout(r) -> bool:
    """The SLC cache took (nearly) the whole pass: a simulated drive counts its NAND writes by
    mode, and under MIN_SPAN of the pass went native (folds aside), too little to measure a
    post-cache speed (a cache larger than the area). A real drive cannot say: False."""
    t = r.totals
    slc, native = t.get("nand_slc_write_bytes"), t.get("nand_native_write_bytes")
    if slc is None or native is None or not float(slc) > 0:
        return False
    direct = float(native) - float(t.get("slc_fold_bytes") or 0.0)
    return direct < MIN_SPAN * float(t.get("write_bytes") or 0.0)


def post_cache(r, gb, t, drop: int | None, avg: float) -> float | None:
    if drop is not None:
        return rate_mbps(gb, t, drop)
    # no drop: the whole pass ran at the sustained speed, unless it never left the cache
    return None if cached_throughout(r) else avg


def curve(r):
    """The pass's segments (gb, mbps, t_s) to its end: with its last, partial segment."""
    s, tot = r.segments, r.totals
    return completed(s["gb"], s["mbps"], s["t_s"], tot.get("write_bytes"), tot.get("duration_s"))


def analyze(results, opts: Options) -> dict:
    r = by_name(results)["fill"]
    gb, seg_mbps, t = curve(r)
    shape = fill_shape(gb, seg_mbps)
    avg = mbps(r)
    return {
        "slc_cache_gb": shape.slc_cache_gb,
        "peak_mbps": shape.peak_mbps,
        "post_cache_mbps": post_cache(r, gb, t, shape.drop_index, avg),
        # an area under 16 GB has no last 16 GB: the whole pass would pass for it, cache and all
        "last16_mbps": rate_last(gb, t, LAST_GB) if gb[-1] >= LAST_GB else None,
        "avg_mbps": avg,
        "fill_seconds": float(r.totals["duration_s"]),
        "recovery_peaks": shape.recovery_peaks,
        "mbps_per_watt": opt_total(r, "mbps_per_watt"),
    }


TEST = Test(
    name="fill",
    title="Whole-drive fill",
    phases=phases,
    analyze=analyze,
    figures=lazy("fill"),
    default_seconds=DEFAULT_SECONDS,
    seconds_help=SECONDS_HELP,
    cost=2.4,
    keeps_segments=True,
)
