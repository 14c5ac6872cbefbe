"""PTS Write Saturation (WSAT): purge, then continuous 4 KiB random writes over the active
range (client T2Q16, enterprise T4Q32) for 24 hours or until 4x the user capacity has been
written, whichever comes first. Reports IOPS per minute against time, against the total
GB written (TGBW) and against drive fills.

Client runs leave the 25 % of the LBAs outside the active range unwritten since the
purge: the drive holds no data there, so it works as extra spare area and the random-write
level WSAT ends at is higher than on a drive written in full. The IOPS, HIR and DIRTH
tests precondition and test the same active range, so their 4 KiB write IOPS compare with
it; the report says so."""

from __future__ import annotations

from typing import Any

import numpy as np

from ...figures.pts_plots import Line, Plot
from ...phase import KIB, Phase, PhaseResult
from ..common import Options
from ..test import Test
from . import common as C
from . import figures as F

HOURS = 24.0
CAPACITIES = 4


def phases(capacity: int, opts: Options) -> list[Phase]:
    po = C.pts_options(opts)
    t, q = po.threads_qd
    return [*list(C.precondition(capacity, po, wipc=False)),
            C.io("wsat", po, 0, 4 * KIB, t, q, seconds=max(1.0, HOURS * 3600 * po.scale),
                 stop_bytes=max(4 * KIB, int(CAPACITIES * capacity * po.scale)) // (4 * KIB) * 4 * KIB)]


def per_minute(series: dict, key: str, agg=np.nanmean, seconds: int = 60) -> np.ndarray:
    y = np.asarray(series.get(key, []), dtype=np.float64)
    n = int(np.ceil(y.size / seconds)) if y.size else 0
    return np.array([agg(y[i * seconds:(i + 1) * seconds]) for i in range(n)])


def spare_note(po: C.PtsOptions) -> str:
    if po.active_fraction >= 1:
        return "every LBA is in the active range: no unwritten LBAs act as spare area"
    return (f"the {100 - round(po.active_fraction * 100)} % of the LBAs outside the active range "
            "are never written after the purge and act as extra spare area; the IOPS, HIR and "
            "DIRTH tests precondition and test the same active range, so their 4 KiB write IOPS "
            "compare with WSAT's final level")


def analyze(results: list[PhaseResult], opts: Options) -> dict:
    po = C.pts_options(opts)
    r = next(x for x in results if x.phase.name == "wsat")
    s = r.series
    step = 60 if len(s.get("iops", [])) >= 120 else 1  # a shortened run: per second
    iops = per_minute(s, "iops", seconds=step)
    wkey = "write_mbps" if "write_mbps" in s else "mbps"
    gb = np.cumsum(np.nan_to_num(per_minute(s, wkey, np.nansum, step))) / 1e3
    t, q = po.threads_qd
    written = float(r.totals.get("write_bytes", gb[-1] * 1e9 if gb.size else 0.0))
    if gb.size and gb[-1] > 0 and written > 0:  # a last, partial second counts in full in
        gb = gb * (written / 1e9 / gb[-1])    # the rates: the totals' bytes are exact
    user = r.phase.stop_bytes / (CAPACITIES * po.scale) if r.phase.stop_bytes else None
    return {"iops_first_minute": float(iops[0]) if iops.size else None,
            "iops_last_5": float(np.nanmean(iops[-5:])) if iops.size else None,
            "duration_s": float(r.totals.get("duration_s", 0.0)),
            "tgbw": written / 1e9, "drive_fills": written / user if user else None,
            "step_s": step,
            # each value at the end of its span; the last, cut short by the byte cap, where it ended
            "minutes": [min(float(i + 1) * step, float(len(s.get("iops", [])))) / 60 for i in range(iops.size)],
            "iops_by_minute": [float(x) for x in iops],
            "tgbw_by_minute": [float(x) for x in gb],
            "fills_by_minute": [float(x) * 1e9 / user for x in gb] if user else [],
            "conditions": C.conditions(po, wipc=False, threads=t, queue_depth=q, pattern="random",
                                       block_size_kib=4, read_pct=0, hours=HOURS * po.scale,
                                       capacities=CAPACITIES * po.scale,
                                       unwritten_lbas=spare_note(po))}


# -- the report page -------------------------------------------------------------------
def page(key: str, run: Any, d: Any) -> tuple:
    m = d.metrics or {}
    t, iops = m.get("minutes") or [], m.get("iops_by_minute") or []
    cond = m.get("conditions") or {}
    stim = (f"RND 4 KiB W, T{cond.get('threads', '-')}Q{cond.get('queue_depth', '-')}, "
            f"{cond.get('hours', HOURS):g} h or {cond.get('capacities', CAPACITIES):g}x the user "
            "capacity, whichever comes first; no steady-state rule")
    if not t:
        return stim, []
    note = str(cond.get("unwritten_lbas") or "")
    last = m.get("iops_last_5")
    span = C.span_name(m)  # a run under 2 minutes: per second
    cap = f"last 5 {span}: {last:,.0f} IOPS; " if last is not None else ""
    unit = "minutes"
    out = [Plot(f"fig-{key}-time", f"{run.test}: 4 KiB random write IOPS vs time\n{d.label}",
                f"time ({unit})", "IOPS", [Line("IOPS", t, iops, "lines")], caption=cap + note),
           Plot(f"fig-{key}-time-log", f"{run.test}: IOPS vs time, log time axis\n{d.label}",
                f"time ({unit}, log scale)", "IOPS", [Line("IOPS", t, iops, "lines")], log_x=True),
           Plot(f"fig-{key}-tgbw", f"{run.test}: IOPS vs total GB written\n{d.label}",
                "total GB written (TGBW)", "IOPS",
                [Line("IOPS", m.get("tgbw_by_minute") or [], iops, "lines")])]
    fills = m.get("fills_by_minute") or []
    if fills:
        out.append(Plot(f"fig-{key}-fills", f"{run.test}: IOPS vs drive fills\n{d.label}",
                        "drive fills (user capacities written)", "IOPS",
                        [Line("IOPS", fills, iops, "lines")],
                        caption=f"drive fills: {m.get('drive_fills', 0):.2f}"))
    return stim, out


TEST = Test(uses=frozenset(), name="pts-wsat", options=C.RUN_OPTIONS, title="SNIA PTS: Write Saturation (WSAT)", phases=phases, analyze=analyze,
            figures=F.per_drive("SNIA PTS: Write Saturation (WSAT)", page), cost=6.0, in_review=False,
            summary="SNIA PTS Write Saturation: 4 KiB random write IOPS vs time and TGBW")
