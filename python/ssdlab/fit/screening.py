"""Screening: each parameter alone over a coarse grid of its range, from the search's start
(or a trial): a parameter that moves no figure over its whole range is frozen at the class's
value, the best grid point of each is a candidate start, and a mechanism the candidate turns
on has its own tuning screened with it on (a parameter that tunes a mechanism moves nothing
while the mechanism is off). The search (search.py) screens before its steps (descent.py)."""

from __future__ import annotations

import itertools
import math
from typing import Any

from .loss import Trial  # (the search is passed in, as in descent.py: search.py imports this module)

SCREEN_GRID = (0.05, 0.3, 0.55, 0.8, 1.0)  # screening: each parameter alone at these points of the cube
SCREEN_MIN = 0.25  # below this (group-weighted squared change, in tolerances) a parameter moves no figure


def screen(search: Any, x0: dict[str, float] | None = None, keys: list[str] | None = None,
           base: Trial | None = None, budget: Any = None) -> None:
    """Each parameter (of `keys`, default all) alone over a coarse grid of its range
    (SCREEN_GRID), the others at the start (`base`, when already run, is its trial): a
    parameter that moves no figure over its whole range (the evidence cannot see it) is
    left at the class's value and not searched; for the others the best grid point of
    each, together, is a candidate start (the search goes on from the better of it and
    the start). With a `budget`, the mechanisms the candidate turns on are screened only
    if their trials fit in it."""
    x0 = base.u if base else x0 or search.start.unit_start()
    params = [p for p in search.start.params if keys is None or p.key in keys]
    # a parameter whose mechanism is off at x0 moves nothing there (the same figures, to
    # the last digit): not run, it counts as moving nothing, so it is screened again once
    # its mechanism is on (screen_gated, explore)
    by = {q.key: q for q in search.start.params}
    idle = {p.key for p in params if p.gate and by[p.gate].physical(x0[p.gate]) == 0}
    for k in idle:
        search.sensitivity.setdefault(k, 0.0)
        search.gated_off.add(k)
    params = [p for p in params if p.key not in idle]
    points = [] if base else [x0]
    grids = {p.key: grid(search, p, x0) for p in params}
    for p in params:
        points += [{**x0, p.key: u} for u in grids[p.key]]
    done = search.evaluate(points, first=len(search.trials), until=budget.deadline if budget else math.inf)
    if not done and base is None:  # past the deadline already: the start still runs (a search has a best,
        # unless the fit's own end stops it)
        done = search.evaluate(points[:1], first=len(search.trials))
    search._record(done)
    if base is None:
        if not done:
            return
        base, done = done[0], done[1:]
    if base.error:
        from ..errors import UserError

        raise UserError(f"class {search.start.class_id} cannot simulate this drive: {base.error}")
    combined = dict(x0)
    tops: dict[str, Trial] = {}
    ends = list(itertools.accumulate(len(grids[p.key]) for p in params))
    params = [p for p, e in zip(params, ends) if e <= len(done)]  # past the deadline, the rest are not screened (nor frozen)
    for p, e in zip(params, ends):
        mine = done[e - len(grids[p.key]): e]
        # a point the simulator refuses (a bound the geometry cannot take) counts as moving
        # the most it moved from any base screened so far (a gated one: a second base)
        moved = max(math.inf if t.error else search.change(t, base) for t in mine)
        search.sensitivity[p.key] = max(moved, search.sensitivity.get(p.key, 0.0))
        search.gated_off.discard(p.key)
        tops[p.key] = min(mine, key=lambda t: (t.error is not None, t.loss, t.number))
    search.frozen = {k: v for k, v in search.sensitivity.items() if v < SCREEN_MIN}
    for k, top in tops.items():  # a frozen parameter stays at the class's value, its top is noise
        if top.loss < base.loss and k not in search.frozen:
            combined[k] = top.u[k]
    if combined != x0:
        done = search.evaluate([combined], first=len(search.trials), until=budget.deadline if budget else math.inf)
        search._record(done)
        if done:
            # parameters that help alone can undo each other together (a cache that alone
            # brought a drop near, with the other tops as if it were not there): the
            # mechanisms the candidate turns on are screened from the lower of it and the
            # best single top
            at = min([done[0], *(t for t in tops.values() if not t.error)], key=lambda t: (t.loss, t.number))
            screen_gated(search, x0, at, budget)
    # a mechanism off at x0 that moves the figures, but only the wrong way alone (a reclaim
    # that stops the host at the class's pace): its own parameters screened with it on at
    # its best grid point, where they can move the figures
    for p in params:
        top = tops[p.key]
        if (p.off and p.physical(x0[p.key]) == 0 and combined[p.key] == x0[p.key] and not top.error
                and p.key not in search.frozen):
            screen_gated(search, x0, top, budget)
    screen_largest(search, base, params, budget)


def grid(search: Any, p: Any, x0: dict[str, float]) -> tuple[float, ...]:
    """Screening's points of `p`: SCREEN_GRID, but none past where the die-count scan
    saw the loss turn at these other values (descent.scan_pow2: a larger die count only
    overshoots further, and its trial drive is the dearest, 5-8 times a trial's CPU)."""
    largest, others = search.turned.get(p.key, (math.inf, None))
    if others is None or any(x0.get(k) != v for k, v in others.items()):
        return SCREEN_GRID
    return tuple(u for u in SCREEN_GRID if p.physical(u) <= largest) or SCREEN_GRID[:1]


def screen_largest(search: Any, base: Trial, params: list[Any], budget: Any) -> None:
    """Parameters screened with their mechanism on but not at its largest that moved no
    figure (a mode only a large cache has: a performance mode that ends at half the LBAs
    needs a cache of half the drive): screened again with the mechanism at its largest,
    once per mechanism (screen_gated does this for a mechanism the candidate turned on;
    here it was on already, as the steps leave it with full-size trials)."""
    by = {q.key: q for q in search.start.params}
    x0 = base.u
    for g in dict.fromkeys(q.gate for q in params if q.gate and q.key in search.frozen):
        keys = [q.key for q in params if q.gate == g and q.key in search.frozen]
        if (g in search.opened or not by[g].off or by[g].physical(x0[g]) == 0 or x0[g] >= 1.0
                or (budget and not budget.room(len(search.trials), 1 + len(SCREEN_GRID) * len(keys), search.pace))):
            continue
        search.opened.add(g)
        search.mark("screen")
        done = search.evaluate([{**x0, g: 1.0}], first=len(search.trials),
                             until=budget.deadline if budget else math.inf)
        search._record(done)
        if done and not done[0].error:
            screen(search, keys=keys, base=done[0], budget=budget)


def screen_gated(search: Any, x0: dict[str, float], at: Trial, budget: Any = None) -> None:
    """Parameters that tune a mechanism screening found off at `x0` (their gate, e.g.
    the performance mode of a dynamic SLC cache) and the combined candidate `at` turned
    on: screened again from `at`, where they can move a figure (one at a time they
    could not); then from `at` with the mechanism at its largest, where a mode it has
    shows only when it is large (a performance mode that ends at half the LBAs needs a
    cache of half the drive)."""
    by = {q.key: q for q in search.start.params}
    on = [k for k, q in by.items() if q.off and q.physical(x0[k]) == 0 and q.physical(at.u[k]) > 0]
    on = [k for k in on if k not in search.opened]
    gated = [q.key for q in search.start.params if q.gate in on and q.key in search.frozen]
    if not gated or at.error:
        return
    n = len(SCREEN_GRID) * len(gated) + 1
    if budget and not budget.room(len(search.trials), n, search.pace):
        return
    search.opened.update(on)
    search.mark("screen")
    screen(search, keys=gated, base=at, budget=budget)
    gates = {by[g].gate for g in gated}
    top = {**at.u, **{k: 1.0 for k in on if k in gates}}
    if top == at.u or (budget and not budget.room(len(search.trials), n, search.pace)):
        return
    search.mark("screen")
    done = search.evaluate([top], first=len(search.trials), until=budget.deadline if budget else math.inf)
    search._record(done)
    if done and not done[0].error:  # a mechanism too large for the drive's geometry: not screened there
        screen(search, keys=gated, base=done[0], budget=budget)
