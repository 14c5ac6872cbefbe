"""The search's first steps: where the Levenberg-Marquardt steps start from when screening
chose another value of a discrete parameter (a whole number, chosen between, not
differentiated)."""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np

from ssdlab.fit import descent, screening
from ssdlab.fit.loss import Trial
from ssdlab.fit.space import Param

PARAMS = [Param("spare_pct", 2, 60, "%", "spare area"),
          Param("ftl.gc_buffers", 1, 64, "", "GC buffers", integer=True),
          Param("dies", 1, 64, "dies", "dies", pow2=True)]


RUN = ("toy", 0.0, None, 1, ())


def toy_search(params: list[Param], metrics, figs: list, x0: dict[str, float]):
    """A Search over `params` whose one run's metrics are `metrics(u)` (no simulator), with
    `figs` each its own group, starting at `x0`."""
    from ssdlab.executor import Done
    from ssdlab.fit import search as S

    by = {p.key: p for p in params}

    class Toy:
        workers = 1

        def run(self, units):
            for unit in units:
                yield Done(unit.key, {RUN: {"metrics": metrics(unit.args[1][RUN])}})

    class ToySearch(S.Search):
        def settings(self, u, full=False):
            return {RUN: u}, {}, 1.0

    ev = SimpleNamespace(figures=figs, groups={f.name: f.name for f in figs}, scalable=lambda: False,
                         runs=lambda: [RUN], plans={})
    start = SimpleNamespace(params=params, class_id="toy", text="", unit_start=lambda: dict(x0), start={},
                            physical=lambda u: {k: by[k].physical(x) for k, x in u.items()})
    return ToySearch(ev, start, 3, Toy())  # type: ignore[arg-type]


def search(trials: list[Trial], frozen: tuple[str, ...] = ()) -> SimpleNamespace:
    x0 = {"spare_pct": 0.2, "ftl.gc_buffers": 0.0, "dies": 0.5}
    return SimpleNamespace(start=SimpleNamespace(params=PARAMS), frozen={k: 0.0 for k in frozen},
                           trials=trials, x0=x0)


def trial(n: int, loss: float, **u: float) -> Trial:
    return Trial(n, {"spare_pct": 0.2, "ftl.gc_buffers": 0.0, "dies": 0.5, **u}, {}, loss)


def test_the_steps_also_go_from_the_starts_discrete_values():
    more_spare = trial(1, 20.0, spare_pct=0.6)
    fast_gc = trial(2, 10.0, **{"ftl.gc_buffers": 1.0})  # the best: 64 GC buffers
    s = search([trial(0, 40.0), more_spare, fast_gc, trial(3, 30.0, **{"ftl.gc_buffers": 0.02})])
    assert descent.other_discrete(s) is more_spare  # 0.02 of the cube is still 1 buffer: the same choice
    # the best keeps the start's discrete values: one start is enough
    assert descent.other_discrete(search([trial(0, 40.0), more_spare, trial(2, 50.0, **{"ftl.gc_buffers": 1.0})])) is None
    # a frozen discrete parameter (no figure moves with it) is no choice
    assert descent.other_discrete(search([trial(0, 40.0), fast_gc], frozen=("ftl.gc_buffers",))) is None


def test_a_policy_is_scanned_choice_by_choice_before_the_steps():
    """Each choice of a firmware policy (striping) is tried from the start, one trial a choice
    (the start's own already run is not run again), and the better becomes the start."""
    striping = Param("ftl.striping", 0, 1, "", "striping", log=False, integer=True, choices=("static", "dynamic"))
    asked: list[dict[str, float]] = []

    def evaluate(points, first, until):
        asked.extend(points)
        return [Trial(first + i, u, {}, 5.0 if u["ftl.striping"] == 1.0 else 50.0) for i, u in enumerate(points)]

    start = Trial(0, {"spare_pct": 0.2, "ftl.striping": 0.0}, {}, 50.0)
    s = SimpleNamespace(start=SimpleNamespace(params=[PARAMS[0], striping]), trials=[start], x0=dict(start.u),
                        evaluate=evaluate)
    s._record = s.trials.extend
    descent.scan_choices(s, SimpleNamespace(over=lambda n: False, deadline=float("inf")))
    assert asked == [{"spare_pct": 0.2, "ftl.striping": 1.0}]  # only the choice not yet run
    assert s.x0 == {"spare_pct": 0.2, "ftl.striping": 1.0}


def scan_dies(own: float, loss_of_dies):
    """The die-count scan from a class of `own` dies, the loss a function of the die count:
    the die counts run (batch by batch) and the start it leaves."""
    dies = PARAMS[2]
    asked: list[list[float]] = []

    def evaluate(points, first, until):
        asked.append([dies.physical(u["dies"]) for u in points])
        return [Trial(first + i, u, {}, loss_of_dies(dies.physical(u["dies"]))) for i, u in enumerate(points)]

    s = SimpleNamespace(start=SimpleNamespace(params=[PARAMS[0], dies],
                                              unit_start=lambda: {"spare_pct": 0.2, "dies": dies.unit_of(own)}),
                        trials=[], evaluate=evaluate, turned={})
    s._record = s.trials.extend
    descent.scan_pow2(s, SimpleNamespace(over=lambda n: False, deadline=float("inf")))
    return asked, dies.physical(s.x0["dies"])


def test_the_die_count_scan_stops_where_the_loss_has_turned():
    """The loss falls towards the drive's die count and rises past it: from the smallest to
    one past the class's own in one batch, then upwards one at a time while the largest run is
    the best; the dearest trial drives (the most dies) are not run once the loss has turned."""
    asked, best = scan_dies(8, lambda d: abs(math.log2(d) - 2))  # a drive of 4 dies, the class's 8
    assert asked == [[1, 2, 4, 8, 16]] and best == 4
    asked, best = scan_dies(8, lambda d: abs(math.log2(d) - 5))  # 32 dies: on upwards, one at a time
    assert asked == [[1, 2, 4, 8, 16], [32], [64]] and best == 32
    asked, best = scan_dies(64, lambda d: abs(math.log2(d) - 3))  # the class has the most: all in one batch
    assert asked == [[1, 2, 4, 8, 16, 32, 64]] and best == 8


def test_a_limit_at_none_is_lowered_to_where_it_binds_and_the_steps_go_on_from_there():
    """A drive whose write path (a limit) caps the clean write under what its NAND programs,
    and whose write after random writes keeps up thanks to the NAND's headroom: from "no
    limit" the steps cannot see the limit (a step at the top moves nothing), so they trade
    the two writes on the NAND's speed alone; with the limit lowered to where it binds they
    reach both."""
    from ssdlab.calibration import Figure
    from ssdlab.fit import search as S

    params = [Param("nand.speed", 100, 1000, "MB/s", "NAND program rate"),
              Param("host.write_mbps", 100, 20000, "MB/s", "write path")]
    by = {p.key: p for p in params}

    def rates(u: dict[str, float]) -> dict[str, float]:
        nand, limit = by["nand.speed"].physical(u["nand.speed"]), by["host.write_mbps"].physical(u["host.write_mbps"])
        return {"clean": min(limit, nand), "full": min(limit, 0.6 * nand)}  # GC takes 40 % of the NAND

    figs = [Figure("d", n, RUN, lambda c, n=n: c.m(RUN, n), value=v, tol=0.05) for n, v in (("clean", 260), ("full", 250))]
    s = toy_search(params, rates, figs, {"nand.speed": 0.3, "host.write_mbps": 1.0})
    s._record(s.evaluate([s.x0]))
    budget = S.Budget(10**6)
    stuck = descent.levenberg_marquardt(s, budget, ["nand.speed", "host.write_mbps"])
    assert stuck.u["host.write_mbps"] == 1.0 and stuck.loss > 1.0  # the limit unseen, a write fails
    edge = descent.limits_to_edge(s, budget)
    assert edge is not None and edge.loss < 0.05 and edge.loss < stuck.loss
    assert 240 < by["host.write_mbps"].physical(edge.u["host.write_mbps"]) < 280
    assert descent.limits_to_edge(s, budget) is None  # the limit is no longer at its top


def test_a_parameter_the_jacobian_barely_sees_is_not_stepped_to_a_bound():
    """A read time that moves the figure the steps correct by a hair (2 MB/s over its whole
    range, against 25 MB/s of tolerance: its finite step moves no figure), and a fragile
    figure (a fill's recovery peak) that breaks once that read time moves far: the damped
    steps scale each parameter by what the Jacobian sees of it, so if it were stepped every
    step of the batch would move it across the cube and break the peak; it is not, and the
    steps correct the NAND's speed."""
    from ssdlab.calibration import Figure
    from ssdlab.fit import search as S

    params = [Param("nand.speed", 100, 1000, "MB/s", "NAND program rate"),
              Param("nand.slc.read_us", 15, 100, "us", "SLC read")]
    by = {p.key: p for p in params}

    def figures(u: dict[str, float]) -> dict[str, float]:
        rate = by["nand.speed"].physical(u["nand.speed"]) + 2.0 * u["nand.slc.read_us"]
        return {"rate": rate, "peaks": 1.0 if 0.35 < u["nand.slc.read_us"] < 0.65 else 0.0}

    figs = [Figure("d", "rate", RUN, lambda c: c.m(RUN, "rate"), value=500, tol=0.05),
            Figure("d", "peaks", RUN, lambda c: c.m(RUN, "peaks"), value=1, tol=0.15)]
    s = toy_search(params, figures, figs, {"nand.speed": 0.5, "nand.slc.read_us": 0.5})
    first = s.evaluate([s.x0])[0]
    s._record([first])
    assert first.loss > 10  # 316 MB/s against 500
    best = descent.levenberg_marquardt(s, S.Budget(10**6), ["nand.speed", "nand.slc.read_us"])
    assert best.loss < 1.0 and best.values["peaks"] == 1.0
    assert best.u["nand.slc.read_us"] == 0.5


def test_the_steps_go_on_while_a_round_gains_a_tenth_of_the_loss(monkeypatch):
    """A round (a Jacobian and a batch of dampings) that lowers the loss by less than GAIN of
    itself ends the steps (the Jacobian sees no further); rounds that keep gaining go on past
    the four the steps once stopped at."""
    from ssdlab.fit import search as S

    def rounds_run(levels: list[float], gain: float = descent.GAIN) -> int:
        batches = iter(levels)
        calls = []

        def evaluate(points, first, until):
            calls.append(len(points))
            loss = next(batches)
            return [Trial(first + i, dict(u), {}, loss) for i, u in enumerate(points)]

        trials = [Trial(0, {"spare_pct": 0.5}, {}, 100.0)]
        s = SimpleNamespace(trials=trials, ev=SimpleNamespace(figures=[], groups={}), unseen=set(),
                            pace=0.0, evaluate=evaluate, _record=trials.extend)
        monkeypatch.setattr(descent, "residuals", lambda search, t: np.array([1.0]))
        monkeypatch.setattr(descent, "jacobian", lambda search, at, keys, until: np.array([[1.0]]))
        monkeypatch.setattr(descent, "group_weights", lambda search: np.array([1.0]))
        descent.levenberg_marquardt(s, S.Budget(10**6), ["spare_pct"], gain=gain)
        return len(calls)

    assert rounds_run([99.0, 50.0]) == 1  # 1 % gained: no second round
    halving = [100.0 / 2 ** (k + 1) for k in range(20)]
    assert rounds_run(halving) == descent.ROUNDS > 4
    assert rounds_run([50.0, 30.0, 29.0, 10.0]) == 3  # the third gains 3 %: the last round
    # a restart's steps go on while a round gains at all, up to ROUNDS
    assert rounds_run([50.0, 30.0, 29.0, 10.0, 10.0], gain=0.0) == 5
    assert rounds_run([99.0 - k for k in range(20)], gain=0.0) == descent.ROUNDS


def test_screening_runs_no_die_count_past_where_the_scan_saw_the_loss_turn():
    """The scan ran 1-16 dies and the loss rose past 8 (a drive of 8 dies): screening's grid
    for the die count stops at 16 (the 32- and 64-die trial drives are the dearest and only
    overshoot further); the other parameters get the whole grid. Where the loss has not
    turned (a drive of 64 dies), the die count's grid is whole too."""
    from ssdlab.calibration import Figure
    from ssdlab.fit import search as S

    dies = PARAMS[2]

    def metrics(n):
        def of(u):
            return {"rate": 100.0 * min(dies.physical(u["dies"]), n) / n * (1 + 0.1 * u["spare_pct"])
                    + max(0.0, dies.physical(u["dies"]) - n)}
        return of

    fig = Figure("d", "rate", RUN, lambda c: c.m(RUN, "rate"), value=105.0, tol=0.05)
    for n, largest in ((8, 16), (64, 64)):
        s = toy_search([PARAMS[0], dies], metrics(n), [fig], {"spare_pct": 0.5, "dies": dies.unit_of(8)})
        descent.scan_pow2(s, S.Budget(10**9))
        screening.screen(s, s.x0)
        ran = {dies.physical(t.u["dies"]) for t in s.trials}
        assert max(ran) == largest
        assert {t.u["spare_pct"] for t in s.trials if t.u["dies"] == s.x0["dies"]} >= set(screening.SCREEN_GRID)
