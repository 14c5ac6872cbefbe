"""A pin checked at the class's value: is the bracket around the search's value the evidence's
minimum, or a local one?

A slice brackets a parameter by the nearest values looked at on each side that fit worse, so a
best in a local minimum reads pinned, however well a value far outside the bracket fits (the
QLC drive's closed-loop twin had GC's pace pinned at 1.91 +-4 % where the drive's is the class's
1, and an erase of 8.8 ms +-4 % for its 5.0). The class's value is the prior: what a drive of
that class has without the evidence. So each pinned parameter whose class value lies outside its
bracket is run once more with that value alone, the others at the best, at the drive's own size
(the twin's: a local minimum of the trial drive's loss is no minimum of the twin's), and judged
against the best at that size as the bracket was judged (pinning.fits_as_well):

- it fits as well: the evidence does not choose between the two, so the parameter is not
  pinned, its range spans both ("seen": each end was seen to fit as well, the values between
  were not all run);
- it is better by the search's own least gain (search.STALL[1]) or more: the best is not the
  minimum along it, so it is not pinned either, and says so; the twin then takes the class's
  value where that fits as well (fitting._revert_unpinned: these points are already run);
- else the pin stands, and the pin carries the loss seen there (`class_loss`).

One full-size run a parameter so checked, in one batch, none begun after the pinning's end."""

from __future__ import annotations

import math
from typing import Any

from .loss import Trial
from .pinning import fits_as_well, span_text
from .profile_out import Pin
from .search import STALL, Search


def due(search: Search, pins: dict[str, Pin]) -> list[str]:
    """The pinned parameters whose class value lies outside their bracket: those a run there
    can unpin (one inside it is in the range already)."""
    st = search.start
    x0 = st.unit_start()
    out = []
    for q in st.params:
        p = pins.get(q.key)
        if p is None or not p.pinned or q.key in search.frozen:
            continue
        v = q.physical(x0[q.key])  # the class's value as the search's cube holds it (within its bounds)
        if not p.lo <= v <= p.hi:
            out.append(q.key)
    return out


def unchecked(search: Search, pins: dict[str, Pin]) -> str:
    """The pins due a check that none ran for (no time left), as `out_of_time` names them; ""
    when every one ran."""
    keys = [k for k in due(search, pins) if pins[k].class_loss is None]
    if not keys:
        return ""
    return (f"the class's value of {len(keys)} pinned parameter{'s' if len(keys) > 1 else ''} "
            f"({', '.join(keys)}: pinned by their brackets alone)")


def check(search: Search, best: Trial, same: Trial, pins: dict[str, Pin], until: float = math.inf) -> list[str]:
    """Run each due parameter's class value (the others at `best`, at the drive's own size when
    trials run smaller; `same` is the best's trial of the search's size) and unpin those that fit
    as well or better there. Returns the parameters checked; those the time left no room for keep
    their pins and no `class_loss`."""
    keys = due(search, pins)
    if not keys or (search.scalable and best.scale != 1.0):
        return []  # (no full-size best to judge them against: --minutes left no time for it)
    st = search.start
    x0 = st.unit_start()
    ref = best if search.scalable else same  # the best at the size the class's value runs at
    ran = search.evaluate([{**best.u, k: x0[k]} for k in keys], full=search.scalable, until=until)
    by = {q.key: q for q in st.params}
    for k, t in zip(keys, ran):
        p, q = pins[k], by[k]
        p.class_loss = t.loss
        if t.error:
            continue  # the class's value with the others as fitted is not a drive the simulator builds
        v = q.physical(x0[k])
        better = t.loss <= ref.loss - STALL[1]
        if not (better or fits_as_well(search, t, ref)):
            continue
        bracket = span_text(q, p.lo, p.hi)
        p.lo, p.hi = min(p.lo, v), max(p.hi, v)
        p.pinned, p.range_is = False, "seen"
        p.why = (f"the class's value {_value_text(q, x0[k])} fits {'better' if better else 'as well'} (loss "
                 f"{t.loss:.3g} against {ref.loss:.3g}): the bracket {bracket} around the search's value is a "
                 "local minimum")
    return keys[:len(ran)]


def _value_text(q: Any, u: float) -> str:
    """A value of the cube as a note says it: a policy by its name, a number with its unit."""
    if q.choices:
        return str(q.choices[int(round(q.physical(u)))])
    return f"{q.physical(u):.4g} {q.unit}".strip()
