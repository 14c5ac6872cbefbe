"""The trial size's correction (fit/fidelity.py) on a drive of known shape (no simulator): a
figure that reads 20 % high on the trial drive pulls the search's best off the drive's own
optimum; the correction, measured at the best at full size, brings it back."""

from __future__ import annotations

from types import SimpleNamespace

from ssdlab.calibration import Figure
from ssdlab.executor import Done
from ssdlab.fit import fidelity, search
from ssdlab.fit.fitting import passes
from ssdlab.fit.space import Param

PARAMS = [Param(f"p{i}", 1, 100, "", f"parameter {i}") for i in range(2)]
TARGET = {"p0": 0.5, "p1": 0.7}
RUN = ("toy", 0.0, None, 1, ())


def _physical(u: dict[str, float]) -> dict[str, float]:
    return {p.key: p.physical(u[p.key]) for p in PARAMS}


START = SimpleNamespace(params=PARAMS, class_id="toy", text="not a profile", physical=_physical,
                        unit_start=lambda: {p.key: 0.4 for p in PARAMS},
                        start={p.key: PARAMS[0].physical(0.4) for p in PARAMS})


class Toy:
    """The 'drive': f_i = 100 + 60 (p_i - TARGET_i) at full size; at trial size f0 reads
    `trial_bias` times that (a plateau's end that comes later on fewer blocks)."""

    workers = 1

    def __init__(self, trial_bias: float):
        self.trial_bias = trial_bias

    def run(self, units):
        for unit in units:
            _, overrides, _, plans, _ = unit.args
            u = {k: float(x) for k, x in (o.split("=") for o in overrides[RUN])}
            values = {k.replace("p", "f"): 100.0 + 60.0 * (x - TARGET[k]) for k, x in u.items() if k in TARGET}
            if u["small"]:
                values["f0"] *= self.trial_bias
            yield Done(unit.key, {RUN: {"metrics": values}})


class ToySearch(search.Search):
    def __init__(self, drive: Toy):
        figs = [Figure("d", f"f{i}", RUN, lambda c, i=i: c.m(RUN, f"f{i}"), value=100.0, tol=0.1) for i in range(2)]
        ev = SimpleNamespace(figures=figs, groups={f.name: f.name for f in figs}, scalable=lambda: True,
                             runs=lambda: [RUN], plans={})
        super().__init__(ev, START, 3, drive)  # type: ignore[arg-type]

    def settings(self, u, full=False):
        small = not full
        return {RUN: [f"{k}={x!r}" for k, x in u.items()] + [f"small={int(small)}"]}, {}, 0.5 if small else 1.0


def _fitted(bias: float) -> tuple[ToySearch, search.Trial]:
    s = ToySearch(Toy(bias))
    s._record(s.evaluate([s.x0]))
    s.descend(search.Budget(200))
    return s, search.full_size_check(s, s.best(1))[0]


def test_the_correction_brings_the_best_to_the_drives_own_optimum():
    s, best = _fitted(1.2)
    f0 = s.ev.figures[0]
    # the search fitted the trial drive: at full size f0 reads about 100 / 1.2
    assert not passes(f0, best.values["f0"]) and best.values["f0"] < 90
    moved, record = fidelity.correct(s, best, until=float("inf"))
    assert record is not None and record["taken"] >= 1 and record["figures"] == ["f0"]
    assert moved.scale == 1.0 and all(passes(f, moved.values[f.name]) for f in s.ev.figures)
    assert abs(moved.u["p0"] - TARGET["p0"]) < 0.02 and moved.loss < 0.05 < best.loss
    # every trial of the search's size is scored as the drive's size would give it
    at_best = next(t for t in s.trials if t.u == moved.u)
    assert abs(at_best.values["f0"] - moved.values["f0"]) < 0.5


def test_no_correction_where_the_sizes_agree():
    s, best = _fitted(1.0)
    assert passes(s.ev.figures[0], best.values["f0"])
    moved, record = fidelity.correct(s, best, until=float("inf"))
    assert record is None and moved is best and not s.size_ratio
