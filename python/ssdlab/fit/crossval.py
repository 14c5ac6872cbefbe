"""Cross-validation: how far a twin predicts what it was not fitted to. Each group of figures
(a phase of the fingerprint, a test, the spec sheet) is held back in turn: a search of its
own fits the rest, and the held-back figures are measured on that search's best trial
(every trial runs every phase, so nothing runs twice) against the evidence.""" 

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Callable

from .evidence import Evidence
from .search import Budget, Search, Trial, residual
from .space import Start


@dataclass
class Held:
    group: str
    figure: str
    measured: str  # the evidence's value or range
    predicted: float | None
    error: float | None  # relative to the value, or to the nearer end of a range (0 inside)
    passed: bool
    fold_loss: float  # the fold's best loss on the figures it was fitted to
    measured_value: dict[str, Any] = field(default_factory=dict)  # `measured` as numbers, with the unit


def run(ev: Evidence, start: Start, seed: int, executor: Any, trials: int, deadline: float,
        on_trial: Callable[[Trial], None] | None = None, sampler: str = "cmaes",
        memo: dict[Any, Any] | None = None, stopped: Callable[[], bool] = lambda: False,
        record: Any = None) -> list[Held]:
    """One fold per group (groups of one figure too); [] when there is a single group.
    A fold's search is the search's opening (the die-count scan, screening and one round of
    steps after it, within `trials`): another basin and CMA-ES after it, 15-21 trials a fold in a
    256 GB drive's fingerprint fit, lowered none of its 14 folds' losses.
    `memo`: the main search's runs; a fold that goes the same way at first (the die-count
    scan and screening are fixed points around its own choice) reuses them instead of running
    them again: the points depend on the fold's own loss only, so nothing of the held-back
    group leaks in. `stopped`: asked before each fold; once true, no fold begins (nor after
    `deadline`, the fit's end: a fold's trials still running then are stopped, deadline.py).
    `record`: the fit's trial record (search.Search)."""
    groups = sorted(set(ev.groups[f.name] for f in ev.figures))
    if len(groups) < 2:
        return []
    out: list[Held] = []
    for i, g in enumerate(groups):
        if stopped() or time.monotonic() >= deadline:  # --minutes: no fold begins after it
            break
        left = len(groups) - i
        fold_deadline = time.monotonic() + max(0.0, deadline - time.monotonic()) / left
        fold = ev.without(g)
        s = Search(fold, start, seed, executor, sampler, on_trial, measured=ev, memo=memo, stop_at=deadline,
                   record=record)
        # one round of steps, whatever room the bound leaves (it counts reused trials: a
        # screening that ran fewer points gave some folds a second round and others none)
        s.rounds = 1
        s.run(Budget(trials, fold_deadline), opening_only=True)
        s.keep_late()
        if not s.trials:
            break  # the fit's end stopped its first
        best = s.best(1)[0]
        for f in ev.figures:
            if ev.groups[f.name] != g:
                continue
            v = best.values.get(f.name)
            ok, err = f.check(v)
            out.append(Held(g, f.name, f.published(), v, err, ok and abs(residual(f, v)) <= 1.0, best.loss,
                            f.published_numbers()))
    return out
