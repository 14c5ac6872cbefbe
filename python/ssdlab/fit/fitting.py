"""A fit from start to end: the evidence, the class it suggests, the search (screening, CMA-ES,
the best few again at full size), how well each parameter is pinned, the twin's profile,
conflicts, and cross-validation. The CLI (cli/fit.py) checks the input and writes the files;
this module decides nothing about paths."""

from __future__ import annotations

import dataclasses
import math
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Callable

from ..errors import UserError
from . import crossval, deadline, descent, fidelity, pinning, prior, profile_out
from .evidence import Evidence
from .screening import SCREEN_GRID
from .search import Budget, Search, Trial, full_size_check, residual
from .space import Start, choose_class, start

SHARES = {"search": 0.55, "pinning": 0.15, "crossval": 0.30}  # of --minutes


def deadlines(total: float, crossval: bool) -> tuple[float, float]:
    """Seconds from the start at which the search and the pinning stop: their shares of
    `total`, and without cross-validation its share too, in proportion."""
    scale = 1.0 if crossval else 1.0 / (SHARES["search"] + SHARES["pinning"])
    return SHARES["search"] * scale * total, (SHARES["search"] + SHARES["pinning"]) * scale * total
RECHECK = 3  # the best few trials again at full size


def fold_trials(params: int) -> int:
    """A bound on a cross-validation fold's trials: the die-count scan (up to 8 powers of
    two) and screening, which a fold that chooses as the search did reuses, screening's
    combined candidate, and a Levenberg-Marquardt round from the fold's best (the fold's
    search ends after its opening: crossval.py)."""
    return 8 + (1 + len(SCREEN_GRID) * params) + 1 + (params + len(descent.LAMBDAS))


class Counted:
    """The executor, counting the trials it runs (a point already run is taken from the memo,
    not run): how a fit spends its time, stage by stage; and those the fit's end stopped
    unfinished (deadline.py)."""

    def __init__(self, executor: Any):
        self.executor, self.ran, self.stopped = executor, 0, 0
        self.workers = getattr(executor, "workers", 1)

    def run(self, units: list[Any]) -> Any:
        self.ran += len(units)
        for done in self.executor.run(units):
            self.stopped += isinstance(done.error, deadline.OutOfTime) and done.error.began
            yield done


@dataclass
class Request:
    evidence: Evidence
    trials: int = 400
    minutes: float | None = None
    seed: int = 42
    start: str | None = None  # a class (built-in profile) instead of the one the evidence suggests
    crossval: bool = True
    crossval_trials: int | None = None  # per fold; default: fold_trials()
    sampler: str = "cmaes"
    params: list[str] | None = None  # search only these (the rest keep the class's values)
    started: float | None = None  # time.monotonic() when the command began: --minutes counts from it
    # where finished trials are kept as they end and taken from when the same fit runs again
    # (trial_record.TrialRecord; None: nowhere)
    record: Any = None


@dataclass
class Result:
    start: Start
    best: Trial
    values: dict[str, float]  # the twin's physical values (unpinned ones maybe reverted)
    pins: dict[str, profile_out.Pin]
    figures: list[dict[str, Any]]
    conflicts: list[pinning.Conflict]
    held: list[crossval.Held]
    trials: int
    seconds: float
    search: Search = field(repr=False)
    twin_trial: Trial | None = None
    stages: dict[str, dict[str, float]] = field(default_factory=dict)  # stage -> seconds, trials run
    check_repair: dict[str, Any] | None = None  # what the check repair did (repair()), if it ran
    size_correction: dict[str, Any] | None = None  # what the trial size's correction did (fidelity.py)
    pinning_move: dict[str, Any] | None = None  # where pinning moved the best (pin()), if it did
    out_of_time: list[str] = field(default_factory=list)  # full-size runs --minutes left no time for

    def conflict_texts(self) -> list[str]:
        out = [c.text() for c in self.conflicts]
        r = self.check_repair
        if r and r["gave_up"]:
            out.append(f"{', '.join(r['failed'])}: the search's best fails it; the best of {r['tried']} points between "
                       f"it and the class that meets it fails {', '.join(r['gave_up'])} (reached only where the "
                       "check fails: a mechanism the simulator lacks, or one tuned where the figures do not look)")
        elif r and r["outcome"] != "moved":
            out.append(f"{', '.join(r['failed'])}: the search's best fails it, and none of {r['tried']} points "
                       f"between it and the class meets it at a lower loss ({r['outcome']})")
        return out

    def doc(self) -> dict[str, Any]:
        by = {q.key: q for q in self.start.params}
        return {
            "class": self.start.class_id, "trials": self.trials, "seconds": round(self.seconds, 1),
            "loss": self.best.loss, "passed": sum(f["pass"] for f in self.figures), "total": len(self.figures),
            "scaled_trials": self.search.scalable,
            "scaled_tests": sorted({r[0] for r in self.search.scaled_runs}) if self.search.scalable else [],
            "parameters": [{"key": k, "value": p.value, "unit": by[k].unit, "class_value": self.start.start[k],
                            "pinned": p.pinned, "lo": p.lo, "hi": p.hi, "note": p.why, "reverted": p.reverted,
                            "range_is": p.range_is, "class_loss": p.class_loss, "range_rel": profile_out.range_of(by[k], p)[0],
                            "range_at_bound": list(profile_out.range_of(by[k], p)[1]),
                            "sensitivity": self.search.sensitivity.get(k), "meaning": by[k].meaning,
                            "choices": list(by[k].choices)}  # a policy: value i names choices[i]
                           for k, p in self.pins.items()],
            "figures": self.figures,
            "conflicts": self.conflict_texts(),
            "check_repair": self.check_repair,
            "size_correction": self.size_correction,
            "pinning_move": self.pinning_move,
            "crossval": [vars(h) for h in self.held],
            "stages": self.stages,
            "search_phases": self.search.phases,
            "out_of_time": self.out_of_time,
        }


def figure_rows(ev: Evidence, values: dict[str, float | None]) -> list[dict[str, Any]]:
    rows = []
    for f in ev.figures:
        v = values.get(f.name)
        err = f.check(v)[1]
        rows.append({"figure": f.name, "group": ev.groups[f.name], "measured": f.published(),
                     "measured_value": f.published_numbers(), "twin": v,
                     "unit": f.unit, "error": err, "tolerance": f.tol,
                     "pass": passes(f, v), "source": f.source})
    return rows


class _Folds:
    """Cross-validation (crossval.run), started at once: in a thread of its own where the
    executor has several workers (results are the same either way: a trial is a function of
    its point), else when `held()` is first asked for. Under --minutes it waits for `held()`
    too: the pinning keeps its share of the time to itself, as the twin's values come first."""

    def __init__(self, req: Request, fitted: Evidence, st: Start, executor: Any, memo: dict[Any, Any],
                 deadline: float, on_trial: Callable[[Trial], None] | None):
        self.executor = Counted(executor)
        self.stopped = threading.Event()
        self.seconds = 0.0

        def run() -> list[crossval.Held]:
            t = time.monotonic()
            per = req.crossval_trials or fold_trials(len(st.params))
            try:
                return crossval.run(fitted, st, req.seed, self.executor, per, deadline, on_trial, req.sampler,
                                    memo=memo, stopped=self.stopped.is_set, record=req.record)
            finally:
                self.seconds = time.monotonic() - t

        self.run = run if req.crossval else None
        self.future: Future[list[crossval.Held]] | None = None
        if self.run and self.executor.workers > 1 and req.minutes is None:
            self.pool = ThreadPoolExecutor(1, thread_name_prefix="crossval")
            self.future = self.pool.submit(run)

    def held(self) -> list[crossval.Held]:
        if self.run is None:
            return []
        if self.future is None:
            return self.run()
        return self.future.result()

    def stop(self) -> None:
        """No fold begins after this; waits for the one running (the fit failed or was stopped)."""
        self.stopped.set()
        if self.future is not None:
            self.pool.shutdown(wait=True)


def check_testbeds(ev: Evidence, st: Start) -> None:
    """Each figure's testbed overrides apply to the class: a key or value the simulator
    refuses would fail every trial, so it is refused before any runs."""
    from ..errors import one_line
    from ..targets.sim import capacity

    for f in ev.figures:
        for tb in dict.fromkeys(r[4] for r in (f.run, *(r for _, r in f.needs)) if r[4]):
            try:
                capacity(st.text, list(tb))
            except ValueError as e:
                raise UserError(f"figure {f.name!r}: testbed {', '.join(tb)}: {one_line(e)}") from None


def fit(req: Request, executor: Any, on_trial: Callable[[str, Trial], None] | None = None) -> Result:
    ev = req.evidence
    if not ev.figures:
        why = "; ".join(ev.left_out[:3]) or "no figures"
        raise UserError(f"the evidence pins nothing: {why}. Give fingerprint runs (ssdlab run fingerprint) or "
                        "figures of the drive itself")
    t0 = time.monotonic() if req.started is None else req.started
    executor = Counted(executor)
    stages: dict[str, dict[str, float]] = {}
    mark = [t0, 0]

    def stage(name: str) -> None:
        now = time.monotonic()
        stages[name] = {"seconds": round(now - mark[0], 1), "trials_run": executor.ran - mark[1]}
        mark[:] = [now, executor.ran]

    total = req.minutes * 60 if req.minutes else math.inf
    class_id = req.start or ev.start or choose_class(ev.facts)
    st = start(class_id, ev.facts, ev.inferred)
    check_testbeds(ev, st)
    if req.params is not None:
        unknown = [k for k in req.params if k not in {q.key for q in st.params}]
        if unknown:
            raise UserError(f"--params {unknown[0]}: not a parameter of class {class_id}; its parameters are "
                            + ", ".join(q.key for q in st.params))
        st.params = [q for q in st.params if q.key in req.params]

    def hook(stage: str) -> Callable[[Trial], None] | None:
        return (lambda t: on_trial(stage, t)) if on_trial else None

    fitted, checks = ev.checks_apart()
    # a figure marked expected_failure needs a mechanism the simulator lacks: measured and
    # reported, not fitted (no parameter reaches it, and a compromise would pull the others)
    missing = [f for f in fitted.figures if f.xfail]
    fitted = dataclasses.replace(fitted, figures=[f for f in fitted.figures if not f.xfail])
    if not fitted.figures:
        raise UserError(f"every figure is marked expected_failure ({missing[0].name!r}: a mechanism the simulator "
                        "lacks): nothing to fit to; give figures the simulator can reach")
    search = Search(fitted, st, req.seed, executor, req.sampler, hook("search"), stop_at=t0 + total,
                    record=req.record)
    # the checks' own runs, on the best few and the twin (full size: their tests may not
    # scale), with the whole evidence: its loss leaves out the expected failures, measured
    reachable = dataclasses.replace(ev, figures=[f for f in ev.figures if not f.xfail])
    checker = Search(reachable, st, req.seed, executor, full_size=True, measured=ev,
                     stop_at=t0 + total, record=req.record) if checks else None
    search_s, pinning_s = deadlines(total, req.crossval)
    search.run(Budget(req.trials, t0 + search_s))
    search.keep_late()
    if not search.trials:  # the fit's end (deadline.py) stopped the first
        raise UserError(f"--minutes {req.minutes:g} ended before any trial of the search did: nothing was fitted; "
                        "give it more minutes")
    # cross-validation needs the search's runs only (its memo): in a thread of its own it runs
    # beside the rest on the same workers, which the rest's small batches (a point at full
    # size, a slice) leave idle
    folds = _Folds(req, fitted, st, executor.executor, search.memo, t0 + total, hook("crossval"))
    late: list[str] = []  # what --minutes left no time for (Result.out_of_time)
    try:
        # the full-size runs (the best few again, the checks) take the pinning's time: none
        # begins after its share ends, whatever the search left of it
        checks_until = t0 + pinning_s
        check_s = checker.full_round_s(search) if checker and total < math.inf else 0.0
        best = checked(checker, full_size_check(search, search.best(RECHECK), checks_until),
                       lambda: full_size_check(search, search.best(4 * RECHECK), checks_until), checks_until,
                       check_s)
        if search.scalable and best.scale != 1.0:
            late.append("the search's best again at the drive's own size")
        stage("search")
        best, sized = fidelity.correct(search, best, t0 + pinning_s)
        if sized:
            stage("size correction")
        repaired = None
        if checker:  # most of the pinning's time at most: a repaired best still gets pinned
            best, repaired = repair(search, checker, best,
                                    time.monotonic() + 0.6 * max(0.0, t0 + pinning_s - time.monotonic()), check_s)
            stage("check repair")
        ran = checker.evaluate([best.u], until=checks_until, round_s=check_s) if checker else []  # (memo: already run)
        met = ran[0] if ran else None
        best, same, pins, moved = pin(search, best, Budget(10**9, t0 + pinning_s))
        if unchecked := prior.unchecked(search, pins):
            late.append(unchecked)
        values, twin_trial = _revert_unpinned(search, best, same, pins, t0 + pinning_s)
        conflicts = pinning.conflicts(search, same)
        stage("pinning")
        if checker or missing:  # the twin on the whole evidence: its checks, the figures not fitted
            whole = checker or Search(reachable, st, req.seed, executor, full_size=True, measured=ev,
                                      stop_at=t0 + total, record=req.record)
            measured = whole.evaluate([twin_trial.u], until=t0 + total, rounds=1,
                                      round_s=whole.full_round_s(search) if total < math.inf else 0.0)
            if measured:
                twin_trial = measured[0]
            if met is not None and (not measured or meets(whole.ev, met) and not meets(whole.ev, twin_trial)):
                # pinning moved the best, or set values back, to where a check fails (or
                # --minutes left no time to check where they went): the checked point is the
                # twin (the pins still describe its neighbourhood)
                twin_trial, values = met, search.start.physical(met.u)
                for k, p in pins.items():  # what the twin has is the checked point's value
                    if k in values and values[k] != p.value:
                        p.value, p.reverted = values[k], False
            elif not measured:
                late.append("the checks and the figures not fitted, on the twin")
        # of the figures fitted: a check is a bound, not a prediction
        held = folds.held()
        if req.crossval:  # its own seconds and trials: beside the stages above, not after them
            stages["crossval"] = {"seconds": round(folds.seconds, 1), "trials_run": folds.executor.ran}
            groups = {fitted.groups[f.name] for f in fitted.figures}
            if len(groups) > 1 and len({h.group for h in held}) < len(groups):
                late.append(f"cross-validation of {len(groups) - len({h.group for h in held})} of "
                            f"{len(groups)} groups of figures")
        stopped = executor.stopped + folds.executor.stopped
        if stopped:
            late.append(f"the rest of {stopped} trial{'s' if stopped > 1 else ''} running at its end "
                        "(stopped, not counted)")
        rows = figure_rows(ev, twin_trial.values)
        lacks = {f.name: f.xfail for f in missing}
        for r in rows:  # what the search fitted to (a check and an expected failure are not)
            r["fitted"] = r["figure"] in {f.name for f in fitted.figures}
            if r["figure"] in lacks:
                r["expected_failure"] = lacks[r["figure"]]
    finally:
        folds.stop()
    return Result(st, best, values, pins, rows, conflicts, held, len(search.trials), time.monotonic() - t0,
                  search, twin_trial, stages, repaired, sized, moved, late)


def checked(checker: Search | None, cands: list[Trial], more: Callable[[], list[Trial]] = list,
            until: float = math.inf, round_s: float = 0.0) -> Trial:
    """The best of the search's best few (ranked) once the checks run on them too: the first
    that meets every check, else the lowest loss on the whole evidence. When none of `cands`
    meets them, `more` (the next few of the search's best) are checked as well: the best points
    are often neighbours that share a flaw. No check begins that would end past `until`
    (--minutes; a round of them takes about `round_s`): with none run, the first of `cands`."""
    if checker is None:
        return cands[0]
    tried: list[tuple[Trial, Trial]] = []
    for first in (True, False):  # the next few only when needed (full size: each may be a run)
        if not first and time.monotonic() >= until:
            break
        batch = cands if first else [t for t in more() if all(t.u != c.u for c in cands)]
        # one round of the workers at a time: a full-size check can take longer than a
        # short --minutes, and a begun round runs to its end
        whole = checker.evaluate([t.u for t in batch], until=until, rounds=1, round_s=round_s)
        batch = batch[:len(whole)]
        ok = [c for c, w in zip(batch, whole) if meets(checker.ev, w)]
        if ok:
            return ok[0]
        tried += list(zip(batch, whole))
    if not tried:
        return cands[0]
    return min(enumerate(tried), key=lambda iw: (iw[1][1].loss, iw[0]))[1][0]


def repair(search: Search, checker: Search, best: Trial, until: float,
           round_s: float = 0.0) -> tuple[Trial, dict[str, Any] | None]:
    """None of the search's best meets a check (a bound any sane drive meets: no
    multi-second stall), while the class does: the figures were reached with a mechanism
    that misbehaves where the figures do not look. Each parameter the best moved from the
    class is set back alone; the best is moved a quarter, half and three quarters of the way
    back; then each moved parameter alone over the screening grid (a stall can end at the
    other end of a range: a reclaim that stops the host ends when it runs alongside). Each
    point is a full-size run with the checks, none begun after `until`; the point that meets
    every check with the lowest loss on the whole evidence is taken, if it is lower than the
    best's (a failed check weighs as any missed figure). With it, what it did (None when the
    best meets the checks): the checks the best fails, the points tried and met, and the
    figures the best passed that the point taken fails (a trade-off: the report's conflict)."""
    ev = checker.ev
    ran = checker.evaluate([best.u], until=until, rounds=1, round_s=round_s)  # (memo: already run, unless --minutes left no time)
    if not ran or meets(ev, ran[0]):
        return best, None
    first = ran[0]
    record: dict[str, Any] = {"failed": [f.name for f in ev.figures if f.kind == "behaviour"
                                         and not passes(f, first.values.get(f.name))],
                              "tried": 1, "met": 0, "outcome": "kept", "gave_up": []}
    x0 = search.x0
    home = checker.evaluate([x0], until=until, rounds=1, round_s=round_s)
    if not home or not meets(ev, home[0]):
        record["outcome"] = "class fails it too" if home else "no time"
        return best, record  # the class fails it too: no way back to a point that meets it
    moved = [k for k in search.free() if abs(best.u[k] - x0[k]) > 1e-3]
    points = [{**best.u, k: x0[k]} for k in moved]
    points += [{k: b + f * (x0[k] - b) for k, b in best.u.items()} for f in (0.25, 0.5, 0.75)]
    points += [{**best.u, k: g} for k in moved for g in SCREEN_GRID
               if abs(g - best.u[k]) > 1e-3 and abs(g - x0[k]) > 1e-3]
    done = checker.evaluate(points, until=until, rounds=1, round_s=round_s)
    ok = [w for w in [*done, home[0]] if meets(ev, w)]
    record.update(tried=2 + len(done), met=len(ok))
    top = min(ok, key=lambda w: w.loss)
    if top.loss >= first.loss:
        return best, record
    record.update(outcome="class" if all(abs(top.u[k] - x0[k]) <= 1e-3 for k in x0) else "moved",
                  gave_up=[f.name for f in ev.figures if f.kind != "behaviour" and not f.xfail
                           and passes(f, first.values.get(f.name)) and not passes(f, top.values.get(f.name))])
    ran = search.evaluate([top.u])  # a trial of the search's own size, for the pinning
    if not ran:  # the fit's end came first
        record["outcome"] = "no time"
        return best, record
    tr = ran[0]
    tr.number = len(search.trials)
    search.trials.append(tr)
    return full_size_check(search, [tr])[0], record


def meets(ev: Evidence, t: Trial) -> bool:
    """Whether trial `t` meets every behaviour figure of `ev` (as the report's pass column)."""
    return all(passes(f, t.values.get(f.name)) for f in ev.figures if f.kind == "behaviour")


def passes(f: Any, v: float | None) -> bool:
    """A figure's pass: its own check, and within one tolerance in the loss."""
    return bool(f.check(v)[0] and abs(residual(f, v)) <= 1.0)


def pin(search: Search, best: Trial, budget: Budget) -> tuple[Trial, Trial, dict[str, profile_out.Pin],
                                                              dict[str, Any] | None]:
    """The pins, and the best (maybe moved) with its trial of the search's size. Pinning
    compares trials of the search's own size with the best's trial of that size; a slice that
    finds a better point where the search had not settled (pinning.settled) moves the best
    there and slices again (once); one within the loss's roughness of it does not (the pins
    read the best as settled there). With what the move did (None when the best stayed): the
    parameters moved (physical values from and to), the loss at the search's size and at the
    drive's own (the twin's size) before and after, and whether the slices ran again. A pin
    whose class value lies outside its bracket is checked there (prior.py: the bracket may be a
    local minimum's)."""
    st = search.start
    same = next(t for t in search.trials if t.number == best.number)
    sliced = pinning.slices(search, same, budget)
    ran = [t for ts in sliced.values() for t in ts if not t.error]
    better = min(ran, key=lambda t: t.loss, default=same)
    if all(pinning.settled(same, t) for t in ran):
        pins = pinning.pins(search, same, sliced, pinning.trades(search, same, budget))
        prior.check(search, best, same, pins, budget.deadline)
        return best, same, pins, None
    better.number = len(search.trials)
    search.trials.append(better)
    before = best
    best = full_size_check(search, [better], budget.deadline)[0]
    again = pinning.slices(search, better, budget)
    a, b = st.physical(same.u), st.physical(better.u)
    move = {"moved": {k: [a[k], b[k]] for k in a if a[k] != b[k]}, "loss": [same.loss, better.loss],
            "full_size_loss": [before.loss, best.loss], "sliced_again": bool(again)}
    if again:
        pins = pinning.pins(search, better, again, pinning.trades(search, better, budget))
        prior.check(search, best, better, pins, budget.deadline)
        return best, better, pins, move
    # the budget ran out: the first slices, around a point one slice step away (the parameter
    # that moved reads "did not settle"), say more than none; the values are the twin's
    pins = pinning.pins(search, same, sliced)
    for k, v in st.physical(best.u).items():
        if k in pins:
            pins[k].value = v
    return best, same, pins, move


def _revert_unpinned(search: Search, best: Trial, same: Trial, pins: dict[str, profile_out.Pin],
                     until: float = math.inf) -> tuple[dict[str, float], Trial]:
    """The twin's values: the best trial's, with the parameters the evidence does not pin set
    back to the class's values where the fit stays as good (pinning.fits_as_well) at the
    drive's own size, the twin's (a figure the trial drive reads off, such as a 1 % low of
    rare stalls, would keep a value the full-size twin does not need): all of them at once if
    that fits as well; else each alone (one batch), then those that fit as well alone, the
    best-fitting first, as many together as still fit as well (a second batch, every prefix of
    them). A parameter that trades with another may go back alone while the two together may
    not. Else the best's. None of these runs begins after `until`."""
    st = search.start
    for k in search.frozen:
        pins[k].reverted = True
    unpinned = [k for k, p in pins.items() if not p.pinned and k not in search.frozen]
    start_u = st.unit_start()
    ref = best if search.scalable else same
    moved = [k for k in unpinned if abs(best.u[k] - start_u[k]) > 1e-9]
    at_class = [k for k in unpinned if k not in moved]

    def point(keys: list[str]) -> dict[str, float]:
        return {**best.u, **{k: start_u[k] for k in keys}}

    def run(keys_list: list[list[str]]) -> list[Trial]:  # the full-size best against the full-size twin
        return search.evaluate([point(keys) for keys in keys_list], full=search.scalable, until=until)

    def take(keys: list[str], trial: Trial) -> tuple[dict[str, float], Trial]:
        for k in [*at_class, *keys]:  # the class's value fits as well: it is in the range
            pins[k].reverted = True
            pins[k].value = st.start[k]
            pins[k].lo, pins[k].hi = min(pins[k].lo, st.start[k]), max(pins[k].hi, st.start[k])
        return st.physical(point(keys)), trial

    if not moved:
        return take([], best)
    ran = search.evaluate([point(moved)], full=search.scalable, until=until)
    if not ran:  # no time left to try the class's values: the search's
        return take([], best)
    whole = ran[0]
    if pinning.fits_as_well(search, whole, ref):
        return take(moved, whole)
    alone = run([[k] for k in moved]) if len(moved) > 1 else []
    ok = sorted(((t.loss, i) for i, t in enumerate(alone) if pinning.fits_as_well(search, t, ref)))
    order = [moved[i] for _, i in ok]
    together = run([order[:n] for n in range(2, len(order) + 1)])
    for n in range(len(together), 0, -1):
        if pinning.fits_as_well(search, together[n - 1], ref):
            return take(order[:n + 1], together[n - 1])
    if order:
        return take(order[:1], alone[ok[0][1]])
    return take([], best)


def twin_text(res: Result, twin_id: str, name: str, evidence: str, seed: int) -> str:
    return profile_out.write(res.start, res.values, res.pins, twin_id, name, evidence, seed, res.trials)


def twin_phases(res: Result, ev: Evidence) -> list[Any] | None:
    """The twin's fingerprint at full size, phase by phase (for the report's overlay), on the
    plan of the evidence's fingerprint run; None without one."""
    from ..figures.model import ReportPhase
    from ..methodology import Options, get
    from ..runner import walk_phases
    from ..targets.sim import SimTarget

    run = next(iter(ev.plans), None)  # a stored run replayed from its phases (the fingerprint)
    if run is None:
        return None
    target = SimTarget(res.start.text, res.start.overrides(res.values), seed=res.search.seed)
    test = get(run[0])
    opts = Options(spare=run[1], own=ev.plans[run].scaled(1.0, until_steady=False))  # the whole stretch
    results = walk_phases(test, target, target.identify().capacity, opts)
    return [ReportPhase.from_result(r.phase.name, r) for r in results]
