"""The search: Optuna's CMA-ES (or TPE) over the unit cube of space.py, from the class's
values, trials as ordinary runs through executor.py (local processes or Ray).

Deterministic for a seed: trials are asked in batches of BATCH (whatever the number of
workers), run in parallel, and told to the optimizer in trial order, and a trial is a
function of its parameters (the simulator is deterministic), so --jobs and --ray change the
time a fit takes and nothing else. A --minutes bound stops at a batch's end, so it fixes the
result only with the number of trials it reached (the report gives it); at the fit's own end
it stops the trials still running (deadline.py): a batch keeps the trials up to the first
that did not end.

A trial's loss: loss.py. Before CMA-ES, descent.py scans the die count and takes
Levenberg-Marquardt steps from the class. A point already run is taken from the memo (this
fit's), else from the trial record (trial_record.py: what this fit, or a stopped run of it,
kept on disk), else run; a trial is written to the record as it ends."""

from __future__ import annotations

import functools
import math
import time
from dataclasses import dataclass
from typing import Any, Callable, Iterable

from ..calibration import RunKey
from . import deadline, descent, screening
from .screening import SCREEN_GRID
from .evidence import TWIN, Evidence
from .loss import CAP, Trial, loss_of, measure_all, residual
from .space import UNLIMITED, Start, scaled

BATCH = 8  # trials asked at once: fixed, so the result does not depend on the workers
TRIAL_BLOCKS = 256  # blocks per plane of a trial's drive when trials may run smaller (fewer: the SLC cache and the write buffer stop scaling)
SIGMA0 = 0.1  # CMA-ES's first step in the unit cube: the class is close (+-30 % is 0.1-0.2 of a range)
REFINE = (0.6, 0.03)  # after this share of the trials, CMA-ES starts again from the best with this step
NEAR = 2.0  # tolerances: explore from a trial this near a figure the best misses by more
# a CMA-ES stage ends once STALL[0] batches have not lowered the best loss by STALL[1] (a
# quarter of what still fits as well, pinning.SLACK; the loss's roughness between neighbouring
# points is about that): CMA-ES's own tolfun, so the trials left go to the next stage or are not run
STALL = (4, 0.25)


def run_trial(class_text: str, overrides: dict[RunKey, list[str]], runs: list[RunKey],
              plans: dict[RunKey, Any], seed: int, stop_at: float | None = None) -> dict[RunKey, dict[str, Any]]:
    """One trial in a worker: every run the evidence needs, on the class profile with the
    trial's overrides for that run (module level: it is pickled to the worker). `stop_at`
    (time.time()): OutOfTime once it has passed, the run going then stopped (deadline.py)."""
    from ..validate import run_one

    deadline.check(stop_at, began=False)
    out = {}
    try:
        for r in runs:
            deadline.check(stop_at)
            out[r] = run_one(TWIN, r, seed, tuple(overrides[r]), profile_text=class_text, own=plans.get(r),
                             on_start=deadline.watch(stop_at))
    except deadline.OutOfTime:
        raise deadline.OutOfTime() from None  # without the stopped phase's partial result
    return out


SEEDS = 2**32  # the search's sampler (numpy's legacy seeding) takes a seed below this


@dataclass
class Budget:
    trials: int
    deadline: float = math.inf  # time.monotonic() at which no new batch starts

    def over(self, done: int) -> bool:
        return done >= self.trials or time.monotonic() >= self.deadline

    def room(self, done: int, n: int, pace: float) -> bool:
        """Whether `n` more trials fit: in the count, and before the deadline at `pace`
        seconds a trial (a batch of full-size trials can take minutes: one that would end
        past the deadline is not begun)."""
        return not self.over(done + n) and time.monotonic() + n * pace < self.deadline


class Search:
    """One search over `start`'s parameters against `ev` (figures left out of `ev` do not
    count: cross-validation's folds are searches of their own)."""

    def __init__(self, ev: Evidence, start: Start, seed: int, executor: Any, sampler: str = "cmaes",
                 on_trial: Callable[[Trial], None] | None = None, full_size: bool = False,
                 measured: Evidence | None = None, memo: dict[Any, Any] | None = None,
                 stop_at: float = math.inf, record: Any = None):
        """`measured`: the evidence every trial runs and measures (default `ev`); the loss
        reads `ev`'s figures only (a cross-validation fold: the held-back group is measured,
        not fitted). `memo`: the measured figures of points already run, shared between
        searches of the same evidence (a point is a function of its parameters). `stop_at`
        (time.monotonic()): the fit's end, where trials still running are stopped and none
        begins (deadline.py). `record`: a trial_record.TrialRecord, where each trial is kept as
        it ends and from which a trial an earlier fit ran is taken instead of run (None: no
        record)."""
        self.ev, self.start, self.seed, self.executor = ev, start, seed, executor
        self.record = record
        self.measured = measured or ev
        self.memo: dict[Any, Any] = memo if memo is not None else {}
        self.sampler_name = sampler
        self.on_trial = on_trial
        self.scalable = self.measured.scalable() and not full_size
        self.trials: list[Trial] = []
        self.frozen: dict[str, float] = {}  # parameters no figure moves with: key -> sensitivity
        self.sensitivity: dict[str, float] = {}
        self.x0 = start.unit_start()  # where screening starts (after the die-count scan)
        # wall seconds per trial run, of the last batch (Budget.room; one all from the trial
        # record: its trials' recorded seconds over the workers)
        self.pace = 0.0
        self.unseen: set[str] = set()  # parameters whose finite step moved no figure (descent.py)
        self.rounds = descent.ROUNDS  # of the steps, each time they run (a fold's opening: 1)
        # a power of two the die-count scan ran upwards until the loss turned: key -> (the
        # largest value it ran, the other parameters' values it ran at; descent.scan_pow2)
        self.turned: dict[str, tuple[float, dict[str, float]]] = {}
        self.gated_off: set[str] = set()  # parameters left unscreened, their mechanism off there
        self.opened: set[str] = set()  # gates whose mechanism's parameters were screened with it on
        # figure -> its value at full size over the trial's, at the best (fidelity.py): what a
        # trial's figures are multiplied by (none: the trial's own)
        self.size_ratio: dict[str, float] = {}
        # what the search spent on each of its steps, in order (fit --json: search_phases)
        self.phases: list[dict[str, Any]] = []
        self._since = (time.monotonic(), 0)
        self.stop_at = stop_at
        self.late: list[Trial] = []  # trials that ended past one the fit's end stopped (keep_late)

    @functools.cached_property
    def plans(self) -> dict[RunKey, Any]:
        """The runs' own options at the drive's size."""
        return self.measured.run_plans()

    @functools.cached_property
    def scaled_runs(self) -> set[RunKey]:
        """The runs a trial makes on the smaller drive."""
        return set(self.measured.scaled_runs())

    def mark(self, phase: str) -> None:
        """The trials run and the seconds since the last mark were `phase`'s."""
        now, n = time.monotonic(), len(self.trials)
        if n > self._since[1]:
            best = self.best()
            self.phases.append({"phase": phase, "trials": n - self._since[1],
                                "seconds": round(now - self._since[0], 1),
                                # where the search stood after it: what each step bought
                                "loss": round(best[0].loss, 4) if best else None,
                                "failing": self.missed(best[0]) if best else None})
        self._since = (now, n)

    # -- running trials ------------------------------------------------------------------------
    def settings(self, u: dict[str, float], full: bool = False) -> tuple[dict[RunKey, list[str]], dict[RunKey, Any], float]:
        """The trial's overrides for each run (a scale-free test's runs on the smaller drive),
        the runs' own options and the size factor."""
        ov = self.start.overrides(self.start.physical(u))
        by_run = {r: ov for r in self.measured.runs()}
        f = 1.0
        if self.scalable and not full:
            extra, f = scaled(ov, self.start.profile, TRIAL_BLOCKS)
            by_run.update({r: ov + extra for r in self.scaled_runs})
        plans = {r: p.scaled(f) if hasattr(p, "scaled") else p for r, p in self.plans.items()}
        return by_run, plans, f

    def evaluate(self, points: list[dict[str, float]], full: bool = False, first: int = 0,
                 until: float = math.inf, rounds: int = 2, round_s: float = 0.0) -> list[Trial]:
        """Run the points (through the executor) and score them, in the order given. With a
        deadline `until` (time.monotonic()), a few at a time (`rounds` rounds of the workers)
        and none begun after it, whatever the pace so far (the machine's load can double a
        trial's time): the trials of the points run, a prefix of them. `round_s`: a guess at a
        few's wall time (then the last few's own): none begun that would end past `until`.
        Past `stop_at` a prefix too: the points up to the first not run by then."""
        if until == math.inf:
            return self._run(points, full, first)
        width = rounds * max(1, int(getattr(self.executor, "workers", 1)))
        out: list[Trial] = []
        for i in range(0, len(points), width):
            if time.monotonic() + round_s >= until:
                break
            t = time.monotonic()
            ran = self._run(points[i:i + width], full, first + i)
            out += ran
            if len(ran) < len(points[i:i + width]):
                break  # the fit's end stopped the round
            if round_s:
                round_s = time.monotonic() - t
        return out

    def full_round_s(self, search: "Search") -> float:
        """A guess, before any ran, at one round of the workers' full-size trials of this
        search's evidence: `search`'s pace (wall seconds a trial, its last batch) times the
        cost of this evidence's runs over `search`'s (methodology Test.cost), at the drive's
        own size over its trials' (a trial drive of a tenth of the blocks runs ten times as
        fast). What --minutes needs to know before a full-size check begins."""
        from ..methodology import get

        def cost(s: "Search") -> float:
            total = 0.0
            for r in s.measured.runs():
                try:
                    total += get(r[0]).cost
                except ValueError:  # not a registered test: the default cost
                    total += 1.0
            return total or 1.0

        scale = min((t.scale for t in search.trials), default=1.0) or 1.0
        workers = max(1, int(getattr(self.executor, "workers", 1)))
        return workers * search.pace * cost(self) / cost(search) / scale

    def _run(self, points: list[dict[str, float]], full: bool, first: int) -> list[Trial]:
        from ..executor import Unit
        from ..targets.sim import table_bytes

        runs = self.measured.runs()
        stop_at = deadline.wall(self.stop_at)  # the fit's end, for the workers (None: no --minutes)
        units, scale = [], {}
        known: dict[int, tuple[dict[str, float | None], str | None]] = {}
        docs: dict[int, Any] = {}
        given: dict[int, tuple[dict[RunKey, list[str]], dict[RunKey, Any]]] = {}  # what each unit runs
        for i, u in enumerate(points):
            ov, plans, f = self.settings(u, full)
            scale[i] = f
            key = point_key(u, full)
            if key in self.memo:  # the same point, already run (a cross-validation fold's start)
                known[i] = self.memo[key]
                continue
            if self.record is not None:  # run by an earlier fit (one stopped before its end)
                docs[i] = self.record.get(self.start.text, ov, runs, plans, self.seed)
                if docs[i] is not None:
                    continue
                del docs[i]
            given[i] = ov, plans
            try:  # a worker runs them one after the other: the largest drive's tables
                mem = max(table_bytes(self.start.text, list(o)) for o in {tuple(o) for o in ov.values()})
            except ValueError:
                mem = 0.0  # a profile the simulator refuses: the trial fails and scores CAP
            # a trial's time grows with its drive's tables (the die count's larger trial
            # drives): the pool starts the dearest first, so a batch's tail is a short trial
            args = (self.start.text, ov, runs, plans, self.seed) + ((stop_at,) if stop_at is not None else ())
            units.append(Unit(i, run_trial, args, memory=mem, cost=mem))
        errors: dict[int, str] = {}
        cut: set[int] = set()  # stopped at the fit's end, or never begun
        if units and time.monotonic() >= self.stop_at:
            cut, units = {u.key for u in units}, []
        t0 = time.monotonic()
        for done in self.executor.run(units):
            if isinstance(done.error, deadline.OutOfTime):
                cut.add(done.key)
                continue
            docs[done.key] = done.value if done.ok else None
            if done.ok and self.record is not None:  # kept as it ends, here (not in the worker)
                ov, plans = given[done.key]
                self.record.put(self.start.text, ov, runs, plans, self.seed, done.value)
            if not done.ok:
                errors[done.key] = str(done.error).splitlines()[0] if str(done.error) else type(done.error).__name__
        if units and not cut:
            self.pace = (time.monotonic() - t0) / len(units)
        elif not units and docs:  # all from the record: the pace they ran at (--minutes plans by it)
            walls = [sum(float(d.get("wall_s", 0.0)) for d in doc.values()) for doc in docs.values()]
            self.pace = sum(walls) / len(walls) / max(1, int(getattr(self.executor, "workers", 1)))
        for i, doc in docs.items():  # every trial that ended, those past a stopped one too
            values: dict[str, float | None] = {f.name: None for f in self.measured.figures}
            if doc is not None:
                values = measure_all(self.measured, doc)
            known[i] = self.memo[point_key(points[i], full)] = (values, errors.get(i))
        out = []
        for i, u in enumerate(points):
            if i in known:
                values, error = known[i]
                values = self.at_size(values, scale[i])
                loss, groups = loss_of(self.ev, values)
                out.append(Trial(first + i, u, values, loss, scale[i], groups, error))
        end = min(cut, default=len(points))  # the trials up to the first the fit's end stopped
        self.late += [t for t in out[end:] if not full]
        return out[:end]

    def keep_late(self) -> None:
        """The trials that ended past one the fit's end stopped, recorded after the others
        (a batch hands back the trials up to the first that did not end: the pool runs the
        dearest first, so at the end of a short --minutes the first few may be all it lacks)."""
        known = {point_key(t.u, False) for t in self.trials}
        for t in self.late:
            if point_key(t.u, False) not in known:
                known.add(point_key(t.u, False))
                t.number = len(self.trials)
                self._record([t])
        self.late = []
        self.mark("ended late")

    def at_size(self, values: dict[str, float | None], scale: float) -> dict[str, float | None]:
        """A trial's figures as the drive's own size would give them (`size_ratio`; a
        full-size trial's as they are)."""
        if scale == 1.0 or not self.size_ratio:
            return values
        return {n: v * self.size_ratio.get(n, 1.0) if v is not None else None for n, v in values.items()}

    def correct_sizes(self, ratio: dict[str, float]) -> None:
        """Score every trial of the search's size again with `ratio` (fidelity.py)."""
        self.size_ratio = dict(ratio)
        for t in self.trials:
            if t.scale == 1.0:
                continue
            raw, _ = self.memo[point_key(t.u, False)]
            t.values = self.at_size(raw, t.scale)
            t.loss, t.group_loss = loss_of(self.ev, t.values)

    # -- the optimizer ---------------------------------------------------------------------------
    def _study(self, x0: dict[str, float], sigma: float = SIGMA0, seed: int | None = None) -> Any:
        import optuna

        seed = (self.seed if seed is None else seed) % SEEDS  # a restart's seed past the last wraps around
        optuna.logging.set_verbosity(optuna.logging.WARNING)
        if self.sampler_name == "tpe":
            sampler: Any = optuna.samplers.TPESampler(seed=seed, multivariate=True, n_startup_trials=BATCH)
        else:
            import warnings

            with warnings.catch_warnings():  # x0 and sigma0 are deprecated for v6; pinned 5.0 has them
                warnings.simplefilter("ignore", FutureWarning)
                # and separable CMA-ES is its experimental option, chosen on purpose
                warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
                # separable CMA-ES: a diagonal covariance learns in O(n) trials, and the figures
                # depend on few parameters each; over one parameter both forms are the same, and
                # optuna would warn that it ignores the choice
                sampler = optuna.samplers.CmaEsSampler(x0=x0, sigma0=sigma, seed=seed, popsize=BATCH,
                                                       use_separable_cma=len(x0) > 1,
                                                       warn_independent_sampling=False)
        study = optuna.create_study(direction="minimize", sampler=sampler)
        study.enqueue_trial(x0)  # the start itself first (TPE: among its startup trials)
        return study

    def free(self) -> list[str]:
        return [p.key for p in self.start.params if p.key not in self.frozen]

    def _record(self, trials: list[Trial]) -> None:
        for tr in trials:
            self.trials.append(tr)
            if self.on_trial:
                self.on_trial(tr)

    def change(self, a: Trial, b: Trial) -> float:
        """How far the figures move between two trials: the squared change of each figure's
        error (in tolerances, capped), averaged within groups and summed over them."""
        per: dict[str, list[float]] = {}
        for f in self.ev.figures:
            d = residual(f, a.values.get(f.name)) - residual(f, b.values.get(f.name))
            per.setdefault(self.ev.groups[f.name], []).append(min(d * d, CAP))
        return sum(sum(v) / len(v) for v in per.values())

    def explore(self, budget: Budget) -> Trial | None:
        """The best fails a figure another trial passes (or nears, where the best misses it by
        more than NEAR tolerances): that trial lies in another basin (a
        mode of a mechanism the best does not use, such as a performance mode that needs a
        cache of half the drive, reached by screening at the mechanism's largest), where the
        tuning that would bring the other figures back was never tried. From the lowest such
        trial: the mechanisms on there have the parameters they gate screened (those never
        searched, and mechanisms still off), a mechanism that screening leaves off (alone, at
        the class's tuning, it moves nothing) is put at its largest and its own tuning
        screened there; then steps from the basin's best. The later stages go on from
        whichever basin is lower. Returns the basin's best, None when there is none."""
        best = self.best()
        # a figure the best misses by far: a trial near it (within NEAR tolerances) counts too,
        # as screening's coarse grid can land a mode's edge just past a narrow range
        failed = [(f, 1.0 if m <= NEAR else NEAR) for f in self.ev.figures
                  if best and (m := abs(residual(f, best[0].values.get(f.name)))) > 1.0]
        alts = [t for t in self.trials if not t.error
                and any(abs(residual(f, t.values.get(f.name))) <= reach for f, reach in failed)]
        if not alts:
            return None
        at = min(alts, key=lambda t: (t.loss, t.number))
        params = self.start.params
        by = {q.key: q for q in params}
        tried: set[str] = set()

        def lowest(since: int) -> Trial:
            return min([at, *(t for t in self.trials[since:] if not t.error)], key=lambda t: (t.loss, t.number))

        while True:  # down the chain of gates
            on = {k for k, q in by.items() if q.off and q.physical(at.u[k]) > 0}
            keys = [q.key for q in params if q.gate in on and q.key not in tried
                    and (q.key in self.frozen or (q.off and q.physical(at.u[q.key]) == 0))]
            if not keys or not budget.room(len(self.trials), 1 + len(SCREEN_GRID) * len(keys), self.pace):
                break
            tried.update(keys)
            since = len(self.trials)
            screening.screen(self, keys=keys, base=at, budget=budget)
            at = lowest(since)
            for k in keys:  # a mechanism left off: its tuning with it at its largest
                gated = [q.key for q in params if q.gate == k and q.key not in tried]
                n = 1 + len(SCREEN_GRID) * len(gated)
                if not (by[k].off and by[k].physical(at.u[k]) == 0 and gated
                        and budget.room(len(self.trials), n, self.pace)):
                    continue
                since = len(self.trials)
                top = self.evaluate([{**at.u, k: 1.0}], first=since, until=budget.deadline)
                self._record(top)
                if top and not top[0].error:
                    tried.update(gated)
                    screening.screen(self, keys=gated, base=top[0], budget=budget)
                    at = lowest(since)
        self.mark("explore")
        smooth = [k for k in self.free() if k not in descent.discrete(self)]
        if smooth:
            at = descent.levenberg_marquardt(self, budget, smooth, start=at)
            self.mark("steps")
        return at

    def descend(self, budget: Budget, gain: float = descent.GAIN) -> None:
        smooth = [k for k in self.free() if k not in descent.discrete(self)]
        if smooth and self.trials:  # (none: the fit's end stopped the first)
            descent.descend(self, budget, smooth, gain, rounds=self.rounds)

    def dear_start(self, budget: Budget) -> None:
        """Full-size trials (the evidence has tests that cannot run on a smaller drive) are
        dear, ten to twenty seconds of CPU each: screening every parameter (1 + 5 each) would
        take the whole budget before a step. So the Levenberg-Marquardt steps go first from
        the die scan's best (a round is a trial a parameter and a batch of dampings, and the
        class is near); then screening of the parameters the steps cannot see, from where
        they ended: those whose finite step moved no figure (a limit the class sets at "none",
        a mechanism that is off), the whole numbers, and a mechanism still off that others
        tune (its tuning screened with it on: screen); then steps again."""
        if not self.trials:  # no die count to scan: the start itself
            self._record(self.evaluate([self.x0]))
        if not self.trials:
            return  # the fit's end stopped it
        # a limit the class sets at none (the top of its range) moves no figure by a step: it
        # is screened first, where the steps can then tune it (the m4's rated 415 MB/s reads,
        # a controller read path under the SATA link, stayed at the link after 99 steps' trials)
        here = min(self.trials, key=lambda t: (t.loss, t.number)).u
        limits = [q.key for q in self.start.params if q.key in UNLIMITED and here[q.key] >= 1.0
                  and q.key not in self.frozen]
        if limits and budget.room(len(self.trials), len(SCREEN_GRID) * len(limits), self.pace):
            screening.screen(self, here, limits, base=min(self.trials, key=lambda t: (t.loss, t.number)), budget=budget)
            self.mark("screen")
        smooth = [k for k in self.free() if k not in descent.discrete(self)]
        if smooth:
            descent.levenberg_marquardt(self, budget, smooth)
            self.mark("steps")
        here = min(self.trials, key=lambda t: (t.loss, t.number)).u
        gates = {q.gate for q in self.start.params}
        blind = [q.key for q in self.start.params if q.key not in limits and (
                 q.key in self.unseen or (q.key in descent.discrete(self) and not q.pow2 and not q.choices)
                 or (q.key in gates and q.off and q.physical(here[q.key]) == 0))]  # a mechanism still off
        n = 1 + len(SCREEN_GRID) * len(blind)
        if blind and budget.room(len(self.trials), n, self.pace):
            screening.screen(self, here, blind, budget=budget)
            self.mark("screen")
            self.descend(budget)
            self.mark("steps")

    def run(self, budget: Budget, screen: bool = True, opening_only: bool = False) -> list[Trial]:
        """Screening (when asked, and counted in the budget), then the optimizer over the
        parameters the figures move, from the best point so far. `opening_only`: the
        opening alone (the die-count scan, screening and the steps after it)."""
        if screen and not self.trials:
            descent.scan_pow2(self, budget)
            self.mark("die count")
            descent.scan_choices(self, budget)
            self.mark("policies")
            if self.scalable:
                # --minutes ends it (what is not screened by then is searched unscreened);
                # --trials does not: the opening is what every later stage starts from
                screening.screen(self, self.x0, budget=Budget(10**9, budget.deadline))
                self.mark("screen")
                self.descend(budget)
                self.mark("steps")
            else:
                self.dear_start(budget)
            if opening_only:
                return self.trials
            self.explore(budget)  # a figure the best fails that another basin passes
        free = self.free()
        if not free or (self.trials and not self.failing()):
            # every figure passes: CMA-ES is for a basin that misses one (after steps that
            # passed every figure, its stages never lowered a loss by their STALL gain)
            return self.trials
        # a wide search, then a narrow one from its best (a restart: the loss has steps)
        wide = len(self.trials) + int(REFINE[0] * max(0, budget.trials - len(self.trials)))
        self._cma(free, budget, wide, SIGMA0, self.seed)
        self.mark("cma-es")
        self._cma(free, budget, budget.trials, REFINE[1], self.seed)
        self.mark("cma-es narrow")
        # a stalled stage is a local minimum, not the end, while a figure still fails and time
        # is left: steps from the best (the Jacobian there), again while they gain, then CMA-ES
        # again from it with another seed, until the figures pass or the budget ends
        restart = 0
        while self.failing() and not budget.over(len(self.trials)):
            restart += 1
            before = len(self.trials)
            # a mechanism CMA-ES turned on (screening left it off): its own parameters, frozen
            # where it was off, screened from the best
            screening.screen_gated(self, self.x0, self.best()[0], budget)
            if restart == 1:  # once: where a limit binds, the steps see it
                descent.limits_to_edge(self, budget)
                self.mark("limits")
            # here the steps go on while a round gains at all, and CMA-ES runs only once they
            # gain nothing: it seldom lowers a loss the steps brought this low (in the recorded
            # fits 1 of 23 stages from under 1 did, by 0.011), while a round after one that
            # gained 5 % can nearly halve it (the m4's refit)
            low = self.best()[0].loss
            self.descend(budget, gain=0.0)
            self.mark("steps")
            if self.best()[0].loss < low:
                continue
            self._cma(self.free(), budget, budget.trials, SIGMA0, self.seed + restart)
            self.mark("cma-es restart")
            if len(self.trials) == before:
                break  # nothing fits in what is left
        return self.trials

    def failing(self) -> bool:
        """Whether the best trial so far misses a figure by more than its tolerance."""
        best = self.best()
        return bool(best) and self.missed(best[0]) > 0

    def missed(self, t: Trial) -> int:
        """The figures trial `t` misses by more than their tolerance."""
        return sum(abs(residual(f, t.values.get(f.name))) > 1.0 for f in self.ev.figures)

    def _cma(self, free: list[str], budget: Budget, stop: int, sigma: float, seed: int) -> None:
        """One CMA-ES stage from the best trial so far, until `stop` trials, the budget, or
        STALL."""
        from optuna.distributions import FloatDistribution

        if not free:
            return
        dist = {k: FloatDistribution(0.0, 1.0) for k in free}
        x0 = min(self.trials, key=lambda t: (t.loss, t.number)).u if self.trials else self.start.unit_start()
        study = self._study({k: x0[k] for k in free}, sigma, seed)
        levels: list[float] = []  # the best loss before each batch of this stage
        while len(self.trials) < stop and not budget.over(len(self.trials)):
            levels.append(min((t.loss for t in self.trials), default=math.inf))
            if len(levels) > STALL[0] and levels[-1 - STALL[0]] - levels[-1] < STALL[1]:
                break
            n = min(BATCH, stop - len(self.trials))
            if time.monotonic() + n * self.pace >= budget.deadline:
                break  # the batch would end past the deadline
            asked = [study.ask(dist) for _ in range(n)]
            done = self.evaluate([{**x0, **t.params} for t in asked], first=len(self.trials),
                                 until=budget.deadline)
            for t, tr in zip(asked, done):  # told in trial order: the same result on any executor
                study.tell(t, tr.loss)
            self._record(done)
            if not done:
                break

    def best(self, k: int = 1) -> list[Trial]:
        seen, out = set(), []
        for t in sorted(self.trials, key=lambda t: (t.loss, t.number)):
            key = tuple(round(x, 6) for x in t.u.values())
            if key not in seen:
                seen.add(key)
                out.append(t)
            if len(out) == k:
                break
        return out


def point_key(u: dict[str, float], full: bool) -> tuple[Any, ...]:
    """A point's key in the memo (a trial is a function of its parameters and its size)."""
    return tuple(sorted((k, round(x, 12)) for k, x in u.items())), full


def full_size_check(search: Search, candidates: Iterable[Trial], until: float = math.inf) -> list[Trial]:
    """The best few again at the drive's own size (when trials ran smaller): ranked by that.
    None begun that would end past `until` (--minutes): those run, or the candidates as they
    are when none was."""
    cands = list(candidates)
    if not search.scalable:
        return cands
    full = search.evaluate([t.u for t in cands], full=True, until=until, rounds=1,
                           round_s=search.full_round_s(search) if until < math.inf else 0.0)
    for t, f in zip(cands, full):
        f.number = t.number
    return sorted(full, key=lambda t: (t.loss, t.number)) or cands
