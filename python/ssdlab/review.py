"""`ssdlab review`: every test of the methodology on the drives, each test one stored run
(in the order of methodology.TESTS), then one report.

The tests are independent: each starts from a freshly built simulated drive (the same
drive `ssdlab run TEST` builds, so a review's test and a single run give the same numbers
for a seed). On simulated drives they therefore run in parallel through executor.py, one
unit per test and drive; the results are stored in test order exactly as a sequential
review stores them (detached.py). A real drive is one device: with one in the list, the
review runs test after test in this process, as before."""

from __future__ import annotations

from typing import Any, Callable

from . import methodology, targets
from .detached import Computed, Replay, compute, job_for
from .executor import Executor, Unit
from .methodology import Options
from .runner import Hooks, run_test
from .store import Store

class ReviewInterrupted(Exception):
    """Ctrl-C during a parallel review; the tests that were complete are stored."""


def run(store: Store, specs: list[str], drives: list[tuple[str, Any]], sets: list[str], seed: int,
        opts: Options, args: dict, testbed: str | None, jobs: int | None, ray: str | None,
        progress_hooks: Callable, on_run: Callable[[str, int, list], None]) -> None:
    """The review: parallel when every drive is simulated and more than one worker runs
    (`jobs`, `ray` as executor.open_executor takes them), else sequential with the per-phase
    bars of `progress_hooks`."""
    from .executor import open_executor
    from .units_progress import UnitsProgress

    executor = open_executor(jobs, ray)
    if not parallel(drives, executor):
        executor.close()
        with progress_hooks() as hooks:
            run_sequential(store, drives, sets, seed, opts, args, testbed, hooks, on_run)
        return
    bar = UnitsProgress("review", len(methodology.TESTS) * len(specs), where=executor.describe())
    try:
        with bar, executor:
            run_parallel(store, specs, sets, seed, opts, args, testbed, executor, on_run,
                         bar.finished)
    except KeyboardInterrupt:
        raise ReviewInterrupted() from None


def parallel(drives: list[tuple[str, Any]], executor: Executor) -> bool:
    """Only simulated drives (rebuilt from their profile in a worker) run in parallel."""
    from .targets.sim import SimTarget

    return executor.kind != "inline" and all(
        isinstance(t, SimTarget) and (s.startswith("sim:") or s.endswith(".toml")) for s, t in drives)


def run_sequential(store: Store, drives: list[tuple[str, Any]], sets: list[str], seed: int,
                   opts: Options, args: dict, testbed: str | None, hooks: Hooks,
                   on_run: Callable[[str, int, list], None]) -> None:
    """Test after test in this process; simulated drives are rebuilt for each test."""
    for i, test in enumerate(methodology.TESTS):
        drv = drives if i == 0 else fresh(drives, sets, seed)
        run_id, outcomes = run_test(store, test, drv, opts, args, testbed, hooks)
        on_run(test, run_id, outcomes)


def fresh(drives: list[tuple[str, Any]], sets: list[str], seed: int) -> list[tuple[str, Any]]:
    """The drives for the next test: simulated ones rebuilt from their profile (a test
    starts on a new drive, as `ssdlab run` does), real ones as they are."""
    return [(s, t if targets.is_real(s) else targets.open_target(s, overrides=sets or None, seed=seed))
            for s, t in drives]


def run_parallel(store_: Store, specs: list[str], sets: list[str], seed: int, opts: Options,
                 args: dict, testbed: str | None, executor: Executor,
                 on_run: Callable[[str, int, list], None],
                 on_unit: Callable[[bool, str], None] | None = None) -> None:
    """Every (test, drive) as a unit; each test is stored, in order, once all its drives
    are back. On Ctrl-C the tests already complete are stored before the interrupt goes on."""
    from . import _sim

    tests = list(methodology.TESTS)
    memory = {s: float(_sim.Drive.check(job_for(s, sets, seed, "fill", opts).profile_text, sets))
              for s in specs}
    units = [Unit((test, pos), compute, (job_for(spec, sets, seed, test, opts),),
                  memory=memory[spec], cost=methodology.TESTS[test].cost * memory[spec])
             for test in tests for pos, spec in enumerate(specs)]
    got: dict[tuple[str, int], Computed] = {}
    stored: list[str] = []

    def ready(test: str) -> bool:
        return test not in stored and all((test, p) in got for p in range(len(specs)))

    def store(test: str) -> None:
        drv = [(s, Replay(s, got[(test, p)])) for p, s in enumerate(specs)]
        run_id, outcomes = run_test(store_, test, drv, opts, args, testbed)
        stored.append(test)
        on_run(test, run_id, outcomes)

    def store_in_order() -> None:
        while len(stored) < len(tests) and ready(tests[len(stored)]):
            store(tests[len(stored)])

    try:
        for done in executor.run(units):
            if not done.ok:
                raise done.error
            got[done.key] = done.value
            if on_unit:
                on_unit(done.value.error is None, f"{done.key[0]} on {specs[done.key[1]]}: "
                        f"{done.value.wall_s:.0f} s")
            store_in_order()
    except KeyboardInterrupt:
        from . import interrupts

        with interrupts.shielded():  # every finished test is kept, in order or not
            store_in_order()
            for test in tests:
                if ready(test):
                    store(test)
        raise
