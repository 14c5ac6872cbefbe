"""The search's first steps: where the Levenberg-Marquardt steps start from when screening
chose another value of a discrete parameter (a whole number, chosen between, not
differentiated)."""

from __future__ import annotations

from types import SimpleNamespace

from ssdlab.fit import descent
from ssdlab.fit.loss import Trial
from ssdlab.fit.space import Param

PARAMS = [Param("spare_pct", 2, 60, "%", "spare area"),
          Param("ftl.gc_buffers", 1, 64, "", "GC buffers", integer=True),
          Param("dies", 1, 64, "dies", "dies", pow2=True)]


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
