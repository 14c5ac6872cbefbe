"""PTS IOPS: purge, workload-independent preconditioning, then rounds of random I/O over
the active range, every R/W mix x block size for one minute each (outer loop the mix,
inner the block size, largest first; 0.5 KiB on drives with 512-byte logical blocks),
until the three tracking variables, 4 KiB 0/100, 64 KiB 65/35 and 1024 KiB 100/0 IOPS,
are steady in the same 5 rounds. Reports the mix x block size matrix of the measurement
window's average IOPS."""

from __future__ import annotations

from typing import Any

from ...figures.pts_plots import Line, Matrix3D, Plot, Table
from ...phase import KIB, PhaseResult
from ..common import Options
from ..test import Test
from . import common as C
from . import figures as F
from .grids import BLOCKS, MIXES, iops_blocks, mix_label
from .grids import iops_label as label

MIB = 1024 * KIB
# the tracking variables: name -> (read %, block size); the first is the main one
TRACKING = {"RND 4 KiB 0/100 IOPS": (0, 4 * KIB), "RND 64 KiB 65/35 IOPS": (65, 64 * KIB),
            "RND 1024 KiB 100/0 IOPS": (100, MIB)}
TRACK = "w4k"  # rw0_bs4k, the main tracking variable's step


def labels(po: C.PtsOptions) -> list[str]:
    return [label(m, b) for m in MIXES for b in iops_blocks(po)]


LABELS = [label(m, b) for m in MIXES for b in BLOCKS]  # without the 0.5 KiB steps


def tracking(got: dict[str, Any]) -> dict[str, float]:
    return {name: C.iops(got[label(m, b)]) for name, (m, b) in TRACKING.items()}


def phases(capacity: int, opts: Options) -> C.Steps:
    po = C.pts_options(opts)
    yield from C.precondition(capacity, po)
    t, q = po.threads_qd

    def steps(n: int):
        for m in MIXES:
            for b in iops_blocks(po):
                yield C.io(C.round_name(n, label(m, b)), po, m, b, t, q)

    yield from C.rounds(po, steps, tracking)


def analyze(results: list[PhaseResult], opts: Options) -> dict:
    po = C.pts_options(opts)
    rounds = C.complete_rounds(results, labels(po))
    per_round = [tracking(r) for r in rounds.values()]
    out = C.steady_metrics({k: [r[k] for r in per_round] for k in TRACKING}, po.max_rounds)
    win = C.window_rounds(out, rounds)
    out["iops_matrix"] = {
        label(m, b): (sum(C.iops(rounds[n][label(m, b)]) for n in win) / len(win) if win else None)
        for m in MIXES for b in iops_blocks(po)}
    t, q = po.threads_qd
    out["conditions"] = C.conditions(po, threads=t, queue_depth=q, pattern="random",
                                     mixes_read_pct=list(MIXES),
                                     block_sizes_kib=[b / KIB for b in iops_blocks(po)],
                                     small_blocks=po.small_blocks_note())
    return out


# -- the report page -------------------------------------------------------------------
def _blocks(mat: dict) -> list[int]:
    """The block sizes the run measured, small to large."""
    return sorted(b for b in (*BLOCKS, C.SMALL_BLOCK) if label(0, b) in mat)


def page(key: str, run: Any, d: Any) -> tuple:
    m = d.metrics or {}
    mat = m.get("iops_matrix") or {}
    blocks = _blocks(mat) or sorted(BLOCKS)
    test = run.test
    conv = F.by_label(d, [label(0, b) for b in blocks], C.iops)
    out: list = [F.convergence(key, test, d, {f"{C.bs_kib(b)} KiB 0/100": conv[label(0, b)]
                                              for b in blocks}, "IOPS", ": every block size at 0/100")]
    out += F.window_plots(key, test, d, lambda name: "IOPS")
    if mat:
        mixes = sorted(MIXES)  # 0/100 (write) first, as SNIA's table reads left to right
        out.append(Table(f"table-{key}-matrix", f"{test}: IOPS by block size and R/W mix\n{d.label}",
                         ["block size (KiB)"] + [f"R/W {mix_label(x)}" for x in mixes],
                         [[C.bs_kib(b)] + [mat.get(label(x, b)) for x in mixes] for b in blocks],
                         "average of the measurement window's rounds; R/W mix as % read / % write"))
        ticks = [b / KIB for b in blocks]
        out.append(Plot(f"fig-{key}-2d", f"{test}: IOPS by block size, one line per R/W mix\n{d.label}",
                        "block size (KiB)", "IOPS", [
                            Line(f"R/W {mix_label(x)}", ticks, [mat.get(label(x, b)) for b in blocks])
                            for x in mixes], log_x=True, log_y=True, xticks=ticks,
                        xticklabels=[C.bs_kib(b) for b in blocks]))
        out.append(Matrix3D(f"fig-{key}-3d", f"{test}: IOPS by block size and R/W mix\n{d.label}",
                            [C.bs_kib(b) for b in blocks], [mix_label(x) for x in mixes],
                            [[mat.get(label(x, b)) for b in blocks] for x in mixes]))
    cond = m.get("conditions") or {}
    stim = (f"RND, R/W mix {', '.join(mix_label(x) for x in MIXES)} (outer loop) x block size "
            f"{', '.join(C.bs_kib(b) for b in sorted(blocks, reverse=True))} KiB (inner loop), "
            f"T{cond.get('threads', '-')}Q{cond.get('queue_depth', '-')}; 0.5 KiB "
            f"{cond.get('small_blocks', '-')}")
    return stim, out


TEST = Test(uses=frozenset(), name="pts-iops", options=C.RUN_OPTIONS, title="SNIA PTS: IOPS", phases=phases, analyze=analyze,
            figures=F.per_drive("SNIA PTS: IOPS", page), cost=13.0, in_review=False,
            verdict=C.verdict,
            summary="SNIA PTS IOPS: R/W mix x block size matrix at steady state")
