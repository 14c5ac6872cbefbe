"""PTS Throughput: for each block size (client 1024 KiB; enterprise 1024 and 128 KiB, each
from its own purge and preconditioning), rounds of sequential 100 % reads and 100 %
writes, one minute each, until the write throughput is steady. Reports MB/s of the
measurement window."""

from __future__ import annotations

from collections.abc import Generator

from ...phase import KIB, Phase, PhaseResult
from ..common import Options
from ..test import Test
from . import common as C
from .figures import throughput_figures

BLOCKS = {"client": (1024 * KIB,), "enterprise": (1024 * KIB, 128 * KIB)}
MIXES = (100, 0)
OUTSTANDING = (1, 32)


def label(bs: int, read_pct: int) -> str:
    return f"bs{C.bs_label(bs)}_rw{read_pct}"


def phases(capacity: int, opts: Options) -> Generator[Phase, PhaseResult | None, None]:
    po = C.pts_options(opts)
    t, q = OUTSTANDING
    for bs in BLOCKS[po.segment]:
        yield from C.precondition(capacity, po, suffix=f"_{C.bs_label(bs)}")

        def steps(n: int, bs=bs):
            for m in MIXES:
                yield C.io(C.round_name(n, label(bs, m)), po, m, bs, t, q, pattern="seq")

        def tracking(got: dict[str, PhaseResult], bs: int = bs) -> float:
            return C.mbps(got[label(bs, 0)])

        yield from C.rounds(po, steps, tracking)


def analyze(results: list[PhaseResult], opts: Options) -> dict:
    po = C.pts_options(opts)
    out: dict = {}
    for bs in BLOCKS[po.segment]:
        labels = [label(bs, m) for m in MIXES]
        rounds = {n: r for n, r in C.complete_rounds(results, labels).items()}
        values = [C.mbps(r[label(bs, 0)]) for r in rounds.values()]
        sm = C.steady_metrics(values, po.max_rounds, f"SEQ {C.bs_label(bs)} write MB/s")
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


TEST = Test(name="pts-throughput", title="SNIA PTS: Throughput", phases=phases, analyze=analyze, figures=throughput_figures,
            cost=3.0, in_review=False, summary="SNIA PTS Throughput: sequential 1024 KiB (and 128 KiB) read and write at steady state")
