"""Cross-validation's folds: what a fold's search runs."""

from __future__ import annotations

import math
from types import SimpleNamespace

from ssdlab.fit import crossval, search
from ssdlab.fit.descent import LAMBDAS
from ssdlab.fit.loss import Trial, loss_of
from test_search import Linear, Stuck


def test_a_folds_search_is_the_searchs_opening():
    """A fold runs the die-count scan, screening and the steps after them (within its
    trials), and not another basin or CMA-ES, which in a 256 GB drive's fingerprint fit
    lowered none of its 14 folds' losses; the search itself goes on from there while a figure
    fails."""
    fold = Stuck(scalable=True)
    fold.run(search.Budget(400), opening_only=True)
    assert fold.failing() and [p["phase"] for p in fold.phases] == ["screen", "steps"]
    whole = Stuck(scalable=True)
    whole.run(search.Budget(400))
    assert "cma-es" in [p["phase"] for p in whole.phases]
    assert len(whole.trials) > len(fold.trials)


class Curved(Linear):
    """Linear, with figures exponential in their parameters: the steps take several rounds."""

    def _run(self, points, full=False, first=0):
        out = []
        for t in super()._run(points, full, first):
            values = {k: 100.0 * math.exp((v - 100.0) / 20.0) for k, v in t.values.items()}
            loss, groups = loss_of(self.ev, values)  # type: ignore[arg-type]
            out.append(Trial(t.number, t.u, values, loss, 1.0, groups))
        return out


def test_a_fold_takes_one_round_of_steps_whatever_room_its_bound_leaves(monkeypatch):
    """The search's steps go on for rounds while they gain; each cross-validation fold takes
    one round after its screening, with room for many more in its bound (the bound counts
    the trials a fold reuses, so what room it leaves says nothing of the fold)."""
    whole = Curved(scalable=True)
    whole.run(search.Budget(400), opening_only=True)
    round_ = len(whole.start.params) + len(LAMBDAS)
    steps = [p["trials"] for p in whole.phases if p["phase"] == "steps"]
    assert steps and steps[0] >= 2 * round_
    folds: list[Curved] = []

    def fold_search(ev, start, seed, executor, sampler, on_trial, measured, memo, stop_at, record=None):
        s = Curved(scalable=True)
        s.ev = SimpleNamespace(**{**vars(s.ev), "figures": ev.figures})
        folds.append(s)
        return s

    monkeypatch.setattr(crossval, "Search", fold_search)
    ev = whole.ev
    ev = SimpleNamespace(**vars(ev), without=lambda g: SimpleNamespace(
        figures=[f for f in ev.figures if ev.groups[f.name] != g]))
    held = crossval.run(ev, whole.start, 3, None, 400, math.inf)
    assert len(folds) == len(ev.figures) and len(held) == len(ev.figures)
    for fold in folds:
        assert [p["trials"] for p in fold.phases if p["phase"] == "steps"] == [round_]


def test_folds_run_beside_the_pinning_only_on_several_workers_and_without_a_time_bound(monkeypatch):
    """On one worker, or under --minutes (the pinning keeps its share of the time), the folds
    run when asked for, after the pinning; else at once, in a thread of their own."""
    import threading

    from ssdlab.fit import fitting

    where: list[str] = []
    monkeypatch.setattr(crossval, "run", lambda *a, **k: where.append(threading.current_thread().name) or [])
    start = SimpleNamespace(params=[])
    for workers, minutes, beside in ((2, None, True), (1, None, False), (2, 5.0, False)):
        req = fitting.Request(evidence=None, minutes=minutes)
        folds = fitting._Folds(req, None, start, SimpleNamespace(workers=workers), {}, math.inf, None)
        assert (folds.future is not None) == beside
        assert folds.held() == []
        folds.stop()
        assert where.pop().startswith("crossval") == beside
