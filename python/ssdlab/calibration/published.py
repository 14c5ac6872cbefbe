"""The published figures of methodology.md ("Published figures to calibrate simulated profiles
against"), each measured with the test `ssdlab run` uses."""

from __future__ import annotations

import math

import numpy as np

from .figure import CONS25, FILL, IDLE, LOWQD, QUICK, TRIM60, WSET, Ctx, Figure, metric, of, ratio


def slc_share(c: Ctx, drive: str | None = None) -> float | None:
    v = c.m(FILL, "slc_cache_gb", drive)
    return None if v is None else v / c.capacity_gb(drive)


def drop_index(c: Ctx) -> int | None:
    from ..analysis.slc import fill_shape
    gb, v = c.seg()
    return fill_shape(gb, v).drop_index


def recovery_positions(c: Ctx) -> list[float]:
    """Where recovery peaks rise (share of the fill), with the fill test's own rule."""
    from ..analysis.slc import RECOVERY, fill_shape
    gb, v = c.seg()
    shape = fill_shape(gb, v)
    if shape.drop_index is None:
        return []
    after = v[shape.drop_index:]
    level = np.median(after) + RECOVERY * (shape.peak_mbps - np.median(after))
    above = after >= level
    rises = np.nonzero(above[1:] & ~above[:-1])[0] + 1 + shape.drop_index
    return [float(gb[i] / gb[-1]) for i in rises]


def mean_recovery_position(c: Ctx) -> float | None:
    p = recovery_positions(c)
    return float(np.mean(p)) if p else None


def post_drop_window(c: Ctx, gb_after: float) -> np.ndarray:
    """Segment speeds in the first `gb_after` GB after the sustained drop, without the
    drop segment itself (it holds the end of the cache: part cached, part native)."""
    gb, v = c.seg()
    d = drop_index(c)
    if d is None:
        return np.empty(0)
    start = gb[d]
    return v[d + 1:][gb[d + 1:] <= start + gb_after]


def swing_max(c: Ctx) -> float | None:
    w = post_drop_window(c, 20.0)
    return float(w.max()) if w.size else None


def swing_min(c: Ctx) -> float | None:
    w = post_drop_window(c, 20.0)
    return float(w.min()) if w.size else None


def settled_after_swings(c: Ctx) -> float | None:
    """Median segment speed from 20 GB after the drop to the end (the level it settles at)."""
    gb, v = c.seg()
    d = drop_index(c)
    if d is None:
        return None
    start = gb[d - 1] if d > 0 else 0.0
    rest = v[gb > start + 20.0]
    return float(np.median(rest)) if rest.size else None


def right_after_cache(c: Ctx) -> float | None:
    """Median segment speed over the first 16 GB after the sustained drop: the level a
    review calls "after the cache" when the curve degrades further later."""
    w = post_drop_window(c, 16.0)
    return float(np.median(w)) if w.size else None


def max_after_drop(c: Ctx) -> float | None:
    gb, v = c.seg()
    d = drop_index(c)
    return float(v[d:].max()) if d is not None else None



# ---- the published figures (methodology.md) ------------------------------------------------
def _fill_figs() -> list[Figure]:
    F: list[Figure] = []
    peak = metric(FILL, "peak_mbps")
    cache = metric(FILL, "slc_cache_gb")
    post = metric(FILL, "post_cache_mbps")
    last16 = metric(FILL, "last16_mbps")
    peaks = metric(FILL, "recovery_peaks")
    H_PEAK = "fill: peak_mbps (fastest 1 GB segment)"
    H_CACHE = "fill: slc_cache_gb (GB before the first sustained drop)"
    H_POST = "fill: post_cache_mbps (bytes/time from the drop to the end)"
    H_SHARE = "fill: slc_cache_gb / user capacity"
    H_PEAKS = "fill: recovery_peaks"

    # Toshiba XG6
    F += [
        Figure("xg6-256", "peak", FILL, peak, value=1700, how=H_PEAK, source="peaks about 1700 MB/s"),
        Figure("xg6-256", "SLC cache", FILL, cache, value=20, unit="GB", how=H_CACHE,
               source="falls after about 20 GB"),
        Figure("xg6-256", "post-cache", FILL, post, value=400, how=H_POST, source="steady ~400 MB/s"),
        Figure("xg6-1024", "peak", FILL, peak, lo=2100, hi=3500, how=H_PEAK,
               source="peaks above 2100 MB/s (upper end: PCIe 3.0 x4 ceiling)"),
        Figure("xg6-1024", "SLC cache", FILL, cache, value=20, unit="GB", how=H_CACHE,
               source="SLC cache still only ~20 GB"),
        Figure("xg6-1024", "post-cache", FILL, post, lo=1600, hi=2100, how=H_POST,
               source="sustained writes above 1600 MB/s (below the 2100 MB/s peak)"),
    ]
    # Samsung PM981a
    for d, v in (("pm981a-256", 400), ("pm981a-512", 800)):
        F += [
            Figure(d, "post-cache", FILL, post, value=v, how=H_POST, source=f"after the cache ~{v} MB/s"),
            Figure(d, "recovery peaks", FILL, peaks, value=1, unit="count", how=H_PEAKS,
                   source="briefly recovers to peak speed (once)"),
            Figure(d, "recovery position", FILL, mean_recovery_position, lo=0.35, hi=0.65,
                   unit="share of fill",
                   how="fill: where the recovery peaks rise, as a share of the fill (mean)",
                   source="about halfway through the fill"),
        ]
    # WD SN520
    F += [
        Figure("sn520-128", "peak", FILL, peak, lo=750, hi=860, how=H_PEAK,
               source="peaks just over 750 MB/s"),
        Figure("sn520-128", "swing high", FILL, swing_max, value=350,
               how="fill: fastest segment in the 20 GB after the drop segment",
               source="swings between 200 and 350 MB/s for ~20 GB"),
        Figure("sn520-128", "swing low", FILL, swing_min, value=200,
               how="fill: slowest segment in the 20 GB after the drop segment",
               source="swings between 200 and 350 MB/s for ~20 GB"),
        Figure("sn520-128", "settled", FILL, settled_after_swings, lo=200, hi=240,
               how="fill: median segment from 20 GB after the drop to the end",
               source="then settles just above 200 MB/s"),
        Figure("sn520-256", "peak", FILL, peak, lo=1100, hi=1300, how=H_PEAK,
               source="peak above 1100 MB/s"),
        Figure("sn520-256", "SLC share vs 128 GB", FILL,
               ratio(slc_share, of("sn520-128", slc_share)), value=1.0, unit="ratio",
               how=H_SHARE + ", over the 128 GB's", source="same SLC share of capacity",
               needs=(("sn520-128", FILL),)),
    ]
    # the SN520 256 GB's retail twin, WD Blue SN500 250 GB: the same fill test (128 KiB QD32,
    # 1 GB segments) in AnandTech's review
    twin = ("AnandTech, WD Blue SN500 250 GB review (2019), the retail drive 'derived from' the PC SN520, "
            "whole-drive fill: ")
    F += [
        Figure("sn520-256", "SLC cache (twin's fill)", FILL, cache, lo=2, hi=4, unit="GB",
               how=H_CACHE + "; the review reads 1 GB segments, so 3 GB is 2-4",
               source=twin + "'SLC write cache lasts for a mere 3GB'"),
        Figure("sn520-256", "post-cache (twin's fill)", FILL, post, value=432, how=H_POST,
               source=twin + "'sustained sequential write speed of about 432MB/s'"),
    ]
    # Samsung PM991
    F += [
        Figure("pm991-128", "SLC share", FILL, slc_share, value=0.08, unit="of capacity",
               how=H_SHARE, source="SLC cache ~8 % of capacity"),
        Figure("pm991-128", "post-cache", FILL, post, value=160, how=H_POST,
               source="falls to ~160 MB/s after the cache"),
        Figure("pm991-128", "recovery peaks", FILL, peaks, lo=2, hi=4, unit="count", how=H_PEAKS,
               source="a few short peaks midway"),
        Figure("pm991-128", "recovery height", FILL, max_after_drop, value=600,
               how="fill: fastest segment after the drop", source="peaks back up near 600 MB/s"),
        Figure("pm991-256", "SLC share", FILL, slc_share, value=0.08, unit="of capacity",
               how=H_SHARE, source="SLC cache ~8 % of capacity"),
        Figure("pm991-256", "peak gain vs 128 GB", FILL,
               lambda c: (c.m(FILL, "peak_mbps") or math.nan) - (c.m(FILL, "peak_mbps", "pm991-128") or math.nan),
               value=50, how="fill: peak_mbps minus the 128 GB's",
               source="cached writes only ~50 MB/s faster", needs=(("pm991-128", FILL),)),
        Figure("pm991-256", "native gain vs 128 GB", FILL,
               ratio(post, of("pm991-128", post)), lo=1.0, hi=1.2, unit="ratio",
               how="fill: post_cache_mbps over the 128 GB's",
               source="native writes barely faster", needs=(("pm991-128", FILL),)),
        Figure("pm991-256", "recovery peaks", FILL, peaks, value=6, unit="count", how=H_PEAKS,
               source="about six recovery peaks during the fill"),
    ]
    # Kioxia BG4
    for d, share, pk, pc in (("bg4-128", 0.12, 750, 200), ("bg4-256", 0.10, 1200, 300)):
        F += [
            Figure(d, "SLC share", FILL, slc_share, value=share, unit="of capacity", how=H_SHARE,
                   source=f"SLC cache ~{share:.0%} of capacity"),
            Figure(d, "peak", FILL, peak, value=pk, how=H_PEAK, source=f"peaks ~{pk} MB/s"),
            Figure(d, "after the cache", FILL, right_after_cache, value=pc,
                   how="fill: median segment of the 16 GB after the drop segment",
                   source=f"after the cache ~{pc} MB/s, then degrading"),
            Figure(d, "last 16 GB", FILL, last16, lo=0, hi=90,
                   how="fill: last16_mbps", source="degrading as the drive fills, to well below 100 MB/s"),
        ]
    # Samsung 870 QVO (SATA)
    stable = ratio(last16, post)
    for d, gb in (("870qvo-1000", 42), ("870qvo-4000", 78)):
        F += [
            Figure(d, "peak", FILL, peak, value=550, how=H_PEAK, source="SATA ceiling ~550 MB/s"),
            Figure(d, "SLC cache", FILL, cache, value=gb, unit="GB", how=H_CACHE,
                   source=f"SLC cache runs out at {gb} GB"),
            Figure(d, "stable to the end", FILL, stable, lo=0.85, hi=1.15, unit="ratio",
                   how="fill: last16_mbps / post_cache_mbps", source="stays stable to the end"),
        ]
    F += [
        Figure("870qvo-1000", "post-cache", FILL, post, lo=70, hi=150, how=H_POST,
               source="about hard-drive speed, on the order of 100 MB/s"),
        Figure("870qvo-4000", "post-cache vs 1 TB", FILL,
               ratio(post, of("870qvo-1000", post)), lo=1.2, hi=None, unit="ratio",
               how="fill: post_cache_mbps over the 1 TB's", source="the 4 TB model stays faster",
               needs=(("870qvo-1000", FILL),)),
    ]
    # read plateau of high-end PCIe 3.0 drives
    for d in ("xg6-1024", "pm981a-512"):
        F.append(Figure(d, "sequential read", QUICK, metric(QUICK, "cdm_seq1m_q8t1_read_mbps"),
                        lo=2600, hi=2700, how="quick: cdm_seq1m_q8t1_read_mbps (1 repeat, 1 s)",
                        source="high-end reads plateau at 2600-2700 MB/s"))
    return F


def _consistency_figs() -> list[Figure]:
    H = "consistency --spare 25 (2000 s): "
    return [
        Figure("mx100-256", "25% spare: band", CONS25, metric(CONS25, "steady_iops"), value=25000,
               unit="IOPS", how=H + "steady_iops", source="thick band at about 25 000 IOPS"),
        Figure("mx100-256", "25% spare: dips", CONS25, metric(CONS25, "min_iops"), value=5000,
               unit="IOPS", how=H + "min_iops (slowest second in steady state)",
               source="dips down to about 5 000 IOPS"),
        Figure("mx100-256", "like the M550", CONS25,
               ratio(metric(CONS25, "steady_iops"), of("m550-256", metric(CONS25, "steady_iops"))),
               value=1.0, unit="ratio", how=H + "steady_iops over the M550 256 GB's",
               source="behaves like the M550 256 GB", needs=(("m550-256", CONS25),)),
        Figure("m550-256", "25% spare: band", CONS25, metric(CONS25, "steady_iops"), value=25000,
               unit="IOPS", how=H + "steady_iops",
               source="the MX100 (about 25 000 IOPS) behaves like the M550"),
    ]


HDTACH = {
    "510-250": dict(clean_read=370.8, clean_write=300.4, full_read=371.1, full_write=221.0,
                    idle_read=339.4, idle_write=274.3, purge_write=315.75, trim_write=308.86),
    "m4-256": dict(clean_read=391.2, clean_write=233.8, full_read=177.1, full_write=253.6,
                   idle_read=156.2, idle_write=253.9, purge_write=283.12, trim_write=279.36),
}


def _idle_figs() -> list[Figure]:
    F = []
    for d, vals in HDTACH.items():
        for k, v in vals.items():
            label = k.replace("_", " ")
            src = ("HD Tach average, " + label) if not k.startswith(("purge", "trim")) else (
                "sequential write after purge" if k == "purge_write" else "sequential write after fill + TRIM")
            F.append(Figure(d, label, IDLE, metric(IDLE, f"{k}_mbps"), value=v,
                            how=f"idle (30 min): {k}_mbps", source=src))
    return F




# The pass after TRIM of a drive with a performance mode: fast while at most half of the LBAs
# are mapped, slower while the drive reorganizes its data, close to the start once done.
def _pass(c: Ctx) -> tuple[np.ndarray, np.ndarray, float]:
    """(share of the pass at each segment's end, MB/s, median MB/s of the first 45 %)."""
    gb, v = c.seg(run=TRIM60)
    share = gb / gb[-1]
    return share, v, float(np.median(v[share <= 0.45]))


def pass_drop_position(c: Ctx) -> float | None:
    """Share of the pass where the speed first falls below 60 % of the first half's."""
    share, v, fast = _pass(c)
    slow = np.nonzero(v < 0.6 * fast)[0]
    return float(share[slow[0]]) if slow.size else None


def pass_slowest_ratio(c: Ctx) -> float | None:
    share, v, fast = _pass(c)
    return float(v.min() / fast) if fast > 0 else None


def pass_end_ratio(c: Ctx) -> float | None:
    """Median speed of the last 20 % of the pass over the first half's."""
    share, v, fast = _pass(c)
    return float(np.median(v[share > 0.8]) / fast) if fast > 0 else None


def _performance_mode_figs() -> list[Figure]:
    H = "trim (60 min torture, as the review): the sequential pass after TRIM, "
    S = ("AnandTech, OCZ Vertex 460 240 GB review (January 2014), TRIM validation: once half of the "
         "LBAs have been written, all data has to be reorganized, ")
    d = "vertex460-240"
    return [
        Figure(d, "TRIM works", TRIM60, metric(TRIM60, "recovery_ratio"), lo=0.85, unit="ratio",
               how="trim: after_trim_mbps / clean_mbps", source="TRIM works (the pass matches a clean drive's)"),
        Figure(d, "pass drops at half the LBAs", TRIM60, pass_drop_position, lo=0.48, hi=0.56, unit="share",
               how=H + "share of the pass where the speed first falls below 60 % of the first 45 %'s median",
               source=S + "write speed drops (performance mode ends at half of the LBAs)"),
        Figure(d, "pass slows while reorganizing", TRIM60, pass_slowest_ratio, hi=0.6, unit="ratio",
               how=H + "slowest GB over the first 45 %'s median", source=S + "write speed drops during the pass"),
        Figure(d, "pass recovers once reorganized", TRIM60, pass_end_ratio, lo=0.8, unit="ratio",
               how=H + "median of the last 20 % over the first 45 %'s",
               source=S + "and it recovers close to the original speed once the reorganization is over"),
    ]


def _qos_figs() -> list[Figure]:
    """QD1 4 KiB random-read QoS of filled 3D TLC drives, for the generic 3D TLC classes."""
    src = ("AnandTech, enterprise SSD roundup (2018), 4kB Random Read QD1 QoS, 64-layer 3D TLC drives: "
           "\"The 8TB P4510 has a 99.99th percentile latency that's just over 2.5 times its average, and "
           "all the other flash-based SSDs are better than that\" "
           "(https://www.anandtech.com/show/13704/enterprise-ssd-roundup-intel-samsung-memblaze/5)")
    tail = ratio(metric(WSET, "qd1_read_p99_99_us"), metric(WSET, "qd1_read_mean_us"))
    return [Figure(d, "QD1 read p99.99 / mean", WSET, tail, hi=2.6, unit="ratio",
                   how="working-set: qd1_read_p99_99_us / qd1_read_mean_us (QD1 4 KiB random reads over the "
                       "filled, settled drive)", source=src)
            for d in ("tlc-256", "tlc-pcie4-1000")]


def _low_qd_figs() -> list[Figure]:
    """4 KiB random writes at QD3 over 8 GB of a clean drive, 3 minutes (AnandTech's desktop
    Iometer test of 2011-2014)."""
    src = ("AnandTech, The Intel SSD 510 Review (March 2011), Iometer - 4KB Random Write, 8GB LBA Space, "
           "QD=3 (3 minutes, average MB/s): ")
    url = " (https://www.anandtech.com/show/4202/the-intel-ssd-510-review/4)"
    how = "low-qd-write: {} (4 KiB QD3 random writes over the first 8 GB of the purged drive, 180 s)"
    return [
        Figure("510-250", "QD3 random write", LOWQD, metric(LOWQD, "mbps"), value=49.7, how=how.format("mbps"),
               source=src + "\"The 510's random write performance is only marginally better than the X25-M G2 "
                            "at 49.7MB/s\"" + url),
        Figure("510-250", "QD3 random write: worst latency", LOWQD, metric(LOWQD, "max_latency_ms"), hi=400,
               unit="ms", how=how.format("max_latency_ms"),
               source=src + "\"the 510 keeps the worst case latency to below 400ms\"" + url),
    ]


def _qd1_mean_figs() -> list[Figure]:
    """QD1 4 KiB mean latencies as AS SSD's 4K test reports them (MB/s of 4 KiB at QD1:
    4096 B / MB/s is the mean latency), from a sibling capacity with the same controller and
    dies (QD1 latency does not depend on the die count)."""
    src = ("ComputerBase, Crucial MX100 SSD im Test (June 2014), the 512 GB model (same Marvell 88SS9189 "
           "and 128 Gbit 16 nm MLC dies), AS SSD on the empty drive (\"Neuzustand (ohne Daten)\"): ")
    url = " (https://computerbase.de/2014-06/crucial-mx100-ssd-test-512-gb/2)"
    how = "quick: asssd_4k_{}_mbps (AS SSD 4K: 4 KiB random {}s at QD1 over its 1 GB file)"
    return [
        Figure("mx100-256", "QD1 4K read (AS SSD, 512 GB model)", QUICK, metric(QUICK, "asssd_4k_read_mbps"),
               value=30.52, how=how.format("read", "read"),
               source=src + "\"4K Lesen | 30,52 MB/s\" (a mean QD1 read latency of 134 us)" + url),
        Figure("mx100-256", "QD1 4K write (AS SSD, 512 GB model)", QUICK, metric(QUICK, "asssd_4k_write_mbps"),
               value=107.84, how=how.format("write", "write"),
               source=src + "\"4K Schreiben | 107,84 MB/s\" (a mean QD1 write latency of 38 us)" + url),
    ]


def figures() -> list[Figure]:
    return (_fill_figs() + _consistency_figs() + _idle_figs() + _performance_mode_figs() + _qos_figs()
            + _low_qd_figs() + _qd1_mean_figs())
