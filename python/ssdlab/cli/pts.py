"""`ssdlab pts`: the tests of the SNIA Solid State Storage Performance Test Specification on
one or more drives, each test to steady state, then the report (HTML + PNGs)."""

from __future__ import annotations

import dataclasses
import os
import shlex
from pathlib import Path
from typing import NoReturn

import typer

from .options import Db, DestroyData, Drives, JsonOut, Seed, Sets, Testbed
from .. import methodology
from ..methodology import Options
from ..methodology.pts import PTS_TESTS
from ..methodology.pts import common as pts_common
from ..runner import RunFailed, RunInterrupted, check_kept, kept_before, plan_phases, preflight, run_test
from ..store import Store, check_free
from .errors import (EXIT_USER, UserError, interrupted_status, run_failed_line, sigterm_interrupts, unexpected_line,
                     user_errors)
from .inputs import made_dirs, open_drives, parse_sets
from .output import print_json, progress_hooks
from .plan import ASSUMED_MBPS, duration

NAMES = [n.removeprefix("pts-") for n in PTS_TESTS]


def estimate(test: str, capacity: int, opts: Options) -> tuple[float, int]:
    """Timed seconds (every round up to the cap, idle included) and bytes of writes that
    end on a byte count (preconditioning) of one test: its longest possible duration is
    the seconds plus those bytes at the drive's write speed."""
    secs, nbytes = 0.0, 0
    for p in plan_phases(test, capacity, opts):
        if p.kind == "idle":
            secs += float(p.seconds or 0)
        elif p.kind == "io":
            if p.stop_seconds is not None:
                secs += float(p.stop_seconds)
            else:
                nbytes += int(p.stop_bytes or 0)
    return secs, nbytes


def pts_cmd(
    drive: Drives = [],
    out: Path = typer.Option(..., "-o", "--out", help="report directory"),
    tests: list[str] = typer.Option([], "--test", "-t", help=f"run only these (repeatable): {', '.join(NAMES)}; default all"),
    enterprise: bool = typer.Option(False, "--enterprise", help=pts_common.HELP["enterprise"]),
    rounds: int | None = typer.Option(None, "--rounds", help=pts_common.HELP["rounds"]),
    quick: bool = typer.Option(False, "--quick", help=pts_common.HELP["quick"]),
    round_seconds: float | None = typer.Option(None, "--round-seconds", help=pts_common.HELP["round_seconds"]),
    response_ceiling: float | None = typer.Option(None, "--response-ceiling", help=pts_common.HELP["response_ceiling"]),
    sets: Sets = [],
    testbed: Testbed = None,
    db: Db = None,
    destroy_data: DestroyData = None,
    seed: Seed = 42,
    json_out: JsonOut = False,
    jobs: int | None = typer.Option(None, "--jobs", help="simulated drives: tests at once on N worker processes (default: one per core; 1: one after another)"),
) -> None:
    """The SNIA PTS 2.0.2 tests, each to steady state, and their report."""
    with user_errors(), sigterm_interrupts(), made_dirs() as dirs:
        unknown = [t for t in tests if t.removeprefix("pts-") not in NAMES]
        if unknown:
            raise UserError(f"--test {unknown[0]}: choose from {', '.join(NAMES)}")
        chosen = [f"pts-{n}" for n in NAMES if not tests or n in {t.removeprefix('pts-') for t in tests}]
        po = pts_common.settings(enterprise, rounds, quick, round_seconds, response_ceiling)
        if jobs is not None and jobs < 1:
            raise UserError(f"--jobs {jobs}: must be at least 1")
        drv = open_drives(drive, parse_sets(sets), seed, destroy_data, False)
        po = dataclasses.replace(po, logical_block=pts_common.logical_block(drv))
        opts = Options(own=po)
        for test in chosen:  # every drive refused or accepted for every test, before anything
            preflight(test, drv, opts)
        dirs.check(out)  # once the drives passed: a refused command makes no directory
        for spec, target in drv:
            if target.capabilities.simulated:
                continue
            cap = target.identify().capacity
            secs, nbytes = map(sum, zip(*(estimate(t, cap, opts) for t in chosen)))
            typer.echo(f"ssdlab: {spec}: {', '.join(chosen)} take at most {duration(secs)} of timed "
                       f"steps (every test to {po.max_rounds} rounds) plus {nbytes / 1e9:.1f} GB "
                       f"of preconditioning writes ({duration(nbytes / (ASSUMED_MBPS * 1e6))} at {ASSUMED_MBPS:g} MB/s); steady "
                       f"state usually ends a test earlier", err=True)
        check_free(db)
        store = Store(db)
        store.check_writable()
        args = {"drives": drive, "segment": po.segment, "rounds": po.max_rounds,
                "round_seconds": po.round_seconds, "scale": po.scale, "wait_scale": po.wait_scale,
                "logical_block": po.logical_block, "response_ceiling_ms": po.response_ceiling_ms,
                "set": sets, "seed": seed}
        done: list[dict] = []

        def ids() -> list[int]:
            return [d["run_id"] for d in done]

        def on_run(test: str, run_id: int, outcomes: list) -> None:
            check_kept(store, ids() + [run_id])  # the tests before it were in the same file
            for o in outcomes:
                typer.echo(f"ssdlab:   {test} on {o.spec}: {verdict_line(o.metrics)}; run {run_id}", err=True)
            done.append({"test": test, "run_id": run_id, "status": "complete",
                         "drives": [{"drive": o.spec, "metrics": o.metrics} for o in outcomes]})

        def stopped(error: str, failed: list[tuple[str, int]], code: int) -> NoReturn:
            """The error's line, then the tests stored (`failed`: those that failed) and how to go on."""
            done.extend({"test": t, "run_id": i, "status": "failed"} for t, i in failed)
            done.sort(key=lambda d: d["run_id"])
            if json_out:  # a script still learns the runs kept (as an interrupted pts prints them)
                print_json({"report": None, "runs": done})
            check_kept(store, ids(), before=error)
            typer.echo(f"ssdlab: error: {error}", err=True)
            for line in not_run_lines(done, chosen, out, db, "stopped"):
                typer.echo(f"ssdlab: {line}", err=True)
            raise typer.Exit(code)

        def test_failed(e: RunFailed) -> NoReturn:
            if os.environ.get("SSDLAB_DEBUG") and e.exit_code != EXIT_USER:
                raise e.error from None
            row = store.run_row(e.run_id)
            stopped(run_failed_line(e), [(row["test"] if row else "?", e.run_id), *e.also], e.exit_code)

        from ..executor import open_executor
        from ..review import Request, ReviewStopped, parallel, run_parallel

        executor = open_executor(jobs, None)
        if parallel(drv, executor) and len(chosen) > 1:
            from ..units_progress import UnitsProgress

            bar = UnitsProgress("pts", len(chosen) * len(drv), where=executor.describe())
            try:
                with bar, executor, kept_before(store, ids):
                    run_parallel(Request(store, drv, list(sets), seed, opts, args, testbed),
                                 executor, on_run, bar.finished, tests=chosen)
            except RunFailed as e:  # a test failed: the tests finished meanwhile are stored too
                test_failed(e)
            except ReviewStopped as e:  # a worker died: its error, then what is kept and how to go on
                if os.environ.get("SSDLAB_DEBUG"):
                    raise e.error from None
                stopped(unexpected_line(e.error), [], 1)
            except KeyboardInterrupt:
                if json_out:  # a script still learns the runs kept (as an interrupted review prints its own)
                    print_json({"report": None, "runs": done})
                check_kept(store, ids())
                for line in not_run_lines(done, chosen, out, db):
                    typer.echo(f"ssdlab: {line}", err=True)
                raise typer.Exit(interrupted_status()) from None
            chosen = []
        else:
            executor.close()
        with progress_hooks() as hooks, kept_before(store, ids):
            for i, test in enumerate(chosen, 1):
                methodology.get(test)
                typer.echo(f"ssdlab: pts {i}/{len(chosen)}: {test}", err=True)
                try:
                    run_id, outcomes = run_test(store, test, drv, opts, args, testbed, hooks)
                except RunInterrupted as e:
                    done.append({"test": test, "run_id": e.run_id, "status": "interrupted"})
                    if json_out:
                        print_json({"report": None, "runs": done})
                    check_kept(store, ids())
                    typer.echo(f"ssdlab: {test} interrupted; run {e.run_id} keeps its rounds",
                               err=True)
                    for line in not_run_lines(done, chosen, out, db)[1:]:
                        typer.echo(f"ssdlab: {line}", err=True)
                    raise
                except RunFailed as e:
                    test_failed(e)
                on_run(test, run_id, outcomes)
        from ..report import build_report

        try:
            html = build_report(store, ids(), out)
        except KeyboardInterrupt:  # every test stored: which, and the command that draws their report
            if json_out:
                print_json({"report": None, "runs": done})
            check_kept(store, ids())
            for line in not_run_lines(done, [d["test"] for d in done], out, db):
                typer.echo(f"ssdlab: {line}", err=True)
            raise typer.Exit(interrupted_status()) from None
    if json_out:
        print_json({"report": str(html), "runs": done})
    with user_errors():
        check_kept(store, ids())  # (as `run`'s: the document first, then the line that says they are lost)
    if not json_out:
        print(html)


def verdict_line(m: dict) -> str:
    """A test's steady-state outcome in a few words (XSR: whether its third group settled)."""
    if "groups" in m:
        ratio = m.get("recovery_ratio")
        how = f" ({ratio:.2g} x the first's MB/s)" if ratio is not None else ""
        at = m.get("recovery_minutes")
        per_second = ((m.get("groups") or {}).get("ag3") or {}).get("step_s") == 1  # under 5 minutes
        if at is None:
            return "third access group never settled" + how
        when = f"second {at * 60:.0f}" if per_second else f"minute {at:g}"
        return f"third access group settled at {when}{how}"
    if "rounds" not in m:
        return "no steady-state rule"
    if m.get("steady_reached"):
        return f"steady at round {m.get('steady_round')}"
    return f"steady state not reached in {pts_common.n_rounds(m.get('rounds'))}"


def not_run_lines(done: list[dict], chosen: list[str], out: Path, db: Path | None,
                  how: str = "interrupted") -> list[str]:
    """What a pts that was interrupted (or `how` it ended otherwise) kept and left: the tests
    stored, those not run, and the command that runs those (its report is never drawn:
    `ssdlab report` of the runs draws it)."""
    complete = {d["test"] for d in done if d["status"] == "complete"}
    left = [t for t in chosen if t not in complete]
    said = ", ".join(f"{d['test']} (run {d['run_id']}" + ("" if d["status"] == "complete" else
                                                          f", {d['status']}") + ")" for d in done)
    lines = [f"pts {how}; tests stored: {said or 'none'}"
             + (f"; not run: {', '.join(unrun)}" if (unrun := [t for t in left if t not in
                                                                 {d["test"] for d in done}]) else "")]
    where = f" -o {shlex.quote(str(out))}" + (f" --db {shlex.quote(str(db))}" if db else "")
    if not left and done:
        lines.append(f"their report: ssdlab report {' '.join(str(d['run_id']) for d in done)}{where}")
    if left:
        lines.append("to go on, the same `ssdlab pts` with " + " ".join(f"--test {t.removeprefix('pts-')}" for t in left)
                     + (f"; then `ssdlab report {' '.join(str(d['run_id']) for d in done)} "
                        f"<the new runs>{where}` of all the runs" if done else ""))
    return lines

