"""PTS Throughput: for each block size (client 1024 KiB; enterprise 1024 and 128 KiB, each
from its own purge and preconditioning), rounds of sequential 100 % reads and 100 %
writes over the active range, one minute each, until the write MB/s is steady. Reports
the MB/s of the measurement window."""

from __future__ import annotations

from typing import Any

from ...figures.pts_plots import Table
from ...phase import KIB, PhaseResult
from ..common import Options
from ..test import Test
from . import common as C
from . import figures as F

BLOCKS = {"client": (1024 * KIB,), "enterprise": (1024 * KIB, 128 * KIB)}
MIXES = (100, 0)
OUTSTANDING = (1, 32)


def label(bs: int, read_pct: int) -> str:
    return f"bs{C.bs_label(bs)}_rw{read_pct}"


def track_name(bs: int) -> str:
    return f"SEQ {C.bs_kib(bs)} KiB 0/100 MB/s"


def phases(capacity: int, opts: Options) -> C.Steps:
    po = C.pts_options(opts)
    t, q = OUTSTANDING
    for bs in BLOCKS[po.segment]:
        yield from C.precondition(capacity, po, suffix=f"_{C.bs_label(bs)}")

        def steps(n: int, bs=bs):
            for m in MIXES:
                yield C.io(C.round_name(n, label(bs, m)), po, m, bs, t, q, pattern="seq")

        def tracking(got: dict[str, PhaseResult], bs: int = bs) -> dict[str, float]:
            return {track_name(bs): C.mbps(got[label(bs, 0)])}

        yield from C.rounds(po, steps, tracking)


def analyze(results: list[PhaseResult], opts: Options) -> dict:
    po = C.pts_options(opts)
    out: dict = {}
    for bs in BLOCKS[po.segment]:
        labels = [label(bs, m) for m in MIXES]
        rounds = C.complete_rounds(results, labels)
        values = [C.mbps(r[label(bs, 0)]) for r in rounds.values()]
        sm = C.steady_metrics({track_name(bs): values}, po.max_rounds)
        win = C.window_rounds(sm, rounds)
        for m in MIXES:
            key = "read" if m == 100 else "write"
            sm[f"{key}_mbps"] = (sum(C.mbps(rounds[n][label(bs, m)]) for n in win) / len(win)
                                 if win else None)
        out[f"bs{C.bs_label(bs)}"] = sm
    first = out[f"bs{C.bs_label(BLOCKS[po.segment][0])}"]
    out.update(steady_reached=all(v["steady_reached"] for v in out.values()),
               steady_round=first["steady_round"], rounds=first["rounds"],
               read_mbps=first["read_mbps"], write_mbps=first["write_mbps"])
    out["conditions"] = C.conditions(po, threads=OUTSTANDING[0], queue_depth=OUTSTANDING[1],
                                     pattern="sequential",
                                     block_sizes_kib=[b // KIB for b in BLOCKS[po.segment]])
    return out


# -- the report page -------------------------------------------------------------------
def page(key: str, run: Any, d: Any) -> tuple:
    m = d.metrics or {}
    out: list = []
    rows: list[list] = []
    steady: list[tuple[str, str]] = []
    counts: list[str] = []  # each block size's rounds: its own purge, WIPC and rounds
    for bs in sorted(BLOCKS["enterprise"], reverse=True):
        sm = m.get(f"bs{C.bs_label(bs)}")
        if not isinstance(sm, dict):
            continue
        k, kib = f"{key}-bs{C.bs_label(bs)}", C.bs_kib(bs)
        conv = F.by_label(d, [label(bs, 0), label(bs, 100)], C.mbps)
        out.append(F.convergence(k, run.test, d, {f"SEQ {kib} KiB write": conv[label(bs, 0)]},
                                 "MB/s", f": {kib} KiB sequential write (the tracking variable)"))
        out.append(F.convergence(k, run.test, d, {f"SEQ {kib} KiB read": conv[label(bs, 100)]},
                                 "MB/s", f": {kib} KiB sequential read", "convergence-read"))
        out += F.window_plots(k, run.test, d, lambda name: "MB/s", sm)
        rows.append([kib, sm.get("read_mbps"), sm.get("write_mbps"), F.steady_text(sm)])
        steady.append((f"steady state, {kib} KiB", F.steady_text(sm)))
        counts.append(f"{sm.get('rounds')} for {kib} KiB")
    if rows:
        out.insert(0, Table(f"table-{key}-mbps", f"{run.test}: sequential MB/s at steady state\n{d.label}",
                            ["block size (KiB)", "read MB/s", "write MB/s", "steady state"], rows,
                            "averages of the measurement window's rounds"))
    stim = (f"SEQ R/W 100/0 then 0/100, block size {', '.join(str(r[0]) for r in rows) or '-'} KiB, "
            f"T{OUTSTANDING[0]}Q{OUTSTANDING[1]}; each block size from its own purge and preconditioning")
    if counts:
        steady.append(("rounds", f"{', '.join(counts)} run, "
                                 f"{F.rounds_limit(m.get('conditions') or {}, ' each')}"))
    return stim, out, steady


TEST = Test(uses=frozenset(), name="pts-throughput", options=C.RUN_OPTIONS, title="SNIA PTS: Throughput", phases=phases, analyze=analyze,
            figures=F.per_drive("SNIA PTS: Throughput", page), cost=0.2, in_review=False,
            verdict=C.verdict,
            summary="SNIA PTS Throughput: sequential 1024 KiB (and 128 KiB) read and write at steady state")
