"""How pinning judges a parameter, on a loss of known shape (no simulator): a best on a slope
is not reported as pinned, however narrow the bracket its passing figures leave; a parameter
seen to fit over a wide range is sliced no further than that, and reported as that range."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from ssdlab.calibration import Figure
from ssdlab.fit import pinning, search
from ssdlab.fit.loss import Trial, loss_of
from ssdlab.fit.space import Param
from test_search import Calls

P = Param("p", 1, 100, "", "the one parameter")
START = SimpleNamespace(params=[P], class_id="slope", unit_start=lambda: {"p": 0.5},
                        physical=lambda u: {"p": P.physical(u["p"])}, start={"p": P.physical(0.5)})


class Slope(search.Search):
    """Figure f moves steeply with p (zero error at p = 0.2, 6 tolerances off at 0.5); figure g
    passes at 0.5 only, just (a V around it): a best at 0.5 is on f's slope, and g fails on both
    sides of it one finest slice step away."""

    def __init__(self, start: SimpleNamespace = START, scalable: bool = False) -> None:
        figs = [Figure("d", name, ("t", 0.0, None, 1, ()), lambda c: None, value=100.0, tol=0.1) for name in "fg"]
        ev = SimpleNamespace(figures=figs, groups={f.name: f.name for f in figs}, scalable=lambda: scalable)
        super().__init__(ev, start, 1, executor=None)  # type: ignore[arg-type]

    def _run(self, points, full=False, first=0):
        out = []
        for i, u in enumerate(points):
            values = {"f": 100.0 + 200.0 * (u["p"] - 0.2), "g": 109.9 + 100.0 * abs(u["p"] - 0.5)}
            loss, groups = loss_of(self.ev, values)  # type: ignore[arg-type]
            out.append(Trial(first + i, u, values, loss, 1.0, groups))
        return out


def test_a_best_on_a_slope_is_not_pinned_by_a_narrow_bracket():
    s = Slope()
    s._record(s.evaluate([{"p": 0.5}]))
    best = s.trials[0]
    # the first ring, then the finer points inside it (a ring looks at the budget twice)
    sliced = pinning.slices(s, best, Calls(4))
    assert sorted(round(t.u["p"], 3) for t in sliced["p"]) == [0.45, 0.485, 0.515, 0.55]
    lower = next(t for t in sliced["p"] if 0.48 < t.u["p"] < 0.5)
    assert abs(lower.u["p"] - 0.5) <= pinning.FINE + 1e-9 and lower.loss < best.loss - pinning.SLACK
    assert not any(pinning.fits_as_well(s, t, best) for t in sliced["p"])  # a bracket one step wide
    pin = pinning.pins(s, best, sliced)["p"]
    assert not pin.pinned and "did not settle" in pin.why


class Flat(Slope):
    """Every value of p fits as well (no figure moves with it)."""

    def _run(self, points, full=False, first=0):
        values = {"f": 100.0, "g": 100.0}
        loss, groups = loss_of(self.ev, values)  # type: ignore[arg-type]
        return [Trial(first + i, u, values, loss, 1.0, groups) for i, u in enumerate(points)]


def test_a_parameter_seen_to_fit_widely_is_sliced_no_further():
    s = Flat()
    s._record(s.evaluate([{"p": 0.5}]))
    best = s.trials[0]
    sliced = pinning.slices(s, best, search.Budget(10**9))
    # rings 0.05, 0.15 leave 0.3 of the cube seen to fit; 0.4 makes it 0.8: no further (the
    # points inside the first ring are looked at only where it no longer fits)
    assert sorted(round(t.u["p"], 3) for t in sliced["p"]) == [0.1, 0.35, 0.45, 0.55, 0.65, 0.9]
    pin = pinning.pins(s, best, sliced)["p"]
    assert not pin.pinned and pin.why.startswith("at least ") and pin.why.endswith(" fit as well")
    assert (pin.lo, pin.hi) == pytest.approx((P.physical(0.1), P.physical(0.9)))  # what was seen, not the bounds
    # good trials already as wide: no slice at all, the range theirs
    s._record(s.evaluate([{"p": 0.2}, {"p": 0.7}]))
    assert pinning.slices(s, best, search.Budget(10**9)) == {}
    pin = pinning.pins(s, best, {})["p"]
    assert not pin.pinned and (pin.lo, pin.hi) == pytest.approx((P.physical(0.2), P.physical(0.7))) and "fit as well" in pin.why


def test_a_slice_the_budget_cut_short_does_not_pin():
    """The budget ends after the first ring: every point fits, the range seen is narrow, but
    no side reached a point that no longer fits or a bound: not pinned."""
    s = Flat()
    s._record(s.evaluate([{"p": 0.5}]))
    best = s.trials[0]
    sliced = pinning.slices(s, best, Calls(2))
    assert len(sliced["p"]) == 2
    pin = pinning.pins(s, best, sliced)["p"]
    assert not pin.pinned and "the budget ended its slice" in pin.why


A = Param("a", 1, 100, "", "one side of a valley")
B = Param("b", 1, 100, "", "the other")
VALLEY = SimpleNamespace(params=[A, B], class_id="valley", unit_start=lambda: {"a": 0.5, "b": 0.5},
                         physical=lambda u: {q.key: q.physical(u[q.key]) for q in (A, B)},
                         start={q.key: q.physical(0.5) for q in (A, B)})


class Valley(search.Search):
    """Figure f reads a - b steeply (a program time paying for fewer checkpoint writes), figure
    g reads a + b gently: moved alone, each parameter leaves f's tolerance within 0.05 of the
    cube; moved together along a = b, the loss stays within SLACK over most of the cube."""

    def __init__(self) -> None:
        figs = [Figure("d", name, ("t", 0.0, None, 1, ()), lambda c: None, value=100.0, tol=0.1) for name in "fg"]
        ev = SimpleNamespace(figures=figs, groups={"f": "one", "g": "one"}, scalable=lambda: False)
        super().__init__(ev, VALLEY, 1, executor=None)  # type: ignore[arg-type]

    def _run(self, points, full=False, first=0):
        out = []
        for i, u in enumerate(points):
            values = {"f": 100.0 + 300.0 * (u["a"] - u["b"]), "g": 100.0 + 2.0 * (u["a"] + u["b"] - 1.0)}
            loss, groups = loss_of(self.ev, values)  # type: ignore[arg-type]
            out.append(Trial(first + i, u, values, loss, 1.0, groups))
        return out


def test_a_parameter_in_a_valley_with_another_is_not_pinned():
    s = Valley()
    s._record(s.evaluate([{"a": 0.5, "b": 0.5}]))
    best = s.trials[0]
    sliced = pinning.slices(s, best, search.Budget(10**9))
    alone = pinning.pins(s, best, sliced)
    assert alone["a"].pinned and alone["b"].pinned  # moved one at a time, each is bracketed narrowly
    traded = pinning.trades(s, best, search.Budget(10**9))
    assert traded["a"].partner == "b" and traded["a"].correlation > 0.9
    assert traded["a"].alone < 0.05 and 2 * traded["a"].half > pinning.PINNED
    pin = pinning.pins(s, best, sliced, traded)["a"]
    assert not pin.pinned and "trades with b" in pin.why
    assert pin.hi / pin.lo > alone["a"].hi / alone["a"].lo  # the range says how far the valley goes


class Sized(search.Search):
    """Figure f passes over the whole range at the drive's own size; a trial drive reads it
    steeply, right only at p = 0.8 (a 1 % low of rare stalls the smaller drive dilutes): the
    search, at trial size, ends at 0.8; the class's 0.5 fits as well at full size."""

    def __init__(self) -> None:
        figs = [Figure("d", "f", ("t", 0.0, None, 1, ()), lambda c: None, value=100.0, tol=0.1)]
        ev = SimpleNamespace(figures=figs, groups={"f": "f"}, scalable=lambda: True)
        super().__init__(ev, START, 1, executor=None)  # type: ignore[arg-type]

    def _run(self, points, full=False, first=0):
        out = []
        for i, u in enumerate(points):
            values = {"f": 100.0 + (5.0 * (u["p"] - 0.65) if full else 100.0 * (u["p"] - 0.8))}
            loss, groups = loss_of(self.ev, values)  # type: ignore[arg-type]
            out.append(Trial(first + i, u, values, loss, 1.0 if full else 0.5, groups))
        return out


def test_an_unpinned_parameter_goes_back_to_the_class_when_the_full_size_twin_fits_as_well():
    from ssdlab.fit import fitting
    from ssdlab.fit.profile_out import Pin

    s = Sized()
    same = s.evaluate([{"p": 0.8}])[0]
    best = s.evaluate([{"p": 0.8}], full=True)[0]
    assert s.evaluate([{"p": 0.5}])[0].loss > same.loss + pinning.SLACK  # at trial size the class fails
    pins = {"p": Pin("p", P.physical(0.8), P.physical(0.8), P.physical(0.7), P.physical(0.9), False, "trades")}
    values, twin = fitting._revert_unpinned(s, best, same, pins)
    assert twin.scale == 1.0 and abs(values["p"] - P.physical(0.5)) < 1e-9 and pins["p"].reverted
    assert pins["p"].lo <= P.physical(0.5) <= pins["p"].hi


Q, R = Param("q", 1, 100, "", "trades"), Param("r", 1, 100, "", "free")
THREE = SimpleNamespace(params=[P, Q, R], class_id="three", unit_start=lambda: {k: 0.5 for k in "pqr"},
                        physical=lambda u: {q.key: q.physical(u[q.key]) for q in (P, Q, R)},
                        start={q.key: q.physical(0.5) for q in (P, Q, R)})


class Three(Slope):
    """At full size figure f needs q where the search left it (0.8; at the class's 0.5 it is
    1.2 tolerances off), while g moves little with p and r: p and r may go back to the class,
    alone and together, q may not, so all three at once do not fit as well."""

    def __init__(self) -> None:
        super().__init__(THREE, scalable=True)

    def _run(self, points, full=False, first=0):
        out = []
        for i, u in enumerate(points):
            values = {"f": 100.0 + 40.0 * (0.8 - u["q"]), "g": 100.0 + 5.0 * (u["p"] - 0.65) + 5.0 * (u["r"] - 0.65)}
            loss, groups = loss_of(self.ev, values)  # type: ignore[arg-type]
            out.append(Trial(first + i, u, values, loss, 1.0 if full else 0.5, groups))
        return out


def test_unpinned_parameters_go_back_to_the_class_one_by_one_where_not_all_at_once():
    from ssdlab.fit import fitting
    from ssdlab.fit.profile_out import Pin

    s = Three()
    at = {"p": 0.8, "q": 0.8, "r": 0.8}
    same, best = s.evaluate([at])[0], s.evaluate([at], full=True)[0]
    assert not pinning.fits_as_well(s, s.evaluate([{k: 0.5 for k in at}], full=True)[0], best)
    pins = {k: Pin(k, q.physical(0.8), q.physical(0.8), q.physical(0.7), q.physical(0.9), False, "trades")
            for k, q in zip("pqr", (P, Q, R))}
    values, twin = fitting._revert_unpinned(s, best, same, pins)
    assert twin.scale == 1.0 and pinning.fits_as_well(s, twin, best)
    assert pins["p"].reverted and pins["r"].reverted and not pins["q"].reverted
    assert abs(values["p"] - P.physical(0.5)) < 1e-9 and abs(values["r"] - R.physical(0.5)) < 1e-9
    assert abs(values["q"] - Q.physical(0.8)) < 1e-9 and pins["q"].value == Q.physical(0.8)


class Rough(Slope):
    """Figure f at its target one finest slice step above the best (0.515 of the cube) and
    steep beyond, figure g nearly flat: the slice's better point is within the loss's roughness
    (better by less than SLACK, one finest step away)."""

    def _run(self, points, full=False, first=0):
        out = []
        for i, u in enumerate(points):
            values = {"f": 100.0 + 200.0 * abs(u["p"] - 0.515), "g": 100.0}
            loss, groups = loss_of(self.ev, values)  # type: ignore[arg-type]
            out.append(Trial(first + i, u, values, loss, 1.0, groups))
        return out


def test_a_better_slice_point_moves_the_best_only_where_the_search_had_not_settled():
    """pin() slices again around a better point only where that point says the best was on a
    slope (pinning.settled): within the loss's roughness the best stays and the parameter is
    pinned on the one set of slices; on a slope the best moves and is sliced again."""
    from ssdlab.fit.fitting import pin

    s = Rough()
    s._record(s.evaluate([{"p": 0.5}]))
    start = s.trials[0]
    assert s.evaluate([{"p": 0.515}])[0].loss < start.loss  # the finest ring's better point
    best, same, pins, moved = pin(s, start, search.Budget(10**9))
    assert same is start and best is start and pins["p"].pinned and moved is None
    slope = Slope()
    slope._record(slope.evaluate([{"p": 0.5}]))
    start = slope.trials[0]
    best, same, pins, moved = pin(slope, start, search.Budget(10**9))
    assert best.u["p"] < 0.5 and same is not start
    # what the move did (fit --json: pinning_move): the parameter from and to, the losses, sliced again
    (was, now), = moved["moved"].values()
    assert list(moved["moved"]) == ["p"] and now < was
    assert moved["loss"] == [start.loss, same.loss] and moved["loss"][1] < moved["loss"][0]
    assert moved["full_size_loss"] == [start.loss, best.loss] and moved["sliced_again"]


class Dip(Slope):
    """Figure f at its target at `at` of the cube, `steep` tolerances off per unit of the cube
    either side; figure g flat."""

    at, steep = 0.5, 1.0

    def _run(self, points, full=False, first=0):
        out = []
        for i, u in enumerate(points):
            values = {"f": 100.0 + 10.0 * self.steep * abs(u["p"] - self.at), "g": 100.0}
            loss, groups = loss_of(self.ev, values)  # type: ignore[arg-type]
            out.append(Trial(first + i, u, values, loss, 1.0, groups))
        return out


def test_a_slice_point_better_by_less_than_the_searchs_least_gain_leaves_the_best_settled():
    """A point a whole ring away better by less than what the search itself counts as a gain
    (search.STALL[1]) is the loss's roughness: the best stays, no second slices."""
    from ssdlab.fit.fitting import pin

    class Shallow(Dip):
        at, steep = 0.55, 8.0  # 0.4 tolerances off at 0.5: better by 0.16 a ring away

    s = Shallow()
    s._record(s.evaluate([{"p": 0.5}]))
    start = s.trials[0]
    ahead = s.evaluate([{"p": 0.55}])[0]
    assert 0 < start.loss - ahead.loss < search.STALL[1]
    best, same, pins, moved = pin(s, start, search.Budget(10**9))
    assert best is start and same is start and moved is None
    assert "did not settle" not in pins["p"].why


def test_a_point_one_finest_step_away_better_by_a_gain_moves_the_best():
    """A minimum narrower than the slices' rings: the point one finest step away is better
    by more than the search's least gain (though by less than SLACK), so the best was not
    settled there: it moves and is sliced again."""
    from ssdlab.fit.fitting import pin

    class Narrow(Dip):
        at, steep = 0.5 + pinning.FINE, 0.7 / pinning.FINE  # 0.7 tolerances off at 0.5

    s = Narrow()
    s._record(s.evaluate([{"p": 0.5}]))
    start = s.trials[0]
    gain = start.loss - s.evaluate([{"p": 0.5 + pinning.FINE}])[0].loss
    assert search.STALL[1] <= gain < pinning.SLACK
    best, same, pins, moved = pin(s, start, search.Budget(10**9))
    assert moved is not None and moved["sliced_again"]
    assert abs(same.u["p"] - (0.5 + pinning.FINE)) < 1e-9 and same.loss < start.loss


def test_pinned_says_how_closely_in_the_report_the_text_and_the_json(tmp_path, capsys):
    """A pinned parameter's range is a bracket: each side ends at the nearest value its slice
    looked at that no longer fits as well (or a bound), so the range says how closely the
    evidence pins it, not that every value in it fits as well. The report, the printed table,
    the --json document and the twin's file say "pinned" with that range against the twin's
    value (fit --json: `range_is`, `range_rel`, beside `lo`, `hi`), never "fits as well"."""
    from ssdlab.cli.fit import show
    from ssdlab.fit import report
    from ssdlab.fit.profile_out import range_rel

    s = Valley()
    s._record(s.evaluate([{"a": 0.5, "b": 0.5}]))
    best = s.trials[0]
    sliced = pinning.slices(s, best, search.Budget(10**9))
    pin = pinning.pins(s, best, sliced)["a"]
    assert pin.pinned and pin.range_is == "bracket"
    # the ends are values looked at that did not fit as well: the range is no "range that fits as well"
    ends = [t for t in sliced["a"] if A.physical(t.u["a"]) in (pin.lo, pin.hi)]
    assert len(ends) == 2 and not any(pinning.fits_as_well(s, t, best) for t in ends)
    lo, hi = range_rel(pin.value, pin.lo, pin.hi)
    assert lo == pytest.approx(pin.lo / pin.value - 1) and hi == pytest.approx(pin.hi / pin.value - 1) and lo < 0 < hi
    label = f"pinned to {100 * lo:+.1f}..{100 * hi:+.1f} %"
    row = {"key": "a", "value": pin.value, "unit": "", "class_value": 10.0, "pinned": True, "lo": pin.lo, "hi": pin.hi,
           "note": pin.why, "reverted": False, "sensitivity": None, "meaning": "a", "range_is": pin.range_is,
           "range_rel": [lo, hi]}
    assert report.pinned_label(row) == label
    assert report.pinned_label({**row, "pinned": False}) == "NOT pinned"
    assert report.pinned_label({**row, "range_rel": None}) == "pinned"  # a value of 0: its range alone says
    assert "nearest values" in pin.why  # the note says what the range is
    doc = {"class": "valley", "trials": 1, "seconds": 1.0, "evidence": [], "passed": 2, "total": 2,
           "scaled_trials": False, "parameters": [row], "figures": [], "crossval": [], "conflicts": [],
           "left_out": [], "twin": "twin.toml"}
    html = report._write(doc, tmp_path, [], "fit").read_text()
    assert label in html and "range that fits as well" not in html
    show({**doc, "stages": {}})
    out = capsys.readouterr().out
    assert label in out and "fits as well" not in out
    # a value the evidence does not pin: its range is what was seen to fit as well
    flat = Flat()
    flat._record(flat.evaluate([{"p": 0.5}]))
    wide = pinning.pins(flat, flat.trials[0], pinning.slices(flat, flat.trials[0], search.Budget(10**9)))["p"]
    assert not wide.pinned and wide.range_is == "seen"


def test_a_pinned_die_count_is_pinned_to_its_value_not_to_a_share_of_it():
    """A bracket of the die count ends at the neighbouring counts, which fit worse: the count
    itself is pinned, and the label gives no share (a kept document without `range_rel` too)."""
    from ssdlab.fit.profile_out import pinned_label

    dies = {"key": "dies", "value": 4.0, "lo": 2.0, "hi": 8.0, "pinned": True}
    assert pinned_label(dies) == "pinned" and pinned_label({**dies, "range_rel": None}) == "pinned"
    share = {"key": "slc.cache_share", "value": 0.07186, "lo": 0.06609, "hi": 0.07813, "pinned": True}
    assert pinned_label(share) == "pinned to -8.0..+8.7 %"


CEIL = Param("c", 1, 100, "", "a parameter whose best is beyond the search's ceiling")
FLOOR0 = Param("w", 0, 60, "us", "a parameter whose floor is 0: none of it", log=False)


def _one(q: Param) -> SimpleNamespace:
    return SimpleNamespace(params=[q], class_id="edge", unit_start=lambda: {q.key: 0.5},
                           physical=lambda u: {q.key: q.physical(u[q.key])}, start={q.key: q.physical(0.5)})


class Beyond(search.Search):
    """Figure f wants the parameter past the cube's end `to` (0.3 of the cube beyond it): every
    step back inside fits worse, so the best sits on the bound."""

    def __init__(self, q: Param, to: float) -> None:
        self.q, self.to = q, to
        figs = [Figure("d", "f", ("t", 0.0, None, 1, ()), lambda c: None, value=100.0, tol=0.1)]
        ev = SimpleNamespace(figures=figs, groups={"f": "f"}, scalable=lambda: False)
        super().__init__(ev, _one(q), 1, executor=None)  # type: ignore[arg-type]

    def _run(self, points, full=False, first=0):
        out = []
        for i, u in enumerate(points):
            want = 1.3 if self.to == 1.0 else -0.3
            values = {"f": 100.0 + 200.0 * abs(u[self.q.key] - want) * (1 if self.to == 0.0 else -1)}
            loss, groups = loss_of(self.ev, values)  # type: ignore[arg-type]
            out.append(Trial(first + i, u, values, loss, 1.0, groups))
        return out


def test_a_best_on_the_searchs_ceiling_is_not_pinned_there():
    """The evidence asks for more than the search's ceiling (a device faster than any drive of
    the class: a cache of 60 % of the capacity, the most the search looks at): the values
    inside fit worse, but the value is the search's bound, not one the evidence picks, so it is
    not pinned, and its note says where it is."""
    s = Beyond(CEIL, 1.0)
    s._record(s.evaluate([{"c": 1.0}]))
    best = s.trials[0]
    sliced = pinning.slices(s, best, search.Budget(10**9))
    assert sliced["c"] and not any(pinning.fits_as_well(s, t, best) for t in sliced["c"])
    pin = pinning.pins(s, best, sliced)["c"]
    assert not pin.pinned, pin.why
    assert pin.hi == pytest.approx(100.0) and "the search's ceiling" in pin.why and "100" in pin.why


def test_a_best_at_a_floor_of_none_is_pinned_at_most():
    """A floor no drive passes (0 us: none of it) is a value like any other: the evidence pins
    it there, to at most the nearest value that fits worse."""
    s = Beyond(FLOOR0, 0.0)
    s._record(s.evaluate([{"w": 0.0}]))
    best = s.trials[0]
    pin = pinning.pins(s, best, pinning.slices(s, best, search.Budget(10**9)))["w"]
    assert pin.pinned and pin.lo == 0.0 and 0 < pin.hi < 60 * pinning.RINGS[0] + 1e-9


def test_a_best_on_the_ceiling_that_stands_for_no_limit_is_pinned_there():
    """The top of a limit's range (a controller's read path) stands for no limit: nothing lies
    beyond it, so the evidence pins it there as at any other value."""
    q = Param("host.read_mbps", 100, 20000, "MB/s", "controller read path")
    s = Beyond(q, 1.0)
    s._record(s.evaluate([{q.key: 1.0}]))
    best = s.trials[0]
    pin = pinning.pins(s, best, pinning.slices(s, best, search.Budget(10**9)))[q.key]
    assert pin.pinned and pin.hi == pytest.approx(20000), pin.why
