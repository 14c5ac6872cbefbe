"""PTS Host Idle Recovery (HIR): purge, preconditioning, 4 KiB random writes in rounds of a
minute until steady (the baseline); then for wait states of 5, 10, 15, 25 and 50 s: 360
repetitions of (5 s of 4 KiB random writes, wait state idle), each followed by 1800 s of
continuous writes that return the drive to its steady baseline. Reports the IOPS of the
write bursts per wait state against the steady-state IOPS: how much the idle time lets
the drive recover."""

from __future__ import annotations

from typing import Any

from ... import phase as ph
from ...figures.pts_plots import Line, Plot, Table
from ...phase import KIB, PhaseResult
from ..common import Options
from ..test import Test
from . import common as C
from . import figures as F

WAITS = (5, 10, 15, 25, 50)
BURST_S = 5.0
REPEATS = 360
BASELINE_S = 1800.0
STEADY = "w4k"
TRACKING = "RND 4 KiB 0/100 IOPS"


def burst_s(po: C.PtsOptions) -> float:
    """A burst's length: 5 s, or a step's when steps are shorter (--round-seconds, --quick)."""
    return min(BURST_S, po.round_seconds)


def phases(capacity: int, opts: Options) -> C.Steps:
    po = C.pts_options(opts)
    t, q = po.threads_qd
    yield from C.precondition(capacity, po)
    yield from C.rounds(po, lambda n: [C.io(C.round_name(n, STEADY), po, 0, 4 * KIB, t, q)],
                        lambda got: {TRACKING: C.iops(got[STEADY])})
    reps = max(1, round(REPEATS * po.scale))
    burst = burst_s(po)
    for w in WAITS:
        for i in range(reps):
            yield C.io(f"ws{w}/burst{i:03d}", po, 0, 4 * KIB, t, q, seconds=burst)
            yield ph.idle(float(w) * po.wait_scale, name=f"ws{w}/idle{i:03d}")
        yield C.io(f"ws{w}/baseline", po, 0, 4 * KIB, t, q, seconds=max(burst, BASELINE_S * po.scale))


def analyze(results: list[PhaseResult], opts: Options) -> dict:
    po = C.pts_options(opts)
    rounds = C.complete_rounds(results, [STEADY])
    values = [C.iops(r[STEADY]) for r in rounds.values()]
    out = C.steady_metrics({TRACKING: values}, po.max_rounds)
    ss = out.get("window_average") or None
    waits: dict = {}
    tl_t, tl_y, clock, baselines = [], [], 0.0, []
    for r in results:
        name = r.phase.name
        if not name.startswith("ws"):
            continue
        w, _, part = name.partition("/")
        d = float(r.totals.get("duration_s", 0.0) or r.phase.seconds or 0.0)
        rec = waits.setdefault(w[2:], {"bursts": 0, "iops_sum": 0.0})
        if part.startswith("burst"):
            rec["bursts"] += 1
            rec["iops_sum"] += C.iops(r)
            tl_t.append(clock)
            tl_y.append(C.iops(r))
        elif part == "baseline":
            rec["baseline_iops"] = C.iops(r)
            baselines.append({"wait_s": w[2:], "t0": clock, "t1": clock + d, "iops": C.iops(r)})
        clock += d
    for rec in waits.values():
        n = rec.pop("bursts")
        s = rec.pop("iops_sum")
        rec.update(bursts=n, iops=s / n if n else None)
        rec["gain"] = rec["iops"] / ss if rec["iops"] and ss else None
    out["wait_states"] = waits
    out["timeline_s"] = tl_t
    out["timeline_iops"] = tl_y
    out["baselines"] = baselines
    t, q = po.threads_qd
    out["conditions"] = C.conditions(po, threads=t, queue_depth=q, pattern="random",
                                     block_size_kib=4, read_pct=0, wait_states_s=[w * po.wait_scale for w in WAITS],
                                     burst_s=burst_s(po), repetitions=max(1, round(REPEATS * po.scale)),
                                     baseline_s=BASELINE_S * po.scale)
    out["steady_iops"] = ss
    out["max_gain"] = max((v["gain"] for v in waits.values() if v.get("gain")), default=None)
    return out


# -- the report page -------------------------------------------------------------------
def page(key: str, run: Any, d: Any) -> tuple:
    m = d.metrics or {}
    conv = F.by_label(d, [STEADY], C.iops)
    out: list = [F.convergence(key, run.test, d, {TRACKING: conv[STEADY]}, "IOPS"),
                 *F.window_plots(key, run.test, d, lambda name: "IOPS")]
    t, y = m.get("timeline_s") or [], m.get("timeline_iops") or []
    cond = m.get("conditions") or {}
    burst = float(cond.get("burst_s", BURST_S))
    scale = float(cond.get("wait_scale", 1.0))  # the idle of wait state "5" was 5 x this
    if t:
        base = m.get("baselines") or []
        end = max([*t, *(b["t1"] for b in base)])
        lines = [Line(f"{burst:g} s write bursts", t, y, "markers")]
        ss = m.get("steady_iops")
        if ss:
            lines.append(Line("steady state before the wait states", [0, end], [ss, ss], "lines", "dash"))
        if base:  # one line, broken between the wait states
            nan = float("nan")
            lines.append(Line("continuous writes after each wait state (return to baseline)",
                              [x for b in base for x in (b["t0"], b["t1"], nan)],
                              [x for b in base for x in (b["iops"], b["iops"], nan)], "lines"))
        out.append(Plot(f"fig-{key}-timeline", f"{run.test}: IOPS of each write burst vs time\n{d.label}",
                        "time since the wait states began (s)", "IOPS", lines,
                        caption="each marker one burst; the solid lines the continuous writes "
                                "after each wait state, the dashed line the steady state before"))
    ws = m.get("wait_states") or {}
    if ws:
        out.insert(0, Table(f"table-{key}-waits", f"{run.test}: IOPS by wait state\n{d.label}",
                            ["wait state (s)", "bursts", "burst IOPS", "baseline IOPS after",
                             "x steady-state IOPS"],
                            [[f"{float(k) * scale:g}", v.get("bursts"), v.get("iops"), v.get("baseline_iops"), v.get("gain")]
                             for k, v in ws.items()]))
    stim = (f"RND 4 KiB W, T{cond.get('threads', '-')}Q{cond.get('queue_depth', '-')}: rounds to steady "
            f"state, then wait states {', '.join(f'{w * scale:g}' for w in WAITS)} s: {cond.get('repetitions', REPEATS)} x "
            f"({burst:g} s writes, wait), then {cond.get('baseline_s', BASELINE_S):g} s of writes")
    return stim, out


TEST = Test(uses=frozenset(), name="pts-hir", options=C.RUN_OPTIONS, title="SNIA PTS: Host Idle Recovery (HIR)", phases=phases, analyze=analyze,
            figures=F.per_drive("SNIA PTS: Host Idle Recovery (HIR)", page), cost=42.0, in_review=False,
            verdict=C.verdict,
            summary="SNIA PTS Host Idle Recovery: write IOPS after wait states of 5-50 s")
