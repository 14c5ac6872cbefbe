"""`ssdlab review`: every test of the methodology on the drives, each test one stored run
(in the order of methodology.TESTS), then one report.

The tests are independent: each starts from a freshly built simulated drive (the same
drive `ssdlab run TEST` builds, so a review's test and a single run give the same numbers
for a seed). On simulated drives they therefore run in parallel through executor.py, one
unit per test and drive; the results are stored in test order exactly as a sequential
review stores them (detached.py). A real drive is one device: with one in the list, the
review runs test after test in this process, as before."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Callable, Iterator

from . import interrupts, methodology
from .detached import Computed, Replay, compute_group, job_for, plan_groups, state_keys
from .executor import Done, Executor, Unit
from .held import Held, hold, keep_waiting
from .methodology import Options
from .runner import DriveOutcome, Hooks, RunFailed, StoreWriteFailed, run_test
from .store import Store
from .targets.sim import SimTarget

OnRun = Callable[[str, int, list[DriveOutcome]], None]  # (test, run id, outcomes) once stored


@dataclass(frozen=True)
class Request:
    """One review: the drives every test runs on and how its runs are made and stored."""

    store: Store
    drives: list[tuple[str, Any]]  # (spec, opened target)
    sets: list[str]  # profile overrides of the simulated drives
    seed: int
    opts: Options
    args: dict[str, Any]  # what each run stores as its arguments
    testbed: str | None = None

    @property
    def specs(self) -> list[str]:
        return [s for s, _ in self.drives]

class ReviewRefused(Exception):
    """A test of a sequential review refused before it began (its drive mounted or opened
    by another program since the test before): the tests before it are stored."""

    def __init__(self, test: str, error: ValueError):
        super().__init__(str(error))
        self.test, self.error = test, error


class ReviewInterrupted(Exception):
    """Ctrl-C during a parallel review (its tests or its report); the tests that were
    complete are stored."""


class ReviewStopped(Exception):
    """A unit of a parallel review that the executor could not run (a worker process that
    died): the tests that were complete are stored; `error` is the executor's."""

    def __init__(self, error: Exception):
        super().__init__(str(error))
        self.error = error


def run(req: Request, jobs: int | None, ray: str | None, progress_hooks: Callable[[], Any],
        on_run: OnRun, warn: Callable[[str], None],
        report: Callable[[Executor | None], Any] = lambda executor: None) -> Any:
    """The review: the methodology's tests, parallel when every drive is simulated and more
    than one worker runs (`jobs`, `ray` as executor.open_executor takes them), else
    sequential with the per-phase bars of `progress_hooks`; then the application workload
    (among the parallel units when the tests run in parallel: it is stored last either way).
    Then `report(executor)`, whose value it returns: the report drawn on the same workers
    (None: the review was sequential)."""
    from .executor import open_executor
    from .units_progress import UnitsProgress

    executor = open_executor(jobs, ray)
    if not parallel(req.drives, executor):
        executor.close()
        try:
            with progress_hooks() as hooks:
                run_sequential(req, hooks, on_run)  # a test cut short: RunInterrupted, its run kept
                run_application_workload(req, hooks, on_run, warn)
            return report(None)
        except KeyboardInterrupt:  # between tests or in the report: the command says what is stored
            raise ReviewInterrupted() from None
    bar = UnitsProgress("review", (len(methodology.TESTS) + len(application_runs(req))) * len(req.drives),
                        where=executor.describe())
    try:
        with executor:
            with bar:
                run_parallel(req, executor, on_run, bar.finished, application=True)
            return report(executor)
    except KeyboardInterrupt:
        raise ReviewInterrupted() from None


def parallel(drives: list[tuple[str, Any]], executor: Executor) -> bool:
    """Only simulated drives (rebuilt from their profile in a worker) run in parallel."""
    return executor.kind != "inline" and all(isinstance(t, SimTarget) for _, t in drives)


def run_sequential(req: Request, hooks: Hooks, on_run: OnRun) -> None:
    """Test after test in this process; simulated drives are rebuilt for each test."""
    for i, test in enumerate(methodology.TESTS):
        drv = req.drives if i == 0 else fresh(req.drives)
        run_id, outcomes = refusable(test, lambda: run_test(req.store, test, drv, req.opts, req.args,
                                                             req.testbed, hooks))
        on_run(test, run_id, outcomes)


def refusable(test: str, run: Callable[[], tuple[int, list[DriveOutcome]]]) -> tuple[int, list[DriveOutcome]]:
    """`run()`, whose ValueError (run_test raises one only before the run is made: the
    drive's checks refused it) becomes ReviewRefused."""
    try:
        return run()
    except ValueError as e:
        raise ReviewRefused(test, e) from e


def application_runs(req: Request, drives: list[tuple[str, Any]] | None = None
                     ) -> dict[str, tuple[Options, dict[str, Any]]]:
    """The review's last runs: the input tests that give the review options of their own
    (the trace test's application workload), each with its options and stored arguments,
    sized to the smallest of `drives` (default: the review's)."""
    drives = req.drives if drives is None else drives
    out = {}
    for name, test in methodology.INPUT_TESTS.items():
        if test.review_options is None:
            continue
        own = test.review_options(min(t.identify().capacity for _, t in drives))
        args = {"drives": req.args.get("drives"), "set": req.sets, "seed": req.seed, "review": True,
                **(test.options.stored(own, {}) if test.options else {})}
        out[name] = (dataclasses.replace(req.opts, own=own), args)
    return out


def review_runs(req: Request) -> list[tuple[str, Options, list[tuple[str, Any]]]]:
    """The runs a review makes, in order: (test, options, drives) (for --plan)."""
    replays = [(s, t) for s, t in req.drives if t.capabilities.replay]
    return [(t, req.opts, req.drives) for t in methodology.TESTS] + (
        [(name, opts, replays) for name, (opts, _) in application_runs(req, replays).items()] if replays else [])


def run_application_workload(req: Request, hooks: Hooks, on_run: OnRun,
                             warn: Callable[[str], None]) -> None:
    """The review's last runs (`application_runs`), on new simulated drives as every other
    test (not on drives on other hosts: a trace is not sent there)."""
    drives = [(s, t) for s, t in req.drives if t.capabilities.replay]
    if len(drives) < len(req.drives):
        for name in application_runs(req):
            warn(f"review skips the application workload ({name}) on drives on other hosts")
    if not drives:
        return
    drives = fresh(drives)
    for name, (opts, args) in application_runs(req, drives).items():
        run_id, outcomes = refusable(name, lambda: run_test(req.store, name, drives, opts, args, req.testbed, hooks))
        on_run(name, run_id, outcomes)


def fresh(drives: list[tuple[str, Any]]) -> list[tuple[str, Any]]:
    """The drives for the next test: simulated ones rebuilt from their profile (a test
    starts on a new drive, as `ssdlab run` does), real ones as they are."""
    return [(s, t.fresh() if isinstance(t, SimTarget) else t) for s, t in drives]


def run_parallel(req: Request, executor: Executor, on_run: OnRun,
                 on_unit: Callable[[bool, str], None] | None = None,
                 tests: list[str] | None = None, application: bool = False) -> None:
    """Every (test, drive) as a unit (`tests`: default every review test; with
    `application`, the application workload last), except that the tests of a drive that
    begin alike (purge and fill) form one unit, which pays for those phases once
    (targets/sim_state.py); each test is stored, in order, once all its drives are back,
    and held in a pending file while it waits for an earlier one (held.py), so a review
    killed outright keeps it. On Ctrl-C, or a unit the executor could not run (a worker
    that died), the tests already complete are stored before the interrupt goes on or
    ReviewStopped is raised."""
    from .targets.sim import table_bytes
    from .targets.sim_state import drives_at_once

    store_, specs, sets, seed = req.store, req.specs, req.sets, req.seed
    tests = list(tests or methodology.TESTS)
    runs = {test: (req.opts, req.args) for test in tests}
    if application:
        runs |= application_runs(req)
        tests = list(runs)
    texts = {s: t.profile_text for s, t in req.drives if isinstance(t, SimTarget)}
    units = []
    for pos, spec in enumerate(specs):
        jobs = [job_for(spec, texts[spec], sets, seed, test, runs[test][0]) for test in tests]
        memory = table_bytes(texts[spec], sets)
        for idx, keep in plan_groups(jobs):
            units.append(Unit(tuple((tests[i], pos) for i in idx), compute_group,
                              (tuple(jobs[i] for i in idx), keep),
                              memory=memory * drives_at_once(keep, [state_keys(jobs[i]) for i in idx]),
                              cost=sum(methodology.get(tests[i]).cost for i in idx) * memory))
    got: dict[tuple[str, int], Computed] = {}
    stored: list[str] = []
    held: dict[str, Held] = {}  # finished tests waiting for an earlier one, each in its file

    def ready(test: str) -> bool:
        return test not in stored and all((test, p) in got for p in range(len(specs)))

    def replayed(test: str) -> list[tuple[str, Any]]:
        return [(s, Replay(s, got[(test, p)])) for p, s in enumerate(specs)]

    def store(test: str) -> None:
        """A finished test stored whole: it is only written now (nothing of it is measured
        any more), so a Ctrl-C or SIGTERM meanwhile waits for it and then stores the others."""
        opts, args = runs[test]
        with interrupts.shielded():
            h = held.get(test)
            broke: RunFailed | None = None
            try:
                run_id, outcomes = run_test(store_, test, replayed(test), opts, args, req.testbed,
                                            token=h.token if h else None)
            except RunFailed as e:  # stored, as failed: never stored again
                broke = e
            stored.append(test)
            if h:  # after the run is stored: a file a kill leaves meanwhile adds nothing to it
                h.release()
            if broke is not None:
                raise broke
            on_run(test, run_id, outcomes)

    def store_in_order() -> None:
        while len(stored) < len(tests) and ready(tests[len(stored)]):
            store(tests[len(stored)])
        for test in tests:  # the finished ones that must wait: on disk, so a SIGKILL keeps them
            if ready(test) and test not in held:
                opts, args = runs[test]
                held[test] = hold(store_, test, replayed(test), opts, args, req.testbed)

    def store_finished(first: RunFailed | None = None) -> None:
        """The review stops: every complete test is stored, in order as far as that goes,
        then the others (a test whose units still run is not: it is lost). After the `first`
        test that failed, one that fails too is stored so and named in the first's `also`."""
        with interrupts.shielded():
            for test in [t for t in tests if ready(t)]:
                try:
                    store(test)
                except RunFailed as e:
                    if first is None:
                        raise
                    first.also.append((test, e.run_id))

    def outcomes() -> Iterator[Done]:
        """The executor's outcomes; its own error (a unit it could not run) as ReviewStopped,
        apart from an error of the loop's body (storing a test)."""
        try:
            for done in executor.run(units):
                if done.error is not None:
                    raise done.error
                yield done
        except Exception as e:
            raise ReviewStopped(e) from e

    try:
        try:
            for done in outcomes():
                for key, value in zip(done.key, done.value):
                    got[key] = value
                    if on_unit:
                        on_unit(value.error is None, f"{key[0]} on {specs[key[1]]}: {value.wall_s:.0f} s")
                store_in_order()
        except KeyboardInterrupt:
            store_finished()
            raise
        except RunFailed as e:  # the review stops as a sequential one does, but keeps what is done
            store_finished(e)
            raise
        except ReviewStopped:
            store_finished()
            raise
    except StoreWriteFailed as e:  # the store takes no more: the tests that waited stay in their files
        raise keep_waiting(e, {t: h for t, h in held.items() if t not in stored}) from None
    finally:  # the tests not stored are dropped (a kill or a failed store leaves their files)
        for h in held.values():
            h.release()

