"""A pin checked at the class's value (fit/prior.py), on losses of known shape (no simulator):
a best in a local minimum, bracketed narrowly by its slices, is not pinned where the class's
value fits as well or better at the drive's own size (and the twin takes the class's value
where it fits as well); a pin whose class value fits worse stands, with the loss seen there; a
class value inside the bracket costs no run."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from ssdlab.calibration import Figure
from ssdlab.fit import fitting, pinning, prior, search
from ssdlab.fit.loss import Trial, loss_of
from ssdlab.fit.space import Param

P = Param("p", 1, 100, "", "the one parameter")


def _start(at: float) -> SimpleNamespace:
    return SimpleNamespace(params=[P], class_id="local", unit_start=lambda: {"p": at},
                           physical=lambda u: {"p": P.physical(u["p"])}, start={"p": P.physical(at)})


class Local(search.Search):
    """Figure f has a narrow minimum at 0.8 of the cube, `off` tolerances off there (0.05 of the
    cube away it is 2 tolerances further), and another at the class's 0.5, `far` tolerances off;
    figure g is flat. Where `scalable`, the trial drive sees the minimum at 0.8 alone (at 0.5 it
    reads f 5 tolerances off): only the drive's own size shows the class's value fitting."""

    def __init__(self, off: float = 0.0, far: float = 0.0, scalable: bool = False, at: float = 0.5) -> None:
        self.off, self.far, self.runs = off, far, []
        figs = [Figure("d", name, ("t", 0.0, None, 1, ()), lambda c: None, value=100.0, tol=0.1) for name in "fg"]
        ev = SimpleNamespace(figures=figs, groups={f.name: f.name for f in figs}, scalable=lambda: scalable)
        super().__init__(ev, _start(at), 1, executor=None)  # type: ignore[arg-type]

    def _run(self, points, full=False, first=0):
        out = []
        for i, u in enumerate(points):
            self.runs.append((u["p"], full))
            far = self.far if full or not self.scalable else 5.0
            f = 100.0 + min(10.0 * self.off + 400.0 * abs(u["p"] - 0.8), 10.0 * far + 400.0 * abs(u["p"] - 0.5))
            values = {"f": f, "g": 100.0}
            loss, groups = loss_of(self.ev, values)  # type: ignore[arg-type]
            out.append(Trial(first + i, u, values, loss, 1.0 if full or not self.scalable else 0.5, groups))
        return out


def _pinned(s: Local) -> tuple[Trial, Trial, dict]:
    """pin() from a best at 0.8 (its full-size trial where trials run smaller)."""
    s._record(s.evaluate([{"p": 0.8}]))
    best = s.evaluate([{"p": 0.8}], full=True)[0] if s.scalable else s.trials[0]
    # the slices alone bracket it narrowly: pinned, by the nearest values looked at
    alone = pinning.pins(s, s.trials[0], pinning.slices(s, s.trials[0], search.Budget(10**9)))["p"]
    assert alone.pinned and P.physical(0.7) < alone.lo < alone.hi < P.physical(0.9)
    got, same, pins, moved = fitting.pin(s, best, search.Budget(10**9))
    assert got is best and same is s.trials[0] and moved is None
    return best, same, pins


def test_a_pin_in_a_local_minimum_is_not_pinned_where_the_class_fits_as_well():
    s = Local()
    best, _, pins = _pinned(s)
    pin = pins["p"]
    assert not pin.pinned and "fits as well" in pin.why and "local minimum" in pin.why
    # the range spans both: the class's value and the search's bracket
    assert pin.lo == pytest.approx(P.physical(0.5)) and pin.hi > P.physical(0.8) and pin.range_is == "seen"
    assert pin.class_loss == pytest.approx(best.loss)
    assert pin.value == pytest.approx(P.physical(0.8))  # the search's value, until the twin sets it back


def test_a_class_value_that_fits_better_unpins_and_the_twin_takes_it():
    s = Local(off=0.7)  # the local minimum 0.7 tolerances off: a loss of 0.49; the class's 0
    best, same, pins = _pinned(s)
    pin = pins["p"]
    assert not pin.pinned and "fits better" in pin.why and pin.class_loss < best.loss - search.STALL[1]
    values, twin = fitting._revert_unpinned(s, best, same, pins)
    assert values["p"] == pytest.approx(P.physical(0.5)) and pins["p"].reverted and twin.loss < best.loss


def test_a_class_value_that_fits_worse_leaves_the_pin_standing():
    s = Local(far=3.0)  # 3 tolerances off at the class's value: a loss of 9
    best, _, pins = _pinned(s)
    pin = pins["p"]
    assert pin.pinned and pin.why == pinning.BRACKET and pin.range_is == "bracket"
    assert pin.class_loss == pytest.approx(9.0) and pin.hi < P.physical(0.9)
    assert s.runs.count((0.5, False)) == 1  # the one run of it


def test_a_class_value_inside_the_bracket_costs_no_run():
    s = Local(far=3.0, at=0.79)
    _, _, pins = _pinned(s)
    assert pins["p"].pinned and pins["p"].class_loss is None and prior.due(s, pins) == []
    assert all(abs(p - 0.79) > 1e-9 for p, _ in s.runs)


def test_the_class_value_is_judged_at_the_drives_own_size():
    """The trial drive sees the minimum at 0.8 alone; at the drive's own size (the twin's) the
    class's value fits as well: it is run there, once, and the parameter is not pinned."""
    s = Local(scalable=True)
    assert s.evaluate([{"p": 0.5}])[0].loss > 1 + s.evaluate([{"p": 0.8}])[0].loss  # at trial size it fits worse
    s.runs.clear()
    _, _, pins = _pinned(s)
    assert not pins["p"].pinned and pins["p"].class_loss == pytest.approx(0.0)
    assert [r for r in s.runs if r[1]] == [(0.8, True), (0.5, True)]  # the best's, then the class's


def test_no_time_left_keeps_the_pin_and_the_fit_says_so():
    """A deadline already past: no run at the class's value, the pin stands without a class loss,
    and fit() names it in out_of_time."""
    import time

    s = Local()
    s._record(s.evaluate([{"p": 0.8}]))
    pins = pinning.pins(s, s.trials[0], pinning.slices(s, s.trials[0], search.Budget(10**9)))
    n = len(s.runs)
    assert prior.check(s, s.trials[0], s.trials[0], pins, until=time.monotonic() - 1) == []
    assert len(s.runs) == n and pins["p"].pinned and pins["p"].class_loss is None and prior.due(s, pins) == ["p"]
    assert prior.unchecked(s, pins) == "the class's value of 1 pinned parameter (p: pinned by their brackets alone)"
    prior.check(s, s.trials[0], s.trials[0], pins)  # with time: checked, nothing left to name
    assert pins["p"].class_loss is not None and prior.unchecked(s, pins) == ""
