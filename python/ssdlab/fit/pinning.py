"""How well the evidence pins each parameter, and which figures no parameter set passes
together.

A parameter is pinned when all of these are narrow (under PINNED of its range in the unit
cube): the spread of its value over the good trials (loss within SLACK of the best: what
else fits as well, along the directions the search explored, trade-offs between parameters
included), its slice (the loss with it alone moved outwards ring by ring of RINGS, and once
at FINE where the first no longer fits, the others at the best, on each side until it no longer fits as well: the loss within SLACK
and every figure the best passes still passing), and its linearized profile range (`trades`:
the others re-fitted, from the figures' Jacobian at the best). The range reported is the union
of the first two, a slice's part bracketed by its nearest points that no longer fit (the range lies
inside: a bound, not a confidence interval), and of the third where that is what unpins it; a parameter seen to fit as well over more than
PINNED is not pinned whatever lies beyond, so it is sliced no further, and its range is what
was seen to fit (it is at least that wide). A best on a bound of the search that a drive may
pass (space.Param.limit) is not pinned either: the values inside fit worse, so the evidence asks
for that much or beyond. A parameter screening found no figure to move with is not pinned, and neither is
one whose good range spans most of its bounds, nor one whose slice found a value better by the
search's own least gain (STALL[1]) or more (the search had not settled there: the best is on a
slope, even one finest step away; a point better by less is the loss's own roughness, wherever
it lies): the twin keeps the class's value for it
unless the fit is worse without the search's value (then it keeps that value, still marked
not pinned).

Conflicts: a figure the best trial fails is looked up in every trial; if some trials pass
it, the figures the best passes and all of those trials fail are its conflicts (no trial
passed both: a mechanism the simulator lacks, or a bound, or a figure that is wrong); if no
trial passes it, nothing within the bounds reaches it."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from . import descent
from .profile_out import EDGE, Pin
from .search import STALL, Budget, Search, Trial, residual

SLACK = 1.0  # loss above the best that may still fit as well (one group a tolerance off in the mean)
PINNED = 0.35  # share of a parameter's range (unit cube) its good range may span
RINGS = (0.05, 0.15, 0.4)  # a slice's offsets from the best, in the cube, outwards
# inside the first ring, looked at only on a side where that ring no longer fits: a point so
# near the best nearly always fits, so it brackets only the narrowest pins more closely
FINE = 0.015
# what a pinned parameter's range is (its note): no narrower than FINE of the cube each side
BRACKET = "the nearest values looked at beyond the range fit worse; within it the evidence does not choose"


def fits_as_well(search: Search, t: Trial, best: Trial) -> bool:
    """Within SLACK of the best's loss, and passing every figure the best passes (a group of
    many figures would hide one that moved out of its tolerance in the mean)."""
    if t.error or t.loss > best.loss + SLACK:
        return False
    return all(abs(residual(f, t.values.get(f.name))) <= 1.0 for f in search.ev.figures
               if abs(residual(f, best.values.get(f.name))) <= 1.0)


def settled(best: Trial, t: Trial) -> bool:
    """Whether `t`, a point of the best's slices, leaves the best settled: better by less
    than the search's own least gain (STALL[1]: what its stages take for no gain) is the
    loss's roughness, wherever the point lies; better by that or more says the best is on a
    slope, one finest step away (a minimum narrower than the steps' difference) or farther."""
    return t.loss > best.loss - STALL[1]


def good(search: Search, best: Trial) -> list[Trial]:
    return [t for t in search.trials if fits_as_well(search, t, best)]


def slices(search: Search, best: Trial, budget: Budget) -> dict[str, list[Trial]]:
    """Each free parameter moved alone outwards from the best, ring by ring of RINGS (every
    side due a point in one batch), on each side until a point no longer fits as well or a
    bound: the bracket `pins` reads ends there, so the points beyond it would change nothing
    it reports (as far as the budget lets). Where the first ring no longer fits, the side
    looks once at FINE, inside it, and ends. A parameter already seen to fit as well over
    more than PINNED of its range (the good trials and its slice's points) cannot be pinned:
    it is sliced no further."""
    keys = [p.key for p in search.start.params if p.key not in search.frozen]
    ok = good(search, best)
    seen = {k: [best.u[k], *(t.u[k] for t in ok)] for k in keys}
    out: dict[str, list[Trial]] = {}
    sides = [(k, s, RINGS[0]) for k in keys for s in (-1.0, 1.0) if not _wide(seen[k])]
    while sides and not budget.over(0):
        asked = []
        for k, s, off in sides:
            x = min(1.0, max(0.0, best.u[k] + s * off))
            if x != best.u[k] and all(t.u[k] != x for t in out.get(k, [])):  # a bound: no point beyond
                asked.append((k, s, off, x))
        if not asked or not budget.room(0, len(asked), search.pace):
            break  # the ring would end past the deadline (full-size trials: minutes a ring)
        done = search.evaluate([{**best.u, k: x} for k, _, _, x in asked], first=-1)
        sides = []
        for (k, s, off, x), t in zip(asked, done):
            out.setdefault(k, []).append(t)
            fits = fits_as_well(search, t, best)
            if fits:
                seen[k].append(x)
            after = _after(off, x, fits)
            if after is not None:
                sides.append((k, s, after))
        sides = [(k, s, off) for k, s, off in sides if not _wide(seen[k])]
    return out


def _after(off: float, x: float, fits: bool) -> float | None:
    """A side's next offset after its point `x` at `off`: the next ring while the points fit
    (none past a bound or the last ring); FINE once where the first ring no longer fits
    (inside it, so the side ends there either way); else the side is done."""
    if fits:
        return None if off in (FINE, RINGS[-1]) or x in (0.0, 1.0) else RINGS[RINGS.index(off) + 1]
    return FINE if off == RINGS[0] else None


@dataclass
class Trade:
    """A parameter's linearized profile range at the best: the half-width (in the cube) over
    which the loss stays within SLACK with the other smooth parameters re-fitted, against
    the half-width with them fixed, and the parameter it trades with most."""

    half: float
    alone: float
    partner: str
    correlation: float


def trades(search: Search, best: Trial, budget: Budget) -> dict[str, Trade]:
    """The slices move one parameter at a time: in a valley along two of them (a program time
    paying for fewer checkpoint writes) each is bracketed narrowly with the other fixed, while
    the two together fit as well far along the valley. So the figures' Jacobian at the best
    (a trial per smooth parameter, descent.STEP forward; the memo gives those already run)
    gives the Fisher information F = J^T W J of the loss (group weights W): with the others
    re-fitted the loss stays within SLACK over sqrt(SLACK (F^-1)_kk), with them fixed over
    sqrt(SLACK / F_kk). F gets SLACK on its diagonal (a step across the whole cube costs
    SLACK at least: what the bounds say), so a direction no figure sees reads at most the
    cube, not infinity. Linear in the figures: a guide where the loss is smooth, not a bound."""
    keys = [k for k in search.free() if k not in descent.discrete(search)]
    if len(keys) < 2 or not budget.room(0, len(keys), search.pace):
        return {}
    jac = descent.jacobian(search, best, keys, budget.deadline, record=False)
    if jac is None:
        return {}
    w = descent.group_weights(search)
    info = jac.T @ (w[:, None] * jac) + SLACK * np.eye(len(keys))
    cov = np.linalg.inv(info)
    out = {}
    for j, k in enumerate(keys):
        corr = cov[j] / np.sqrt(np.diag(cov) * cov[j, j])
        corr[j] = 0.0
        o = int(np.argmax(np.abs(corr)))
        out[k] = Trade(math.sqrt(SLACK * cov[j, j]), math.sqrt(SLACK / info[j, j]), keys[o], float(corr[o]))
    return out


def span_text(q: Any, lo: float, hi: float) -> str:
    """The values from lo to hi as a note says them: a policy by its names ("static and
    dynamic"), a number with its unit."""
    if q.choices:
        return " and ".join(dict.fromkeys(q.choices[int(round(x))] for x in (lo, hi)))
    return f"{lo:.4g}..{hi:.4g} {q.unit}".strip()


def _wide(us: list[float]) -> bool:
    return max(us) - min(us) > PINNED


def pins(search: Search, best: Trial, sliced: dict[str, list[Trial]],
         traded: dict[str, Trade] | None = None) -> dict[str, Pin]:
    st = search.start
    traded = traded or {}
    ok = good(search, best)
    phys = st.physical(best.u)
    out: dict[str, Pin] = {}
    for q in st.params:
        if q.key in search.frozen:
            x = st.start[q.key]
            why = (f"no figure moves with it: its mechanism is off ({q.gate} = 0) wherever it was screened"
                   if q.key in search.gated_off else
                   f"no figure moves with it: screening found a change of "
                   f"{search.sensitivity.get(q.key, 0):.2g} tolerances^2")
            out[q.key] = Pin(q.key, x, x, q.lo, q.hi, False, why, range_is="bounds")
            continue
        us = [t.u[q.key] for t in ok] + [best.u[q.key]]
        lo_u, hi_u = min(us), max(us)
        # the slice: from the best outwards to the first point that no longer fits (or a bound)
        sl = sorted(sliced.get(q.key, []), key=lambda t: t.u[q.key])
        below = [t for t in sl if t.u[q.key] < best.u[q.key]][::-1]
        above = [t for t in sl if t.u[q.key] > best.u[q.key]]
        # a side that ended without a point that no longer fits: at a bound (its last point),
        # or where the parameter was seen to be too wide to pin (its farthest point that fits)
        lo_u = min(lo_u, next((t.u[q.key] for t in below if not fits_as_well(search, t, best)),
                              below[-1].u[q.key] if below else lo_u))
        hi_u = max(hi_u, next((t.u[q.key] for t in above if not fits_as_well(search, t, best)),
                              above[-1].u[q.key] if above else hi_u))
        lo, hi = q.physical(lo_u), q.physical(hi_u)
        sliced_here = q.key in sliced
        # each side ended at a point that no longer fits or at a bound (not at the budget's end)
        ended = all(
            any(not fits_as_well(search, t, best) for t in side) or (side and side[-1].u[q.key] in (0.0, 1.0))
            or (not side and best.u[q.key] == edge) for side, edge in ((below, 0.0), (above, 1.0)))
        narrow = (hi_u - lo_u) <= PINNED
        still = all(settled(best, t) for t in sliced.get(q.key, []))
        tr = traded.get(q.key)
        if narrow and sliced_here and ended and still and tr and 2 * tr.half > PINNED:
            # narrow alone, wide with the others re-fitted: a valley, not a pin
            a, b = max(0.0, best.u[q.key] - tr.half), min(1.0, best.u[q.key] + tr.half)
            lo, hi = min(lo, q.physical(a)), max(hi, q.physical(b))
            out[q.key] = Pin(q.key, phys[q.key], phys[q.key], lo, hi, False,
                             f"{lo:.4g}..{hi:.4g} {q.unit}".strip() + " fit as well with the others re-fitted "
                             f"(linearized; it trades with {tr.partner})", range_is="linearized")
        elif narrow and sliced_here and ended and still and (edge := _edge(q, best.u[q.key])):
            # the values inside fit worse, but the bound, not the evidence, ends it: the evidence
            # asks for this much or beyond, where the search does not look
            side = f"{phys[q.key]:.4g} {q.unit}".strip()
            out[q.key] = Pin(q.key, phys[q.key], phys[q.key], lo, hi, False,
                             f"at the search's {edge}, {side}: the values inside fit worse, so the evidence asks for "
                             f"{'this much or more' if edge == 'ceiling' else 'this little or less'}, beyond what "
                             "the search looks at (a drive the class does not reach, or a figure to check)",
                             range_is="bracket")
        elif narrow and sliced_here and ended and still:
            out[q.key] = Pin(q.key, phys[q.key], phys[q.key], lo, hi, True, BRACKET)
        else:
            why = ("the search did not settle: its slice found a better value" if sliced_here and not still else
                   f"{'' if ended or q.choices else 'at least '}{span_text(q, lo, hi)} fit as well" if not narrow else
                   "not checked: the budget ran out before its slice" if not sliced_here else
                   "the budget ended its slice before a point that no longer fits")
            out[q.key] = Pin(q.key, phys[q.key], phys[q.key], lo, hi, False, why,
                             range_is="bracket" if ended and sliced_here else "seen")
    return out


def _edge(q: Any, u: float) -> str:
    """"floor" or "ceiling" where the best sits on a bound of the search that a drive may pass
    (space.Param.limit: not a limit such as none or all of it); "" elsewhere."""
    if u <= EDGE and not q.limit(False):
        return "floor"
    if u >= 1.0 - EDGE and not q.limit(True):
        return "ceiling"
    return ""


@dataclass
class Conflict:
    figure: str
    passed_in: int  # trials that pass it
    against: list[str]  # groups whose figures (passed by the best) fail in every one of those trials
    trials: int  # trials looked at

    def text(self) -> str:
        if not self.passed_in:
            return (f"{self.figure}: none of {self.trials} trials passed it (nothing within the bounds reached "
                    "it: a missing mechanism, a bound, or a figure to check)")
        return (f"{self.figure}: the {self.passed_in} of {self.trials} trials that pass it all fail figures of "
                + ", ".join(self.against) + " that the twin passes")


def conflicts(search: Search, best: Trial, most: int = 8) -> list[Conflict]:
    """For the `most` worst figures the best trial fails: the groups no trial passing them
    also passed (figures of their own group left aside: a curve's points move together)."""
    ev = search.ev
    figs = {f.name: f for f in ev.figures}

    def r(t: Trial, name: str) -> float:
        return abs(residual(figs[name], t.values.get(name)))

    failing = sorted((n for n in figs if r(best, n) > 1.0), key=lambda n: -r(best, n))[:most]
    passing = [n for n in figs if r(best, n) <= 1.0]
    out = []
    for name in failing:
        where = [t for t in search.trials if r(t, name) <= 1.0]
        against = sorted({ev.groups[g] for g in passing if ev.groups[g] != ev.groups[name]
                          and where and all(r(t, g) > 1.0 for t in where)})
        if not where or against:
            out.append(Conflict(name, len(where), against, len(search.trials)))
    return out


def summary(p: dict[str, Pin]) -> dict[str, Any]:
    return {"pinned": sorted(k for k, v in p.items() if v.pinned),
            "not_pinned": sorted(k for k, v in p.items() if not v.pinned)}
