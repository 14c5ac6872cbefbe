"""PTS Cross Stimulus Recovery (XSR): purge, then three access groups back to back:
sequential 1024 KiB writes (T1Q32) for 8 hours, random 8 KiB writes for 6 hours, and
sequential 1024 KiB writes again for 8 hours. Reports throughput per minute across the
groups and when each group settled, which for the third group is the recovery from the
random stimulus.

A group settled at the last minute of its first 5-minute window that meets the PTS
steady-state rule and averages within +-10 % of the group's final level (its last 5
minutes, steady too; analysis/pts_steady.py `settle`): a slow ramp passes the rule minute
by minute long before it reaches its level.

ssdlab ends each group also once it has written CAPACITIES x the user capacity (see
docs/methodology-pts.md): a drive rewritten that often has long reached the group's state."""

from __future__ import annotations

from typing import Any, TypedDict

import numpy as np

from ...analysis import pts_steady
from ...figures.pts_plots import Line, Plot, Table
from ...phase import KIB, Phase, PhaseResult
from ..common import Options
from ..test import Test
from . import common as C
from . import figures as F
from .wsat import per_minute

MIB = 1024 * KIB
CAPACITIES = 2
# name: (stimulus, pattern, block size, hours)
GROUPS = {
    "ag1": ("SEQ 1024 KiB W", "seq", MIB, 8.0),
    "ag2": ("RND 8 KiB W", "rand", 8 * KIB, 6.0),
    "ag3": ("SEQ 1024 KiB W", "seq", MIB, 8.0),
}
SEQ_OUTSTANDING = (1, 32)


def outstanding(pattern: str, po: C.PtsOptions) -> tuple[int, int]:
    return SEQ_OUTSTANDING if pattern == "seq" else po.threads_qd


def phases(capacity: int, opts: Options) -> list[Phase]:
    po = C.pts_options(opts)
    out = list(C.precondition(capacity, po, wipc=False))
    for g, (_, pattern, bs, hours) in GROUPS.items():
        t, q = outstanding(pattern, po)
        stop = max(bs, int(CAPACITIES * capacity * po.scale)) // bs * bs
        out.append(C.io(g, po, 0, bs, t, q, pattern=pattern, seconds=max(1.0, hours * 3600 * po.scale),
                        stop_bytes=stop))
    return out


class Group(TypedDict):
    """One access group's figures (its last 5 minutes, and when it settled)."""

    stimulus: str
    minutes: float
    mbps: float | None
    iops: float | None
    steady_minute: float | None  # the settled window's last minute (None: never settled)
    settled_window: list[float] | None  # its first and last minute
    final_steady: bool  # the last 5 minutes meet the steady-state rule
    mbps_by_minute: list[float]
    step_s: int  # the span of each value: 60, or 1 in a group shorter than 5 minutes


def step_of(samples: int) -> int:
    """1-minute values, as the specification records XSR, once a group holds a measurement
    window of them; a shorter group (quick runs, a fast drive done with twice its capacity
    in minutes) is judged per second."""
    return 60 if samples >= pts_steady.WINDOW * 60 else 1


def analyze(results: list[PhaseResult], opts: Options) -> dict:
    po = C.pts_options(opts)
    groups: dict[str, Group] = {}
    for r in results:
        if r.phase.name not in GROUPS:
            continue
        stim = GROUPS[r.phase.name][0]
        step = step_of(len(r.series.get("mbps", [])))
        # whole minutes only: the seconds of a last minute cut short by the byte cap are no
        # 1-minute value (9 s of it would count in the final level as much as a minute)
        whole = {k: np.asarray(r.series.get(k, []))[:len(r.series.get(k, [])) // step * step]
                 for k in ("mbps", "iops")}
        mb = per_minute(whole, "mbps", seconds=step)
        io = per_minute(whole, "iops", seconds=step)
        st = pts_steady.settle(mb)
        w = st.window
        groups[r.phase.name] = {
            "stimulus": stim, "minutes": float(r.totals.get("duration_s", 0.0)) / 60,
            "mbps": float(np.nanmean(mb[-5:])) if mb.size else None,
            "iops": float(np.nanmean(io[-5:])) if io.size else None,
            "steady_minute": w.last_round * step / 60 if w else None,
            "settled_window": [w.first_round * step / 60, w.last_round * step / 60] if w else None,
            "final_steady": bool(st.final is not None and st.final.steady),
            "mbps_by_minute": [float(x) for x in mb], "step_s": step}
    out: dict[str, object] = {"groups": groups}
    if "ag3" in groups and "ag1" in groups and groups["ag1"]["mbps"]:
        out["recovery_ratio"] = (groups["ag3"]["mbps"] or 0.0) / groups["ag1"]["mbps"]
        out["recovery_minutes"] = groups["ag3"]["steady_minute"]
    out["conditions"] = C.conditions(po, wipc=False, groups={g: v[0] for g, v in GROUPS.items()},
                                     hours=[v[3] * po.scale for v in GROUPS.values()],
                                     capacities_per_group=CAPACITIES * po.scale)
    return out


# -- the report page -------------------------------------------------------------------
def _settled(v: dict) -> str:
    w = v.get("settled_window")
    if w:
        if v.get("step_s") == 1:
            return f"seconds {w[0] * 60:.0f}-{w[1] * 60:.0f} (under 5 minutes long: per second)"
        return f"minutes {w[0]:g}-{w[1]:g}"
    return f"not settled: its last 5 {C.span_name(v)} are not steady" if not v.get("final_steady") else "-"


def page(key: str, run: Any, d: Any) -> tuple:
    m = d.metrics or {}
    groups = m.get("groups") or {}
    po = C.PtsOptions(segment=(m.get("conditions") or {}).get("segment", "client"))
    stim = "; ".join(f"{g.upper()}: {s}, T{outstanding(p, po)[0]}Q{outstanding(p, po)[1]}, {h:g} h "
                     f"or {CAPACITIES}x the user capacity"
                     for g, (s, p, _, h) in GROUPS.items()) + "; no WIPC"
    out: list = []
    if groups:
        out.append(Table(f"table-{key}-groups", f"{run.test}: access groups\n{d.label}",
                         ["group", "stimulus", "minutes", "MB/s (final level)", "IOPS (final level)",
                          "settled (steady at its final level)"],
                         [[g, v.get("stimulus"), v.get("minutes"), v.get("mbps"), v.get("iops"),
                           _settled(v)] for g, v in groups.items()],
                         "final level: the average of the group's last 5 minutes; settled: the first "
                         "5 minutes that meet the steady-state rule and average within 10 % of it "
                         "(a group under 5 minutes long: its seconds instead)"))
        lines, start = [], 0.0
        for g, v in groups.items():
            ys = v.get("mbps_by_minute") or []
            step = float(v.get("step_s") or 60) / 60  # minutes a value spans
            end = float(v.get("minutes") or len(ys) * step)
            # each value at the end of its span, the last (a partial span) at the group's end
            xs = [start + min((i + 1) * step, end) for i in range(len(ys))]
            lines.append(Line(f"{g}: {v.get('stimulus')}", xs, ys, "lines"))
            if v.get("settled_window"):
                a, b = v["settled_window"]
                lines.append(Line(f"{g} settled", [start + a, start + b], [v["mbps"], v["mbps"]],
                                  "lines", "dash"))
            start += end
        out.append(Plot(f"fig-{key}-time", f"{run.test}: MB/s per minute across the access groups\n{d.label}",
                        "time (minutes)", "MB/s", lines))
    return stim, out, [(f"settled, {g}", _settled(v)) for g, v in groups.items()]


TEST = Test(uses=frozenset(), name="pts-xsr", options=C.RUN_OPTIONS, title="SNIA PTS: Cross Stimulus Recovery (XSR)", phases=phases, analyze=analyze,
            figures=F.per_drive("SNIA PTS: Cross Stimulus Recovery (XSR)", page), cost=1.6, in_review=False,
            summary="SNIA PTS Cross Stimulus Recovery: sequential, random, sequential writes")
