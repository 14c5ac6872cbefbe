"""Runs a test on drives: phases through the Target protocol, every phase into the store
as soon as it ends, metrics at the end. A Ctrl-C keeps what was recorded (the phase cut
short is stored with status `partial`) and marks the run `interrupted`; a running phase is
also stored as `partial` every CHECKPOINT_S seconds, so a SIGKILL (nothing can be stored
after it) loses at most those last seconds of it; an exception marks
it `failed` (RunFailed: never a user error, as everything the user gave was checked before
the run started). Store writes are shielded from Ctrl-C; when the store cannot be written,
or its path no longer names the file the run writes (removed, or replaced by another file,
while the run went on: checked after each write), what was measured goes to a pending file
(pending.py) and the run stops."""

from __future__ import annotations

import json
import sqlite3
import time
import types
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Generator, Iterable, Iterator, Sequence

import numpy as np

from . import interrupts
from .methodology import Options, Test, get
from .pending import Pending, from_store, phase_doc, save_saying, saved_line
from .phase import Batch, Interrupted, OnSample, Phase, PhaseResult, Sample, flat
from .store import Store, StoreError
from .targets.base import Target


CHECKPOINT_S = 5.0  # wall seconds between stores of the running phase


class RunInterrupted(Exception):
    def __init__(self, run_id: int, outcomes: list["DriveOutcome"]):
        super().__init__(f"run {run_id} interrupted; what was recorded is kept")
        self.run_id = run_id
        self.outcomes = outcomes


class RunFailed(RuntimeError):
    """A run that started and then failed. Exit status 1, or the error's own `exit_code`
    (2 for a drive refused on the way)."""

    def __init__(self, run_id: int, error: BaseException):
        text = (str(error).strip() or type(error).__name__).splitlines()[0]
        super().__init__(f"run {run_id} failed: {type(error).__name__}: {text}")
        self.run_id = run_id
        self.error = error
        self.exit_code = getattr(error, "exit_code", 1)
        self.also: list[tuple[str, int]] = []  # (test, run id): later runs that failed too (a parallel review's)


class StoreWriteFailed(RuntimeError):
    """The results store could not take a write; says where the data went instead."""


class Recorder:
    """The store writes of one run. Each is shielded from Ctrl-C (a phase is stored whole
    or the interrupt waits). When a write fails, or the store's path no longer names the file
    it went to (Store.gone), it and every later one go to a pending file (in the second case
    with everything the run wrote before), and StoreWriteFailed says where (once: the cleanup
    after it does not raise)."""

    def __init__(self, store: Store, run_id: int, run: dict):
        self.store = store
        self.run_id = run_id
        self.run = dict(run, id=run_id)
        self.pending: Pending | None = None
        self.failure: StoreWriteFailed | None = None
        self.drives: dict[int, tuple[str, Any, int | None]] = {}

    def _write(self, fn: Callable[[], Any], keep: Callable[[Pending], object], what: str,
               raise_: bool = True) -> Any:
        with interrupts.shielded():
            if self.pending is None:
                # checked before the write too: the store's -wal file, which the write would
                # go to, is by then the one of the file that replaced it
                if (gone := self.store.gone()) is not None:
                    self._salvage(gone, keep, wrote=False)
                else:
                    try:
                        out = fn()
                    except (sqlite3.Error, OSError) as e:
                        self.pending = Pending(self.store.path, self.run)
                        for pos, (spec, ident, rd) in self.drives.items():
                            self.pending.drive(pos, spec, ident, rd)
                        keep(self.pending)
                        self._fail(f"cannot write results store {self.store.path} ({e}); {what}", e)
                    else:
                        if (gone := self.store.gone()) is None:
                            return out
                        self._salvage(gone, keep, wrote=True)
                if raise_:
                    raise self.stored_failure() from None
                return None
            keep(self.pending)
            try:
                self.pending.save()
            except OSError:
                pass  # the line of the write that started the pending file says where it is
            return None

    def _salvage(self, gone: str, keep: Callable[[Pending], object], wrote: bool) -> None:
        """The store's path no longer names the file written so far: the whole run, read back
        through the connection that wrote it, and this write (`wrote`: made already, so read
        back with the rest), to a pending file."""
        why = f"results store {self.store.path} was {gone} while run {self.run_id} went on"
        self.store.settle_gone()  # its -wal into its own file: not left for the file now at its path
        self.pending, unread = read_back(self.store, self.run_id, self.run, self.drives)
        if unread is not None:  # not even read back: what this run holds
            why, wrote = f"{why} (and it cannot be read back: {unread})", False
        if not wrote:
            keep(self.pending)
        self._fail(why, StoreError(why), "what the run recorded")

    def _fail(self, why: str, error: BaseException, what: str = "") -> None:
        _, msg = save_saying(self.pending, why, error, what)  # type: ignore[arg-type]
        self.failure = StoreWriteFailed(msg)

    def stored_failure(self) -> StoreWriteFailed:
        """The failure of the write that started the pending file (once one did)."""
        # the first failed write both starts `pending` and sets `failure` (in _save)
        assert self.failure is not None
        return self.failure

    def add_drive(self, pos: int, spec: str, ident: Any) -> int | None:
        idoc = asdict(ident) if hasattr(ident, "__dataclass_fields__") else ident
        self.drives[pos] = (spec, idoc, None)
        rd = self._write(lambda: self.store.add_drive(self.run_id, pos, spec, ident),
                         lambda p: p.drive(pos, spec, idoc, None), f"drive {spec} not recorded")
        self.drives[pos] = (spec, idoc, rd)
        return rd

    def add_phase(self, pos: int, rd: int | None, seq: int, res: PhaseResult,
                  status: str = "complete") -> None:
        self._write(lambda: self.store.add_phase(_taken(rd), seq, res, status),
                    lambda p: p.drive(pos)["phases"].append(phase_doc(seq, res, status)),
                    f"phase '{res.phase.name or res.phase.kind}' not stored")

    def checkpoint(self, rd: int | None, seq: int, res: PhaseResult) -> None:
        """The running phase so far, stored as `partial` (its final result replaces it).
        Not once the store has failed: the pending file keeps what the run ends with."""
        if self.pending is not None or rd is None or self.store.gone() is not None:
            return  # (a store gone: the phase's end saves the run to a pending file)
        with interrupts.shielded():
            try:
                self.store.add_phase(rd, seq, res, "partial")
            except (sqlite3.Error, OSError):
                pass  # the phase's own store at its end reports a store that fails

    def set_metrics(self, pos: int, rd: int | None, metrics: dict) -> None:
        self._write(lambda: self.store.set_metrics(_taken(rd), metrics),
                    lambda p: p.drive(pos).update(metrics=metrics), "metrics not stored")

    def set_purges(self, pos: int, rd: int | None, purges: list[str]) -> None:
        """The purge methods the drive's phases used, in its identity's `extra.purges`
        (stored at the start, before any purge ran)."""
        spec, idoc, _ = self.drives[pos]
        idoc = dict(idoc or {})
        idoc["extra"] = {**(idoc.get("extra") or {}), "purges": list(purges)}
        self.drives[pos] = (spec, idoc, rd)
        self._write(lambda: self.store.set_identity(_taken(rd), idoc),
                    lambda p: p.drive(pos).update(identity=idoc), "purge methods not stored",
                    raise_=False)

    def finish_drive(self, pos: int, rd: int | None, status: str) -> None:
        self._write(lambda: self.store.finish_drive(_taken(rd), status),
                    lambda p: p.drive(pos).update(status=status), "drive status not stored",
                    raise_=False)

    def finish_run(self, status: str, error: str | None = None) -> None:
        self._write(lambda: self.store.finish_run(self.run_id, status, error),
                    lambda p: p.doc["run"].update(status=status, error=error), "run status not stored",
                    raise_=False)


def read_back(store: Store, run_id: int, run: dict,
              drives: dict[int, tuple[str, Any, int | None]] | None = None) -> tuple[Pending, str | None]:
    """Run `run_id` (`run`: its own fields) as `store` holds it, as a pending file's document,
    read through the store's connection (which reads the file it wrote, even once the path
    names another file or none); and None. When it cannot be read back: the run's fields
    with `drives` (position -> spec, identity, run-drive id), and why not."""
    try:
        return from_store(store, run_id, run), None
    except (StoreError, sqlite3.Error, OSError) as e:
        p = Pending(store.path, dict(run, id=run_id))
        for pos, (spec, ident, rd) in (drives or {}).items():
            p.drive(pos, spec, ident, rd)
        return p, str(e)


class RunsNotKept(StoreWriteFailed):
    """Runs said to be stored were in a store file its path no longer names (check_kept):
    each went to a pending file, which the message names."""


def check_kept(store: Store, run_ids: int | Sequence[int], before: str = "") -> None:
    """Before a command says runs are stored (`run_ids`: every run it will say so of): the
    store's path still names the file they were written to (it may be removed or replaced
    after their last write, as their metrics print). Else each run, read back, goes to a
    pending file and RunsNotKept says where, in one line (after `before`)."""
    ids = [run_ids] if isinstance(run_ids, int) else list(run_ids)
    if not ids or (gone := store.gone()) is None:
        return
    with interrupts.shielded():
        store.settle_gone()  # its -wal into its own file: not left for the file now at its path
        saved, lost = [], []
        for run_id in ids:
            row = store.run_row(run_id) or {}
            run = {k: row.get(k) for k in ("test", "created", "token", "testbed", "engine_version")}
            p, _ = read_back(store, run_id, dict(run, args=json.loads(row.get("args") or "{}")))
            try:
                saved.append((run_id, p.save()))
            except OSError as e:
                lost.append((run_id, e))
    one = len(ids) == 1
    why = (f"results store {store.path} was {gone} after run{'' if one else 's'} "
           f"{', '.join(map(str, ids))} {'was' if one else 'were'} stored")
    if before:
        why = f"{before}; {why}"
    if one and saved:
        line = f"{why}: what the run recorded is {saved_line(saved[0][1], StoreError(why))}"
    elif saved:
        files = ", ".join(f"{f} (run {i})" for i, f in saved)
        line = (f"{why}: what they recorded is saved to {files}; once the store can be written, "
                f"`ssdlab results import FILE` for each")
    else:
        line = why
    if lost:
        line += (f"; no pending file could be written for run{'s' if len(lost) > 1 else ''} "
                 f"{', '.join(str(i) for i, _ in lost)} ({lost[0][1]}): what {'they' if len(lost) > 1 else 'it'} "
                 "recorded is lost")
    raise RunsNotKept(line)


@contextmanager
def kept_before(store: Store, run_ids: Callable[[], list[int]]) -> Iterator[None]:
    """A command's runs one after another: when a later run finds the store gone
    (StoreWriteFailed), the runs stored before it (`run_ids()` then), in the same lost file,
    go to pending files too, named in the same line (check_kept)."""
    try:
        yield
    except RunsNotKept:
        raise
    except StoreWriteFailed as e:
        check_kept(store, run_ids(), before=str(e))
        raise


def _taken(rd: int | None) -> int:
    """The run-drive id of a drive the store took. A write reaches the store only while
    nothing is pending, and a drive the store did not take (None) started the pending file."""
    assert rd is not None
    return rd


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


PlanItem = Phase | Batch


def _send(it: Any, result: Any) -> PlanItem | None:
    """The plan's next item, `result` handed back to a plan that is a generator."""
    try:
        return it.send(result) if isinstance(it, types.GeneratorType) else next(it)
    except StopIteration:
        return None


def steps(plan: Iterable[PlanItem]) -> Generator[Phase, PhaseResult | None, None]:
    """Walk a phase plan one phase at a time (a Batch's phases one by one); the caller
    sends each result back through `.send` on the returned generator for plans that are
    generators (a Batch's results go back to the plan as one list)."""
    it = iter(plan)
    item: PlanItem | None = next(it, None)
    while item is not None:
        if isinstance(item, Batch):
            got = []
            for p in item:
                got.append((yield p))
            # no results (a plan walked without running it): the plan gets None, as for a phase
            item = _send(it, None if any(r is None for r in got) else got)
        else:
            item = _send(it, (yield item))


def plan_items(test: str, capacity: int, opts: Options) -> list[PlanItem]:
    """The phases and Batches a run would execute (results unknown: dependent steps assume none)."""
    it = iter(get(test).phases(capacity, opts))
    out: list[PlanItem] = []
    item: PlanItem | None = next(it, None)
    while item is not None:
        out.append(item)
        item = _send(it, None)
    return out


def plan_phases(test: str, capacity: int, opts: Options) -> list[Phase]:
    """The phases a run would execute (results unknown: dependent steps assume none)."""
    return flat(plan_items(test, capacity, opts))


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


PhaseStart = Callable[[int, Phase], OnSample | None]  # (seq, phase) -> its sample listener
PhaseEnd = Callable[[int, PhaseResult | None, str], None]  # (seq, result, complete|partial)


def walk_phases(test: Test, target: Target, capacity: int, opts: Options,
                on_start: PhaseStart | None = None, on_end: PhaseEnd | None = None) -> list[PhaseResult]:
    """The one way to run a test's phases on a target: in order, each result handed back to
    the test's plan (a step may depend on a measured one), a Batch through the target's
    `run_phases` (back to back) and its results handed back as a list. `on_start` may
    return a listener for the phase's samples; `on_end` sees each result as it lands, and
    on an interrupt the partial result (the target's, else rebuilt from the samples; None
    without any) with status "partial" before the interrupt goes on."""
    results: list[PhaseResult] = []
    it = iter(test.phases(capacity, opts))
    item: PlanItem | None = next(it, None)
    while item is not None:
        got = _run_item(target, list(item) if isinstance(item, Batch) else [item], len(results),
                        on_start, on_end)
        results += got
        item = _send(it, got if isinstance(item, Batch) else got[0])
    return results


def _run_item(target: Target, phases: list[Phase], seq: int, on_start: PhaseStart | None,
              on_end: PhaseEnd | None) -> list[PhaseResult]:
    """Run one phase or a batch of them (run sequence numbers from `seq`)."""
    bufs: dict[int, SampleBuffer] = {}
    running: list[int] = []  # the phase started and not ended yet

    def start(i: int, phase: Phase) -> OnSample | None:
        interrupts.raise_if_stopping()
        listener = on_start(seq + i, phase) if on_start else None
        buf = bufs[i] = SampleBuffer()
        running[:] = [i]

        def on_sample(row: Sample) -> None:
            buf.add(row)
            if listener is not None:
                listener(row)
        return on_sample if on_start else None

    def end(i: int, res: PhaseResult) -> None:
        with interrupts.shielded():  # not marked ended without being handed over
            running.clear()
            if on_end is not None:
                on_end(seq + i, res, "complete")

    try:
        return target.run_phases(phases, start, end)
    except (Interrupted, KeyboardInterrupt) as e:
        if on_end is not None:
            i = running[0] if running else len(bufs)
            partial = getattr(e, "partial", None)
            if partial is None and i in bufs:
                partial = bufs[i].result(phases[i])
            on_end(seq + i, partial, "partial")
        raise


def run_drive(rec: Recorder, position: int, spec: str, target: Target,
              test: str, opts: Options, hooks: Hooks, outcomes: list[DriveOutcome]) -> None:
    """Run the test on one drive; its outcome joins `outcomes` as soon as it starts."""
    the_test = get(test)
    ident = target.identify()
    out = DriveOutcome(spec, -1)
    outcomes.append(out)
    rd = None

    def start(seq: int, phase: Phase) -> OnSample:
        hooks.phase_start(spec, test, phase, seq)
        buf, last = SampleBuffer(), [time.monotonic()]

        def listen(row: Sample) -> None:
            hooks.sample(row)
            buf.add(row)
            if time.monotonic() - last[0] >= CHECKPOINT_S:
                res = buf.result(phase)
                if res is not None:
                    rec.checkpoint(rd, seq, res)
                last[0] = time.monotonic()
        return listen

    purges: list[str] = []

    def end(seq: int, res: PhaseResult | None, status: str) -> None:
        if res is not None:
            rec.add_phase(position, rd, seq, res, status)
            method = getattr(res, "purge_method", None)  # set by a real drive's purge
            if method:
                purges.append(str(method))
        hooks.phase_end(res)

    try:
        with interrupts.shielded():  # a Ctrl-C meanwhile comes once `rd` is known, for its status
            rd = rec.add_drive(position, spec, ident)
            out.run_drive_id = rd if rd is not None else -1
        results = walk_phases(the_test, target, ident.capacity, opts, start, end)
        out.metrics = the_test.analyze(results, opts)
        rec.set_metrics(position, rd, out.metrics)
        out.status = "complete"
    except (Interrupted, KeyboardInterrupt):
        out.status = "interrupted"
        raise
    except BaseException:
        out.status = "failed"
        raise
    finally:
        if purges:
            rec.set_purges(position, rd, purges)
        rec.finish_drive(position, rd, out.status if out.status != "running" else "failed")


def engine_versions(targets: Sequence[Target]) -> str:
    seen = []
    for t in targets:
        v = t.engine_version
        if v and v not in seen:
            seen.append(v)
    return "; ".join(seen)


def preflight(test: str, drives: Sequence[tuple[str, Target]], opts: Options) -> None:
    """Checks of every drive for the whole test, before anything is stored: every phase
    fits the drive (Phase.resolve), and a target with `preflight(phases)` (real drives)
    raises its refusal (safety.UnsafeTarget, a ValueError) here, so a refused device
    leaves no run behind."""
    for _spec, target in drives:
        cap = target.identify().capacity
        phases = plan_phases(test, cap, opts)
        for p in phases:
            p.resolve(cap)
        target.preflight(phases)


def run_test(store: Store, test: str, drives: Sequence[tuple[str, Target]], opts: Options,
             args: dict, testbed: str | None = None, hooks: Hooks | None = None,
             token: str | None = None) -> tuple[int, list[DriveOutcome]]:
    """Run `test` on each drive in turn under one run id. Drives are checked (`preflight`)
    before the run is created. `token`: the run's secret (default a new one), given when a
    pending file holds the run already (held.py)."""
    get(test)  # unknown test: ValueError before anything is stored
    preflight(test, drives, opts)
    hooks = hooks or Hooks()
    engines = engine_versions([t for _, t in drives])
    try:
        with interrupts.shielded():
            run_id = store.create_run(test, args, testbed, engines, token=token)
    except KeyboardInterrupt:  # it came while the run was created: the run ends at once
        with interrupts.shielded():
            store.finish_run(run_id, "interrupted", "interrupted by the user")
        raise RunInterrupted(run_id, []) from None
    created = store.created(run_id)
    rec = Recorder(store, run_id, {"test": test, "created": created, "token": store.token(run_id), "args": args,
                                   "testbed": testbed, "engine_version": engines})
    outcomes: list[DriveOutcome] = []
    try:
        for pos, (spec, target) in enumerate(drives):
            run_drive(rec, pos, spec, target, test, opts, hooks, outcomes)
    except (Interrupted, KeyboardInterrupt):
        rec.finish_run("interrupted", "interrupted by the user")
        if rec.pending is not None:
            raise rec.stored_failure() from None
        raise RunInterrupted(run_id, outcomes) from None
    except BaseException as e:
        rec.finish_run("failed", f"{type(e).__name__}: {e}")
        if isinstance(e, StoreWriteFailed):
            raise
        raise RunFailed(run_id, e) from e
    rec.finish_run("complete")
    if rec.pending is not None:
        raise rec.stored_failure()
    return run_id, outcomes


UNFINISHED = ("interrupted", "stale")  # a drive's statuses whose run was cut short


def partial_metrics(store: Store, run: dict) -> None:
    """A run's drives that were cut short (interrupted, or stale: their process was killed)
    get the metrics their completed phases give, for a test whose figures stand on their
    own phases (Test.partial_metrics): each such drive's `metrics`, and `partial_metrics`
    saying what they are from ({"status", "phases": complete phases, "of": phases stored}).
    Computed when read, never stored: the stored metrics stay those of a finished run."""
    try:
        test = get(run["test"])
    except ValueError:
        return
    if not test.partial_metrics:
        return
    a = run.get("args") or {}
    try:  # the options the run was given; the others at their defaults
        opts = Options(**{k: a[k] for k in ("spare", "repeat", "seconds", "interval") if a.get(k) is not None})
    except (TypeError, ValueError):
        opts = Options()
    for d in run["drives"]:
        if d["status"] not in UNFINISHED or d.get("metrics"):
            continue
        phases = store.phases(d["id"])
        done = [p for p in phases if p["status"] == "complete"]
        results = [PhaseResult(Phase(**p["spec"]), p["series"], p["segments"],
                               {**p["latency"], **(p["histogram"] or {})}, p["totals"]) for p in done]
        try:
            metrics = test.analyze(results, opts)
        except (KeyError, ValueError, TypeError, IndexError):
            continue  # the phases of another version: no metrics, as before
        if any(k != "repeats" for k in metrics):
            d["metrics"] = metrics
            d["partial_metrics"] = {"status": d["status"], "phases": len(done), "of": len(phases)}
