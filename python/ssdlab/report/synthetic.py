"""Synthetic runs with the shapes real ones have (fill with an SLC-cache drop and a
recovery peak, consistency burst-then-band, working-set cliff, clustered quick repeats).
For tests and for previewing the report without a simulator:
    python -m ssdlab.report.synthetic OUT_DIR
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from ..figures.model import ReportDrive, ReportPhase, ReportRun

GB = 1e9


def fill_drive(label: str, cap_gb: int, peak: float, native: float, cache_gb: float,
               seed: int = 1, drive: str | None = None) -> ReportDrive:
    rng = np.random.default_rng(seed)
    gb = np.arange(1, cap_gb + 1, dtype=float)
    mbps = np.where(gb <= cache_gb, peak, native) * rng.normal(1.0, 0.03, cap_gb)
    mid = cap_gb // 2
    mbps[mid:mid + 2] = peak * 0.95  # a brief recovery when the firmware frees cache
    seg_t = np.cumsum(1000.0 / mbps)
    t = np.arange(1.0, np.ceil(seg_t[-1]) + 1)
    rate = np.interp(t, seg_t, mbps)  # per-second MB/s
    host = rate * 1e6
    written = np.cumsum(host) / GB
    in_cache = written <= cache_gb
    slc_cap = np.full_like(t, cache_gb * GB)
    slc_used = np.minimum(written, cache_gb) * GB
    waf = np.where(in_cache, 1.0, 1.0 + 0.15 * rng.random(len(t)))
    free = np.maximum(2000 * (1 - written / cap_gb), 40.0)
    ph = ReportPhase(
        name="fill", series={"t_s": t, "iops": host / 131072, "mbps": rate,
                             "host_write_bytes": host, "waf": waf, "slc_used_bytes": slc_used,
                             "slc_capacity_bytes": slc_cap, "free_blocks": free},
        segments={"gb": gb, "mbps": mbps, "t_s": seg_t}, totals={"mbps": float(mbps.mean())})
    metrics = {"slc_cache_gb": float(cache_gb), "peak_mbps": float(mbps.max()),
               "post_cache_mbps": native, "last16_mbps": float(mbps[-16:].mean()),
               "avg_mbps": float(mbps.mean()), "fill_seconds": float(seg_t[-1]),
               "recovery_peaks": 1}
    return ReportDrive(drive or f"sim:{label.lower().replace(' ', '-')}", label, metrics,
                       [ReportPhase("purge", kind="purge"), ph])


def consistency_drive(label: str, burst: float, band: float, spread: float, seconds: int = 2000,
                      seed: int = 2, drive: str | None = None, stalls: tuple[int, ...] = (),
                      missing: tuple[int, ...] = ()) -> ReportDrive:
    """`stalls`: seconds at 0 IOPS (the drive stopped); `missing`: seconds without a sample
    (NaN), which the report must show as gaps, not as 0."""
    rng = np.random.default_rng(seed)
    t = np.arange(1.0, seconds + 1)
    drop = 0.06 * seconds  # free blocks run out
    iops = np.where(t < drop, burst, band * rng.lognormal(0.0, spread, seconds))
    iops[t >= drop] = np.clip(iops[t >= drop], band * 0.2, band * 2.5)
    iops[np.asarray(stalls, dtype=int) - 1] = 0.0
    iops[np.asarray(missing, dtype=int) - 1] = np.nan
    waf = np.where(t < drop, 1.0, 2.5 + 0.3 * rng.random(seconds))
    free = np.where(t < drop, 1500 * (1 - t / drop) + 60, 60 + 5 * rng.random(seconds))
    steady = iops[(t >= 0.7 * seconds) & np.isfinite(iops)]
    ph = ReportPhase(
        name="rand_write", series={"t_s": t, "iops": iops, "waf": waf, "free_blocks": free,
                                   "slc_used_bytes": np.zeros(seconds),
                                   "slc_capacity_bytes": np.full(seconds, 4e9)})
    metrics = {"steady_iops": float(steady.mean()), "steady_stdev": float(steady.std()),
               "p1_low_iops": float(np.percentile(steady, 1)), "min_iops": float(steady.min()),
               "steady_start_s": float(drop + 60), "waf": float(np.nanmean(waf[t >= drop])),
               "steady_waf": float(np.nanmean(waf[-600:]))}
    seq = ReportPhase("seq_fill", series={"t_s": t[:300], "iops": np.full(300, 3000.0)},
                      segments={"gb": np.arange(1.0, 257), "mbps": np.full(256, 400.0)})
    return ReportDrive(drive or f"sim:{label.lower().replace(' ', '-')}", label, metrics,
                       [ReportPhase("purge", kind="purge"), seq, ph])


def working_set_drive(label: str, flat: float, covered_gb: float | None) -> ReportDrive:
    sizes = [1, 2, 4, 8, 16, 32, 64, 128, 256]
    iops = {str(g): flat if covered_gb is None or g <= covered_gb else flat * 0.55 for g in sizes}
    lat = {str(g): 32e6 / v for g, v in iops.items()}
    return ReportDrive(f"sim:{label.lower().replace(' ', '-')}", label,
                       {"iops_by_gb": iops, "lat_p99_us_by_gb": lat})


def quick_drive(label: str, scale: float, seed: int = 3) -> ReportDrive:
    rng = np.random.default_rng(seed)
    base = {"cdm_seq1m_q8t1_read_mbps": 3400, "cdm_seq1m_q8t1_write_mbps": 2900,
            "cdm_rnd4k_q32t1_read_mbps": 450, "cdm_rnd4k_q1t1_read_mbps": 55,
            "asssd_seq_write_mbps": 2500, "asssd_4k_read_mbps": 50,
            "asssd_4k64_read_mbps": 1400, "asssd_score_total": 5200}
    repeats = {}
    for k, v in base.items():
        # two of three runs cluster, one sits apart: the report must show that
        repeats[k] = [v * scale * f for f in (1.0, 1.01, 0.9 + 0.02 * rng.random())]
    metrics = {}
    for k, r in repeats.items():  # as quick.py reports: CrystalDiskMark its best run
        metrics[k] = float(max(r) if k.startswith("cdm_") else np.mean(r))
        metrics[f"{k}_mean"] = float(np.mean(r))
        metrics[f"{k}_stdev"] = float(np.std(r, ddof=1))
    return ReportDrive(f"sim:{label.lower().replace(' ', '-')}", label, metrics, repeats=repeats)


def trim_drive(label: str, cap_gb: int, peak: float, native: float, cache_gb: float,
               recovered: float = 0.97) -> ReportDrive:
    clean = fill_drive(label, cap_gb, peak, native, cache_gb, seed=8).phases[-1]
    after = fill_drive(label, cap_gb, peak * recovered, native * recovered, cache_gb,
                       seed=9).phases[-1]
    clean.name, after.name = "clean", "after_trim"
    c, a = float(clean.segments["mbps"].mean()), float(after.segments["mbps"].mean())
    return ReportDrive(f"sim:{label.lower().replace(' ', '-')}", label,
                       {"clean_mbps": c, "after_trim_mbps": a, "recovery_ratio": a / c},
                       [ReportPhase("purge", kind="purge"), clean,
                        ReportPhase("torture", series={"iops": np.full(10, 5e3)}),
                        ReportPhase("trim", kind="trim"), after])


def idle_drive(label: str, figures: tuple[float, ...]) -> ReportDrive:
    names = ["clean_read_mbps", "clean_write_mbps", "full_read_mbps", "full_write_mbps",
             "idle_read_mbps", "idle_write_mbps", "purge_write_mbps", "trim_write_mbps",
             "read_written_mbps"]
    return ReportDrive(f"sim:{label.lower().replace(' ', '-')}", label,
                       dict(zip(names, figures)))


def demo_runs() -> list[ReportRun]:
    tags = {"testbed": "sim", "methodology_version": "2"}
    return [
        ReportRun(1, "fill", [fill_drive("XG6 256 GB", 256, 1700, 400, 20, seed=1),
                              fill_drive("XG6 1024 GB", 1024, 2150, 1600, 20, seed=4)], tags),
        ReportRun(2, "consistency", [consistency_drive("MX100 256 GB", 60000, 6000, 0.6),
                                     # a drive that stalls now and then (and a lost sample)
                                     consistency_drive("M550 256 GB", 70000, 6500, 0.5, seed=5,
                                                       stalls=(300, 1500, 1501, 1720),
                                                       missing=(1800,))],
                  tags, spare_pct=0.0),
        ReportRun(3, "consistency", [consistency_drive("MX100 256 GB", 60000, 25000, 0.25,
                                                       seed=6)], tags, spare_pct=25.0),
        ReportRun(4, "working-set", [working_set_drive("TLC 256 GB DRAM", 310000, None),
                                     working_set_drive("SN520 256 GB HMB", 250000, 32)], tags),
        ReportRun(5, "quick", [quick_drive("XG6 256 GB", 0.8), quick_drive("XG6 1024 GB", 1.0,
                                                                            seed=7)], tags),
        ReportRun(6, "trim", [trim_drive("XG6 256 GB", 256, 1700, 400, 20)], tags),
        # the HD Tach figures of methodology.md
        ReportRun(7, "idle", [idle_drive("Intel 510 250 GB", (370.8, 300.4, 371.1, 221.0, 339.4,
                                                              274.3, 315.75, 308.86)),
                              idle_drive("Crucial m4 256 GB", (391.2, 233.8, 177.1, 253.6,
                                                               156.2, 253.9, 283.12, 279.36))],
                  tags),
    ]


if __name__ == "__main__":
    from . import build_runs_report

    print(build_runs_report(demo_runs(), Path(sys.argv[1] if len(sys.argv) > 1 else "report-demo")))
