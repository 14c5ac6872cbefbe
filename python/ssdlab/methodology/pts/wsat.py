"""PTS Write Saturation (WSAT): purge, then continuous 4 KiB random writes over the active
range (client T2Q16, enterprise T4Q32) for 24 hours or until 4x the user capacity has been
written, whichever comes first. Reports IOPS per minute against time and against the total
GB written (TGBW)."""

from __future__ import annotations

import numpy as np

from ...phase import KIB, Phase, PhaseResult
from ..common import Options
from ..test import Test
from . import common as C
from .figures import wsat_figures

HOURS = 24.0
CAPACITIES = 4
OUTSTANDING = {"client": (2, 16), "enterprise": (4, 32)}


def phases(capacity: int, opts: Options) -> list[Phase]:
    po = C.pts_options(opts)
    t, q = OUTSTANDING[po.segment]
    return [*list(C.precondition(capacity, po, wipc=False)),
            C.io("wsat", po, 0, 4 * KIB, t, q, seconds=max(1.0, HOURS * 3600 * po.scale),
                 stop_bytes=max(4 * KIB, int(CAPACITIES * capacity * po.scale)) // (4 * KIB) * 4 * KIB)]


def per_minute(series: dict, key: str, agg=np.nanmean, seconds: int = 60) -> np.ndarray:
    y = np.asarray(series.get(key, []), dtype=np.float64)
    n = int(np.ceil(y.size / seconds)) if y.size else 0
    return np.array([agg(y[i * seconds:(i + 1) * seconds]) for i in range(n)])


def analyze(results: list[PhaseResult], opts: Options) -> dict:
    po = C.pts_options(opts)
    r = next(x for x in results if x.phase.name == "wsat")
    s = r.series
    step = 60 if len(s.get("iops", [])) >= 120 else 1  # a shortened run: per second
    iops = per_minute(s, "iops", seconds=step)
    wkey = "write_mbps" if "write_mbps" in s else "mbps"
    gb = np.cumsum(np.nan_to_num(per_minute(s, wkey, np.nansum, step))) / 1e3
    t, q = OUTSTANDING[po.segment]
    written = float(r.totals.get("write_bytes", gb[-1] * 1e9 if gb.size else 0.0))
    fills = written / (r.phase.stop_bytes / (CAPACITIES * po.scale)) if r.phase.stop_bytes else None
    return {"iops_first_minute": float(iops[0]) if iops.size else None,
            "iops_last_5": float(np.nanmean(iops[-5:])) if iops.size else None,
            "duration_s": float(r.totals.get("duration_s", 0.0)),
            "tgbw": written / 1e9, "drive_fills": fills,
            "step_s": step,
            "minutes": [float(i + 1) * step / 60 for i in range(iops.size)],
            "iops_by_minute": [float(x) for x in iops],
            "tgbw_by_minute": [float(x) for x in gb],
            "conditions": C.conditions(po, threads=t, queue_depth=q, pattern="random",
                                       block_size_kib=4, read_pct=0, hours=HOURS * po.scale,
                                       capacities=CAPACITIES * po.scale)}


TEST = Test(name="pts-wsat", title="SNIA PTS: Write Saturation (WSAT)", phases=phases, analyze=analyze, figures=wsat_figures,
            cost=10.0, in_review=False, summary="SNIA PTS Write Saturation: 4 KiB random write IOPS vs time and TGBW")
