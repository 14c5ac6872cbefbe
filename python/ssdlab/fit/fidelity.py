"""Trials on a smaller drive, corrected towards the drive's own size.

A trial drive has the drive's dies, planes and shares at fewer blocks a plane (space.scaled),
so most figures are the same as at full size; a few are not. On the 1 TB QLC drive with a
static SLC cache, the fingerprint's random-write stretch holds a plateau (33 K IOPS) for about
1.7 drive writes and then drops to its level (6.8 K). The plateau is the writes into the dies'
free blocks, and a trial drive matches their count only to a fraction of a block a die
(space.unscaled_blocks counts the blocks that do not scale as averages over a block's life);
half a block a die moves the end of the plateau on a 256-block trial drive enough to change
the last bins by tens of percent, far less at full size. The hidden drive of the closed loop
scores 1.31 in loss at trial size and 0.02 at full size (docs/fit-closed-loops.md).

So the search's best goes again at full size (it does anyway: fitting.full_size_check), and
each figure's value there over the same point's at trial size becomes a correction every
trial of the search is scored with (not the cross-validation folds': with it there, the
256 GB fit of benchmarks/fit_speed.py predicted 20 of 123 held-back figures against 98
without; the cause is not known) (Search.size_ratio: a ratio, as every figure of a run is
a rate or a latency above 0). One Levenberg-Marquardt round from the best on the corrected
figures, the new best at full size, taken when its loss there is lower; again while it
improves, up to ROUNDS times. This is output space mapping (Bandler et al., 1994), the
usual multi-fidelity correction: the fine model (the drive's size) corrects the coarse one
(the trial's) where the search is, so the coarse model's minimum moves to the fine model's.
Checked with the whole loss at full size, a correction that does not help is not taken."""

from __future__ import annotations

import math
from typing import Any

from . import descent
from .loss import Trial, residual
from .search import Budget, Search, full_size_check, point_key

ROUNDS = 3
MOVED = 0.5  # a figure whose error moves by less (tolerances) between the sizes is left as it is


def ratios(search: Search, full: Trial) -> dict[str, float]:
    """Each figure's value at full size over its value at the search's size, at `full`'s
    point, where the two differ by MOVED tolerances or more."""
    raw, _ = search.memo[point_key(full.u, False)]
    out = {}
    for f in search.ev.figures:
        a, b = full.values.get(f.name), raw.get(f.name)
        if a is None or b is None or a <= 0 or b <= 0 or not (math.isfinite(a) and math.isfinite(b)):
            continue
        if abs(residual(f, a) - residual(f, b)) >= MOVED:
            out[f.name] = a / b
    return out


def correct(search: Search, best: Trial, until: float) -> tuple[Trial, dict[str, Any] | None]:
    """The best (a full-size trial), maybe moved by rounds of corrected steps; with what the
    rounds did (None when trials ran at full size or no figure differs between the sizes)."""
    if not search.scalable or best.scale != 1.0:
        return best, None
    smooth = [k for k in search.free() if k not in descent.discrete(search)]
    record: dict[str, Any] = {"rounds": 0, "taken": 0, "loss_before": best.loss, "figures": []}
    for _ in range(ROUNDS):
        ran = search.evaluate([best.u])  # (memo: the trial of the best's point)
        if not ran:
            break  # the fit's end came first
        same = ran[0]
        ratio = ratios(search, best)
        if not ratio or not smooth:
            break
        search.correct_sizes(ratio)
        record["rounds"] += 1
        record["figures"] = sorted(set(record["figures"]) | set(ratio))
        start = next((t for t in search.trials if t.u == same.u), same)
        moved = descent.levenberg_marquardt(search, Budget(10**9, until), smooth, start=start, rounds=1)
        if moved.u == start.u:
            break
        full = full_size_check(search, [moved], until)[0]
        if full.scale != 1.0:
            break  # no time left to run it at full size
        if full.loss >= best.loss:
            break
        best = full
        record["taken"] += 1
    if not record["rounds"]:
        return best, None
    record["loss_after"] = best.loss
    return best, record
