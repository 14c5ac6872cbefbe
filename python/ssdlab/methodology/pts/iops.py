"""PTS IOPS: purge, 2x capacity of 128 KiB sequential writes, then rounds of random I/O over
the active range, every R/W mix x block size for one minute each (outer loop the mix,
inner the block size, largest first), until the 4 KiB 100 % write IOPS is steady. Reports
the mix x block size matrix of the measurement window's average IOPS."""

from __future__ import annotations

from collections.abc import Generator

from ...phase import KIB, Phase, PhaseResult
from ..common import Options
from ..test import Test
from . import common as C
from .figures import iops_figures

MIXES = (100, 95, 65, 50, 35, 5, 0)  # read %
BLOCKS = (1024 * KIB, 128 * KIB, 64 * KIB, 32 * KIB, 16 * KIB, 8 * KIB, 4 * KIB)
TRACK = "w4k"  # rw0_bs4k: 4 KiB random writes
OUTSTANDING = {"client": (2, 16), "enterprise": (4, 32)}  # threads, queue depth per thread


def label(read_pct: int, bs: int) -> str:
    return f"rw{read_pct}_bs{C.bs_label(bs)}"


LABELS = [label(m, b) for m in MIXES for b in BLOCKS]


def phases(capacity: int, opts: Options) -> Generator[Phase, PhaseResult | None, None]:
    po = C.pts_options(opts)
    yield from C.precondition(capacity, po)
    t, q = OUTSTANDING[po.segment]

    def steps(n: int):
        for m in MIXES:
            for b in BLOCKS:
                yield C.io(C.round_name(n, label(m, b)), po, m, b, t, q)

    yield from C.rounds(po, steps, lambda got: C.iops(got[label(0, 4 * KIB)]))


def analyze(results: list[PhaseResult], opts: Options) -> dict:
    po = C.pts_options(opts)
    rounds = C.complete_rounds(results, LABELS)
    values = [C.iops(r[label(0, 4 * KIB)]) for r in rounds.values()]
    out = C.steady_metrics(values, po.max_rounds, "4 KiB random write IOPS")
    win = C.window_rounds(out, rounds)
    out["iops_matrix"] = {
        label(m, b): (sum(C.iops(rounds[n][label(m, b)]) for n in win) / len(win) if win else None)
        for m in MIXES for b in BLOCKS}
    t, q = OUTSTANDING[po.segment]
    out["conditions"] = C.conditions(po, threads=t, queue_depth=q, pattern="random",
                                     mixes_read_pct=list(MIXES),
                                     block_sizes_kib=[b // KIB for b in BLOCKS])
    return out


TEST = Test(name="pts-iops", title="SNIA PTS: IOPS", phases=phases, analyze=analyze, figures=iops_figures,
            cost=30.0, in_review=False, summary="SNIA PTS IOPS: R/W mix x block size matrix at steady state")
