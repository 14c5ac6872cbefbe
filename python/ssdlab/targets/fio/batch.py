"""Consecutive io phases as one fio process: one job per phase behind a stonewall
(jobs.batch_text), so a round of PTS steps costs one fio start, not one per step.

Each step still ends as its own PhaseResult, with the shape of a lone phase's, and is
handed over as it ends (while the next one runs), so a stopped or killed batch keeps
the steps it finished. fio numbers the stonewalled jobs' reporting groups in order, and
every status report carries all of them: a step has started once its group shows
runtime or I/O, and has ended once a later one has started (fio starts a group only
after the one before has exited, and a job writes its logs as it exits). Its totals
and latency come from its group in that report, its series and segments from its own
logs. The drive's own counters are read at the report that shows the change of step,
so a step's counters include up to the status interval (1 s) of the next one's writes.

fio itself still pauses between stonewalled jobs (its main loop looks every 100 ms
and then waits 100 ms for a new job to set up): about as long as a new process took,
so the batch saves fio's start-up CPU (clock calibration, job parsing), not that gap."""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any, Sequence

from ... import interrupts
from ...fioformat import json_read
from ...phase import Interrupted, OnSample, Phase, PhaseResult, ResolvedPhase
from ..base import StepEnd, StepStart
from .failure import FioFailed, shortfall
from .identity import TempSampler
from .cpu_wait import CpuWaitSampler
from .invocation import Invocation
from . import jobs

# `target` below is a FioTarget (fio/target.py, which runs its batches through here)


@dataclass
class Step:
    phase: Phase
    spec: ResolvedPhase
    prefix: str
    started: bool = False
    ended: bool = False
    t0_ms: float = math.nan  # when its job started (epoch ms, as fio's timestamps)
    tracker: json_read.StatusTracker | None = None
    on_sample: OnSample | None = None
    before: dict = field(default_factory=dict)  # the drive's counters as it started


def group(rep: dict, g: int) -> dict:
    """Step g's part of a batch report: a report of its reporting group's jobs alone."""
    return dict(rep, jobs=[j for j in rep.get("jobs") or [] if isinstance(j, dict) and j.get("groupid") == g])


def runtime_ms(sub: dict) -> float:
    return json_read.report_runtime_s(sub) * 1000.0


def has_started(sub: dict) -> bool:
    # a group not started yet shows no runtime and no I/O (its job_runtime is garbage)
    return runtime_ms(sub) > 0 or sum(json_read.report_ios(sub).values()) > 0


class Batch:
    """A batch of io phases running on a FioTarget."""

    def __init__(self, target: Any, phases: Sequence[Phase], on_start: StepStart | None,
                 on_end: StepEnd | None):
        self.t = target
        self.on_start = on_start
        self.on_end = on_end
        self.steps: list[Step] = []
        for p in phases:
            target._nphase += 1
            self.steps.append(Step(p, p.resolve(target.capacity), target._prefix()))
        self.results: list[PhaseResult | None] = [None] * len(self.steps)
        self.temps = TempSampler(target.telemetry)
        self.waits: CpuWaitSampler | None = None  # once fio runs
        self.wall0_ms = 0.0
        self.latest = -1  # the last step seen started
        self.last: list[dict] = []  # each step's part of the last report

    def job(self) -> str:
        t = self.t
        return jobs.batch_text([(s.spec, s.prefix) for s in self.steps], t.where.filename(),
                               engine=t.engine, is_file=t.where.is_file)

    def _counters(self) -> dict:
        return self.t.telemetry.read() if self.t.telemetry.available else {}

    # ------------------------------------------------------------------ run
    def run(self) -> list[PhaseResult]:
        t = self.t
        job_path = self.steps[0].prefix + ".fio"
        with open(job_path, "w") as fh:
            fh.write(self.job())
        self.steps[0].before = self._counters()
        self.temps.start()
        self.wall0_ms = time.time() * 1000.0
        fio = Invocation(t._fio_command(job_path), t._as_reports)
        self.waits = CpuWaitSampler(fio.proc.pid, self.temps.t0).start()
        try:
            fio.pump(lambda rep: self.report(rep, live=True))
        except KeyboardInterrupt as e:
            fio.stop()
            fio.drain(lambda rep: self.report(rep, live=False))
            raise Interrupted(self.partial()) from e
        except BaseException:
            self.stop_sampling()
            fio.stop(timeout=5)
            raise
        fio.close()
        fio.drain(lambda rep: self.report(rep, live=False))
        failed = fio.failure(t.spec)
        if failed is not None:
            self.stop_sampling()
            raise failed
        for g in range(len(self.steps)):  # the final report: every step has ended
            self.finish(g)
        self.stop_sampling()
        return [r for r in self.results if r is not None]

    def stop_sampling(self) -> None:
        self.temps.stop()
        if self.waits is not None:
            self.waits.stop()

    def samples(self, of: list[tuple[float, float]], t0_s: float, t1_s: float) -> list[tuple[float, float]]:
        """A sampler's samples within a step (t0_s..t1_s on the samplers' clock), on the step's clock."""
        return [(x - t0_s, v) for x, v in of if t0_s <= x <= t1_s + 1.0]

    def report(self, rep: dict, live: bool) -> None:
        """A status report (or the final one): steps that ended since, the running one's sample."""
        self.last = [group(rep, g) for g in range(len(self.steps))]
        ts = rep.get("timestamp_ms")
        now = float(ts) if isinstance(ts, (int, float)) else time.time() * 1000.0
        started = [g for g, sub in enumerate(self.last) if has_started(sub)]
        self.latest = max(started + [self.latest])
        for g in started:  # in order: a step's start may follow from the one before
            s = self.steps[g]
            if not math.isnan(s.t0_ms):
                continue
            if g == self.latest:
                s.t0_ms = now - runtime_ms(self.last[g])
            elif g and not math.isnan(self.steps[g - 1].t0_ms):
                # it ran between two reports: it started about when the one before ended
                s.t0_ms = self.steps[g - 1].t0_ms + runtime_ms(self.last[g - 1])
            else:
                s.t0_ms = self.wall0_ms
        for g in range(self.latest):
            self.finish(g)
        if self.latest >= 0 and live:
            s = self.begin(self.latest)
            row = s.tracker.update(self.last[self.latest]) if s.tracker else None
            if row is not None and s.on_sample:
                if self.temps.samples:
                    row["temp_c"] = self.temps.samples[-1][1]
                if self.waits is not None and self.waits.samples:
                    row["cpu_wait_pct"] = self.waits.samples[-1][1]
                s.on_sample(row)

    def begin(self, g: int) -> Step:
        """Step g has started: its listener, its clock and (after the first) its counters."""
        s = self.steps[g]
        if not s.started:
            s.started = True
            if g > 0:
                s.before = self._counters()
            if math.isnan(s.t0_ms):
                s.t0_ms = time.time() * 1000.0
            s.tracker = json_read.StatusTracker(s.t0_ms)
            s.on_sample = self.on_start(g, s.phase) if self.on_start else None
        return s

    def finish(self, g: int) -> None:
        """Hand step g over if it has not been: whole, or not at all. A Ctrl-C waits until
        it is stored, as the step is already marked ended (a cut-off hand-over would lose it)."""
        if not self.steps[g].ended:
            with interrupts.shielded():
                self.end(g, self.last[g], complete=True)

    def end(self, g: int, sub: dict, complete: bool) -> None:
        """Step g's result from its group's last report; handed over when complete."""
        s = self.begin(g)
        s.ended = True
        rt = runtime_ms(sub)
        # the sample closing its last interval, as a lone phase's final report gives
        row = s.tracker.update(dict(sub, timestamp_ms=s.t0_ms + rt)) if s.tracker and rt > 0 else None
        if row is not None and s.on_sample and complete:
            s.on_sample(row)
        assert s.tracker is not None
        t0_s = (s.t0_ms - self.wall0_ms) / 1000.0  # on the temperature sampler's clock
        t1_s = t0_s + rt / 1000.0
        temps = self.samples(self.temps.samples, t0_s, t1_s)
        waits = self.samples(self.waits.samples, t0_s, t1_s) if self.waits is not None else []
        res = self.t._io_result(s.phase, s.spec, s.prefix, [sub], s.tracker, temps, s.before, waits)
        if not complete:
            self.results[g] = res
            return
        errs = json_read.report_errors(sub)
        if errs:
            raise RuntimeError(f"fio reported errors on {self.t.spec}: {'; '.join(errs)}")
        short = shortfall(s.spec, res.totals)
        if short:
            raise FioFailed(f"fio on {self.t.spec} exited without an error but {short} "
                            f"(phase '{s.phase.name}')")
        res.fio_report = sub  # type: ignore[attr-defined]  # per-direction figures
        self.results[g] = res
        if self.on_end:
            self.on_end(g, res)

    def partial(self) -> PhaseResult | None:
        """After an interrupt: the step that was running, as far as it got (the steps
        before it were handed over as they ended)."""
        self.stop_sampling()
        g = self.latest
        if g < 0 or not self.last:
            return None
        # the stop is being handled: a step that started after the last live report begins
        # here, which is no new phase for the stop to cut off (its data would be lost)
        with interrupts.shielded():
            self.end(g, self.last[g], complete=False)
        return self.results[g]


def batchable(phase: Phase) -> bool:
    """Can this phase be a job of a batch? (io phases; the others run on their own.)"""
    return phase.kind == "io"


def runs(phases: Sequence[Phase]) -> list[list[Phase]]:
    """`phases` cut into what runs as one fio process (consecutive io phases) and the
    phases that run on their own (lists of one)."""
    out: list[list[Phase]] = []
    for p in phases:
        if out and batchable(p) and batchable(out[-1][-1]):
            out[-1].append(p)
        else:
            out.append([p])
    return out


def run(target: Any, phases: Sequence[Phase], on_start: StepStart | None = None,
        on_end: StepEnd | None = None) -> list[PhaseResult]:
    """Run io `phases` back to back in one fio process (io_uring, falling back to libaio as
    for one phase when fio could not start at all)."""
    try:
        return Batch(target, phases, on_start, on_end).run()
    except FioFailed as e:
        if not (e.no_report and target._engine == "io_uring"):
            raise
        target._engine = "libaio"
        return Batch(target, phases, on_start, on_end).run()


__all__ = ["Batch", "batchable", "group", "run", "runs"]
