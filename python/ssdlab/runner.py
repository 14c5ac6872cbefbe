"""Runs a test on drives: phases through the Target protocol, every phase into the store
as soon as it ends, metrics at the end. A Ctrl-C keeps what was recorded (the phase cut
short is stored with status `partial`) and marks the run `interrupted`; an exception marks
it `failed`."""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from typing import Any, Iterable, Iterator

import numpy as np

from .methodology import Options, get
from .phase import Phase
from .store import Store
from .targets.base import Interrupted, PhaseResult, Sample, Target


class RunInterrupted(Exception):
    def __init__(self, run_id: int, outcomes: list["DriveOutcome"]):
        super().__init__(f"run {run_id} interrupted; what was recorded is kept")
        self.run_id = run_id
        self.outcomes = outcomes


class Hooks:
    """Progress callbacks; the CLI draws bars with them. The default does nothing."""

    def phase_start(self, drive: str, test: str, phase: Phase, seq: int) -> None: ...

    def sample(self, row: Sample) -> None: ...

    def phase_end(self, result: PhaseResult | None) -> None: ...


@dataclass
class DriveOutcome:
    spec: str
    run_drive_id: int
    status: str = "running"
    metrics: dict[str, Any] = field(default_factory=dict)


def steps(plan: Iterable[Phase]) -> Iterator[tuple[Phase, Any]]:
    """Walk a phase plan; the caller sends each result back through `.send` on the
    returned generator for plans that are generators."""
    it = iter(plan)
    feed = inspect.isgenerator(it)
    try:
        phase = next(it)
        while True:
            result = yield phase
            phase = it.send(result) if feed else next(it)
    except StopIteration:
        return


def plan_phases(test: str, capacity: int, opts: Options) -> list[Phase]:
    """The phases a run would execute (results unknown: dependent steps assume none)."""
    return list(steps(get(test).phases(capacity, opts)))


class SampleBuffer:
    """Streamed samples of the running phase, to rebuild a partial result when a target
    is stopped without handing one back."""

    def __init__(self) -> None:
        self.rows: list[Sample] = []

    def add(self, row: Sample) -> None:
        self.rows.append(row)

    def result(self, phase: Phase) -> PhaseResult | None:
        if not self.rows:
            return None
        keys = list(self.rows[0])
        series = {k: np.array([float(r.get(k, np.nan)) for r in self.rows]) for k in keys}
        duration = float(series["t_s"][-1]) if "t_s" in series else float(len(self.rows))
        return PhaseResult(phase=phase, series=series, segments={}, latency={},
                           totals={"duration_s": duration})


def run_drive(store: Store, run_id: int, position: int, spec: str, target: Target,
              test: str, opts: Options, hooks: Hooks, outcomes: list[DriveOutcome]) -> None:
    """Run the test on one drive; its outcome joins `outcomes` as soon as it starts."""
    module = get(test)
    ident = target.identify()
    out = DriveOutcome(spec, store.add_drive(run_id, position, spec, ident))
    outcomes.append(out)
    results: list[PhaseResult] = []
    walk = steps(module.phases(ident.capacity, opts))
    try:
        phase = next(walk, None)
        seq = 0
        while phase is not None:
            buf = SampleBuffer()

            def on_sample(row: Sample, buf=buf) -> None:
                buf.add(row)
                hooks.sample(row)

            hooks.phase_start(spec, test, phase, seq)
            try:
                res = target.run(phase, on_sample)
            except (Interrupted, KeyboardInterrupt) as e:
                partial = getattr(e, "partial", None) or buf.result(phase)
                if partial is not None:
                    store.add_phase(out.run_drive_id, seq, partial, "partial")
                hooks.phase_end(partial)
                raise
            store.add_phase(out.run_drive_id, seq, res)
            hooks.phase_end(res)
            results.append(res)
            seq += 1
            try:
                phase = walk.send(res)
            except StopIteration:
                phase = None
        out.metrics = module.analyze(results, opts)
        store.set_metrics(out.run_drive_id, out.metrics)
        out.status = "complete"
    except (Interrupted, KeyboardInterrupt):
        out.status = "interrupted"
        raise
    except BaseException:
        out.status = "failed"
        raise
    finally:
        store.finish_drive(out.run_drive_id, out.status if out.status != "running" else "failed")


def engine_versions(targets: list[Target]) -> str:
    seen = []
    for t in targets:
        v = getattr(t, "engine_version", None) or t.identify().firmware
        if v and v not in seen:
            seen.append(v)
    return "; ".join(seen)


def preflight(test: str, drives: list[tuple[str, Target]], opts: Options) -> None:
    """Safety checks of every drive for the whole test, before anything is stored: a target
    with `preflight(phases)` (real drives) raises its refusal (safety.UnsafeTarget, a
    ValueError) here, so a refused device leaves no run behind."""
    for _spec, target in drives:
        check = getattr(target, "preflight", None)
        if callable(check):
            check(plan_phases(test, target.identify().capacity, opts))


def run_test(store: Store, test: str, drives: list[tuple[str, Target]], opts: Options,
             args: dict, testbed: str | None = None,
             hooks: Hooks | None = None) -> tuple[int, list[DriveOutcome]]:
    """Run `test` on each drive in turn under one run id. Drives are checked (`preflight`)
    before the run is created."""
    get(test)  # unknown test: ValueError before anything is stored
    preflight(test, drives, opts)
    hooks = hooks or Hooks()
    run_id = store.create_run(test, args, testbed, engine_versions([t for _, t in drives]))
    outcomes: list[DriveOutcome] = []
    try:
        for pos, (spec, target) in enumerate(drives):
            run_drive(store, run_id, pos, spec, target, test, opts, hooks, outcomes)
    except (Interrupted, KeyboardInterrupt):
        store.finish_run(run_id, "interrupted", "interrupted by the user")
        raise RunInterrupted(run_id, outcomes) from None
    except BaseException as e:
        store.finish_run(run_id, "failed", f"{type(e).__name__}: {e}")
        raise
    store.finish_run(run_id, "complete")
    return run_id, outcomes
