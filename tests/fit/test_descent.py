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
