"""Behaviour rows: no simulated drive freezes. Over the fill and random-write
phases of its consistency runs (full drive and 25 % spare), every built-in profile keeps
its maximum latency under 1 s and has no second without a completed I/O, unless a
published figure shows such a freeze (none does)."""

from __future__ import annotations

from .figure import CONS0, CONS25, Ctx, Figure

RUNS = (CONS0, CONS25)
HOW = "consistency (spare 0 and 25 %): fill and random-write phases"


def _over_phases(field: str, reduce) -> callable:
    def f(c: Ctx) -> float | None:
        vals = [p[field] for run in RUNS for p in c.phases(run).values()]
        return float(reduce(vals)) if vals else None
    return f


def figures(drive_ids: list[str]) -> list[Figure]:
    out = []
    for d in drive_ids:
        out += [
            Figure(d, "max latency < 1 s", CONS0, _over_phases("max_latency_ms", max), hi=1000.0,
                   unit="ms", how=HOW + ", largest command latency",
                   source="no review of these drives reports multi-second stalls (hosts would log time-outs)",
                   needs=((d, CONS25),), kind="behaviour"),
            Figure(d, "no second at 0 IOPS", CONS0, _over_phases("zero_seconds", sum), lo=0.0, hi=0.0,
                   unit="s", how=HOW + ", seconds in which no I/O completed",
                   source="a drive that keeps taking writes completes some every second",
                   needs=((d, CONS25),), kind="behaviour"),
        ]
    return out
