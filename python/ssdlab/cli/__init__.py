"""The `ssdlab` command: run the review methodology on simulated and real drives."""

from __future__ import annotations

import inspect
import os
import sqlite3
import sys

# Before numpy loads OpenBLAS: its worker thread spins (yielding) for 2^28 cycles, about
# 0.1 s of CPU, after it starts and after every BLAS call before it sleeps; 2^20 cycles
# (under a millisecond) keeps it spinning between calls that follow each other closely.
# Only when a thread sleeps changes, never what it computes.
os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "20")
from pathlib import Path
from typing import Annotated, Any, Callable, NoReturn, Optional, cast

import typer

from .options import (Db, DestroyData, Drives, Interval, JsonOut, Repeat, ReviewInterval, ReviewSeconds, Seconds, Seed,
                      Sets, Spare, Testbed)
from .. import __version__, interrupts
from . import request
from .request import RunRequest
from ..analysis import comparison_table
from ..errors import one_line
from .errors import (EXIT_INTERRUPTED, EXIT_TERMINATED, EXIT_USER, UserError,  # noqa: F401
                         interrupted_status, new_command, sigterm_interrupts, untold_interruption,
                         run_failed_line, unexpected_line, user_errors, warnings_as_lines)
from .inputs import (PRECONDITION_TESTS, TEST_NAMES, check_out_dir, check_y_max, made_dirs,
                         existing_store, open_drives, parse_sets, ray_choice, run_id, RUN_HELP, RUN_IDS,
                         RunIdsCommand)
from .output import emit_table, fmt, pct_cell, print_json, progress_hooks
from .results import results_app
from .sweep import sweep_cmd
from .fit import fit_cmd
from .pts import pts_cmd
from .remote import FIO_SERVER, agent_cmd, fio_server_cmd
from .fleet import run_fleet
from .. import methodology
from ..methodology import Options
from ..methodology.settings import differing
from .mistakes import ClickException, mistake, option_without_value
from .plan import print_plan, print_review_plan
from .review_interrupted import interrupted_lines
from ..no_result import has_result, no_result
from ..review import Request, review_runs
from ..runner import RunFailed, RunInterrupted, check_kept, kept_before, partial_metrics, preflight, run_test
from .serve import serve_cmd
from ..store import Store, StoreError, check_free
from ..targets.spec import profile_id


class App(typer.Typer):
    """Command-line mistakes (missing argument, unknown option) as one line, exit 2."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        kwargs.setdefault("standalone_mode", False)
        new_command()
        argv = kwargs.get("args", args[0] if args else None) or sys.argv[1:]
        # click's command tree is built only for a line where the mistake may be
        slip = any(a.startswith("--") and b.startswith("--") for a, b in zip(argv, argv[1:])) and \
            option_without_value(typer.main.get_command(self), argv)
        if slip:
            typer.echo(f"ssdlab: error: {slip}", err=True)
            sys.exit(EXIT_USER)
        try:
            with interrupts.handled(ignore_after_stop=True), warnings_as_lines():
                rv = super().__call__(*args, **kwargs)
        except ClickException as e:
            if type(e).__name__ == "NoArgsIsHelpError":  # the help is already printed
                sys.exit(EXIT_USER)
            typer.echo(f"ssdlab: error: {mistake(e, argv)}", err=True)
            sys.exit(EXIT_USER if e.exit_code == 2 else e.exit_code)
        # Ctrl-C or SIGTERM outside a run: nothing was stored (typer builds the command
        # before click's own catch, which turns the interrupt into Abort, begins)
        except (typer.Abort, KeyboardInterrupt):
            typer.echo("ssdlab: interrupted", err=True)
            sys.exit(interrupted_status())
        if untold_interruption(rv):
            typer.echo("ssdlab: interrupted", err=True)
            sys.exit(interrupted_status())
        sys.exit(rv if isinstance(rv, int) else 0)


app = App(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False,
          help="SSD characterization: the review methodology on simulated and real drives.")
app.add_typer(results_app, name="results")


def _version(value: bool) -> None:
    if value:
        typer.echo(f"ssdlab {__version__}")
        raise typer.Exit()


@app.callback()
def _options(version: Annotated[bool, typer.Option("--version", callback=_version, is_eager=True,
                                                   help="print ssdlab's version and exit")] = False) -> None:
    """SSD characterization: the review methodology on simulated and real drives."""

@app.command()
def drives(json_out: JsonOut = False) -> None:
    """The built-in simulated drive profiles and their key specs."""
    from .._sim import Drive
    from ..profiles import builtin_ids, load_text

    rows = []
    with user_errors():
        for pid in builtin_ids():
            i = Drive.describe(load_text(pid))  # the profile's figures, no drive built
            rows.append({"drive": f"sim:{pid}", "name": i.get("name"),
                         "capacity_gb": i["user_bytes"] / 1e9, "interface": i.get("interface"),
                         "nand": f"{i.get('cell')} {i.get('channels')}ch {i.get('dies')} dies",
                         "mapping": i.get("mapping"), "spare_pct": i.get("spare_pct")})
    if json_out:
        print_json(rows)
    else:
        emit_table("Built-in drives", list(rows[0]) if rows else ["drive"],
                   [list(r.values()) for r in rows])


def run_doc(run_id: int, test: str, outcomes) -> dict:
    return {"run_id": run_id, "test": test,
            "drives": [{"drive": o.spec, "metrics": o.metrics, "status": o.status}
                       for o in outcomes]}


def stored_doc(store: Store, run_id: int, test: str) -> dict:
    """`run_doc` of a run as its store holds it (a failed run: its drives' stored status and
    whatever metrics they have)."""
    try:
        drives = store.run(run_id)["drives"]
    except (StoreError, sqlite3.Error):  # the run's writes went to a pending file
        drives = []
    return {"run_id": run_id, "test": test,
            "drives": [{"drive": d["spec"], "metrics": d.get("metrics") or {}, "status": d["status"]} for d in drives]}


def show_metrics(doc: dict, opts: Options) -> None:
    verdict = methodology.get(doc["test"]).verdict
    for d in doc["drives"]:
        if not has_result(d["metrics"]):  # one line, not an empty table
            print(f"run {doc['run_id']} {doc['test']} {d['drive']}: {no_result(d['status'])}")
            continue
        emit_table(f"run {doc['run_id']} {doc['test']} {d['drive']} ({d['status']})",
                   ["metric", "value"], [[k, v] for k, v in d["metrics"].items() if k != "repeats"])
        line = verdict(d["metrics"], opts) if verdict else None
        if line:
            print(f"{d['drive']}: {line}")


def run(**kw: Any) -> None:
    """Run one test of the methodology on one or more drives."""
    with user_errors(), sigterm_interrupts():
        own = request.test_options()
        req = RunRequest(kw["test"], kw["drive"], kw["spare"], kw["repeat"], kw["seconds"],
                         kw["interval"], kw["precondition"], kw["sets"], kw["seed"], kw["testbed"],
                         kw["db"], kw["destroy_data"], {name: kw[name] for name in own})
        the_test = req.the_test
        if kw["fio_jobs"] and not kw["plan"]:
            raise UserError("--fio-jobs goes with --plan (it prints a real drive's fio job files instead of running them)")
        console = request.CliConsole(hold=True)
        req.check(console)  # the test's own options (a trace read, a job file found) first
        if not req.precondition and not the_test.precondition_optional:
            raise UserError(f"--no-precondition: {req.test} needs the drive in a known state; "
                            f"only {PRECONDITION_TESTS} can skip its purge and fill")
        req.options()  # the options every test shares, checked before any drive is opened
        drv = open_drives(req.drives, parse_sets(req.sets), req.seed, req.destroy_data, kw["plan"])
        req.for_drives(drv, console)  # e.g. a job file compiled for the drives' capacity
        opts = req.options()
        if not (kw["fleet"] or kw["plan"]):
            preflight(req.test, drv, opts)  # every phase fits every drive: a refused run makes no store
            check_free(req.db)  # before the store is even created
            store = Store(req.db)
            store.check_writable()
        console.release()  # notes and warnings once everything was checked: a refused command says one line
        for flag in the_test.unused(req.given()):
            typer.echo(f"ssdlab: warning: {flag} is not used by {req.test}", err=True)
        if not req.precondition and any(t.capabilities.simulated for _, t in drv):
            typer.echo("ssdlab: warning: --no-precondition on a simulated drive reads a drive "
                       "that was never written", err=True)
        if kw["fio_jobs"] and all(t.capabilities.simulated for _, t in drv):
            typer.echo("ssdlab: warning: --fio-jobs shows nothing more here: a simulated drive runs no fio "
                       "job (its phases run in the simulator); the plan is its phase table", err=True)
        if kw["fleet"]:  # fleet.py: every drive at once, each its own `ssdlab run`
            raise typer.Exit(run_fleet(req.test, drv, opts, kw["json_out"], req.db, req.argv(), kw["plan"]))
        if kw["plan"]:
            return print_plan(req.test, drv, opts, kw["json_out"], kw["fio_jobs"])
        with progress_hooks() as hooks:
            try:
                run_id, outcomes = run_test(store, req.test, drv, opts, req.stored_args(), req.testbed, hooks)
            except RunInterrupted as e:
                if kw["json_out"]:  # scripts still learn the run id and what each drive reached
                    print_json(run_doc(e.run_id, req.test, e.outcomes))
                check_kept(store, e.run_id)  # before the line that says what was recorded is kept
                raise
    doc = run_doc(run_id, req.test, outcomes)
    if kw["json_out"]:
        print_json(doc)
        with user_errors():
            check_kept(store, run_id)  # (the document says where the run is: still there)
        return
    shown = the_test.options.show(doc, req.own, req.values, store, outcomes, console) if the_test.options else None
    for block in shown[0] if shown else ():
        print_json(block) if isinstance(block, dict) else print(block)
    if shown is None:
        show_metrics(doc, opts)
    with user_errors():
        check_kept(store, run_id)  # removed or replaced since its last write: not said to hold it
    if shown and shown[1]:  # stdout holds the test's own document only
        typer.echo(f"stored as run {run_id} in {store.path}", err=True)
    else:
        print(f"stored as run {run_id} in {store.path}")


COMMON_RUN_OPTIONS = [
    inspect.Parameter(n, inspect.Parameter.POSITIONAL_OR_KEYWORD, default=d, annotation=a) for n, a, d in (
        ("test", str, typer.Argument(..., help=f"one of: {TEST_NAMES}")),
        ("drive", Drives, []),
        ("spare", Spare, 0.0),
        ("repeat", Optional[int], typer.Option(None, "--repeat", help="quick: scored runs of each test (default 5; CrystalDiskMark shows the best)")),
        ("seconds", Seconds, None),
        ("interval", Interval, None),
        ("sets", Sets, []),
        ("testbed", Testbed, None),
        ("db", Db, None),
        ("json_out", JsonOut, False),
        ("destroy_data", DestroyData, None),
        ("plan", bool, typer.Option(False, "--plan", help="print the phases and run nothing (real drives: the safety verdict, an estimate and the device first; --fio-jobs: every fio job file and command too)")),
        ("fio_jobs", bool, typer.Option(False, "--fio-jobs", help="with --plan on a real drive: print its plan in full, every phase's fio job file and command")),
        ("seed", Seed, 42),
        ("precondition", bool, typer.Option(True, "--precondition/--no-precondition", help=f"--no-precondition skips the purge and fill ({PRECONDITION_TESTS} on an already filled drive: reads only)")),
        ("fleet", bool, typer.Option(False, "--fleet", help="run the drives at the same time, each as its own run (e.g. drives on several hosts: --drive h1:/dev/X --drive h2:/dev/Y)")),
    )]


class RunCommand:
    """Run one test of the methodology on one or more drives."""

    __annotations__ = dict[str, Any]()  # typer reads the parameters from the signature

    @property
    def __signature__(self) -> inspect.Signature:
        """The options every test shares, then those of the registered tests (read when
        the command line is parsed, so a test registered later brings its own)."""
        return inspect.Signature(COMMON_RUN_OPTIONS + request.typer_parameters())

    def __call__(self, **kw: Any) -> None:
        run(**kw)


app.command("run")(RunCommand())


@app.command()
def review(
    drive: Drives = [],
    out: Optional[Path] = typer.Option(None, "-o", "--out", help="report directory (required but with --plan)"),
    spare: Spare = 0.0,
    repeat: Repeat = 5,
    seconds: ReviewSeconds = None,
    interval: ReviewInterval = None,
    sets: Sets = [],
    testbed: Testbed = None,
    db: Db = None,
    y_max: Optional[float] = typer.Option(None, "--y-max", help="fill-curve y-axis top (MB/s)"),
    json_out: JsonOut = False,
    destroy_data: DestroyData = None,
    seed: Seed = 42,
    jobs: Optional[int] = typer.Option(None, "--jobs", "-j", help="simulated drives: tests at once on local worker processes (default: one per core; 1: one after another)"),
    ray: bool = typer.Option(False, "--ray", help="simulated drives: run the tests on a local Ray instance (or --ray-address)"),
    ray_address: Optional[str] = typer.Option(None, "--ray-address", metavar="ADDRESS", help="the Ray cluster to run the tests on (implies --ray)"),
    plan: bool = typer.Option(False, "--plan", help="print every test's phases and run nothing (real drives: the safety verdict once, each test's estimate; `run TEST --plan --fio-jobs` shows a test's fio jobs and commands)"),
) -> None:
    """The whole methodology on the drives, then one report."""
    with user_errors(), sigterm_interrupts(), made_dirs() as dirs:
        if out is None and not plan:
            raise UserError("missing option '-o' / '--out': the report directory")
        opts = Options(spare=spare, repeat=repeat, seconds=seconds, interval=interval)
        drv = open_drives(drive, parse_sets(sets), seed, destroy_data, plan)
        check_y_max(y_max)
        if jobs is not None and jobs < 1:
            raise UserError(f"--jobs {jobs}: must be at least 1")
        args = {"drives": drive, "spare": spare, "repeat": repeat, "seconds": seconds,
                "set": sets, "seed": seed, "review": True}
        if interval is not None:
            args["interval"] = interval
        if plan:  # a plan stores nothing: no store, no report directory
            return print_review_plan(review_runs(Request(cast(Store, None), drv, parse_sets(sets), seed, opts,
                                                         args)), json_out)
        assert out is not None
        where = ray_choice(ray, ray_address)
        for test in methodology.TESTS:  # every test fits every drive: a refused review makes nothing
            preflight(test, drv, opts)
        dirs.check(out)  # before any test runs, not after them all
        check_free(db)  # before the store is even created
        store = Store(db)
        store.check_writable()
        docs: list[dict] = []
        html = run_review(Request(store, drv, parse_sets(sets), seed, opts, args, testbed), docs, jobs, where,
                          lambda executor: build(store, [d["run_id"] for d in docs], out, y_max, executor),
                          out=out, db=db, json_out=json_out)
    ids = [d["run_id"] for d in docs]
    if json_out:
        print_json({"report": str(html), "runs": docs})
    else:
        for d in docs:
            show_metrics(d, opts)
    with user_errors():
        check_kept(store, ids)  # (as `run`'s: the document first, then the line that says they are lost)
    if not json_out:
        print(f"report: {html}")


def run_review(req: Request, docs: list[dict], jobs: Optional[int], ray: Optional[str],
               report: Callable[[Any], Path], out: Optional[Path] = None, db: Optional[Path] = None,
               json_out: bool = False) -> Path:
    """The tests in parallel on simulated drives, else one after another (review.py), then
    `report(executor)`: the report, drawn on the review's workers. Interrupted: the runs
    kept and the commands to see them and go on (`out`, `db`: the review's), and with
    `json_out` the review's document with no report."""
    from .. import review as rv
    from ..targets.sim import SimTarget

    # a real drive's review runs for hours, test after test: a line as each is stored says
    # where it is (the progress bars show only at a terminal)
    real = any(not isinstance(t, SimTarget) for _, t in req.drives)

    def on_run(test: str, run_id: int, outcomes: list) -> None:
        docs.append(run_doc(run_id, test, outcomes))
        check_kept(req.store, [d["run_id"] for d in docs])  # the tests before it were in the same file
        if real:
            status = ", ".join(dict.fromkeys(o.status for o in outcomes))
            typer.echo(f"ssdlab: review: {test} stored as run {run_id} ({status})", err=True)

    def stopped(error: str, last: list[tuple[str, int, str]], code: int) -> NoReturn:
        """The error's line, then the tests stored before it (hours of them) and how to go on."""
        kept = sorted([(d["test"], d["run_id"], run_status(d)) for d in docs] + last, key=lambda k: k[1])
        if json_out:  # a script still learns the runs kept, the failed one as stored
            print_json({"report": None, "runs": sorted(docs + [stored_doc(req.store, i, t) for t, i, _ in last],
                                                       key=lambda d: d["run_id"])})
        check_kept(req.store, [i for _, i, _ in kept], before=error)
        typer.echo(f"ssdlab: error: {error}", err=True)
        for line in interrupted_lines(kept, [t for t, _, _ in rv.review_runs(req)], out, db, "stopped"):
            typer.echo(f"ssdlab: {line}", err=True)
        raise typer.Exit(code)

    kept: list[tuple[str, int, str]] = []
    try:
        with kept_before(req.store, lambda: [d["run_id"] for d in docs]):
            return rv.run(req, jobs, ray, progress_hooks, on_run,
                          lambda line: typer.echo(f"ssdlab: warning: {line}", err=True), report)
    except rv.ReviewInterrupted:
        pass
    except RunInterrupted as e:  # a test of a sequential review (a real drive's) was cut short
        row = req.store.run_row(e.run_id)
        kept.append((row["test"] if row else "?", e.run_id, "interrupted"))
        docs.append(run_doc(e.run_id, kept[-1][0], e.outcomes))
    except RunFailed as e:  # the error, then the tests kept before it: hours of them
        if os.environ.get("SSDLAB_DEBUG"):
            raise
        row = req.store.run_row(e.run_id)
        stopped(run_failed_line(e), [(row["test"] if row else "?", e.run_id, "failed"),
                                     *((t, i, "failed") for t, i in e.also)], e.exit_code)
    except rv.ReviewStopped as e:  # a worker died: the error, then the tests kept before it
        if os.environ.get("SSDLAB_DEBUG"):
            raise e.error from None
        stopped(unexpected_line(e.error), [], 1)
    except rv.ReviewRefused as e:  # a drive in use since the test before: its refusal, exit 2
        if not docs:
            raise e.error from None
        stopped(one_line(e.error), [], EXIT_USER)
    kept = [(d["test"], d["run_id"], run_status(d)) for d in docs[:len(docs) - len(kept)]] + kept
    if json_out:  # a script still learns the runs kept (as an interrupted `run` prints its own)
        print_json({"report": None, "runs": docs})
    check_kept(req.store, [i for _, i, _ in kept])
    for line in interrupted_lines(kept, [t for t, _, _ in rv.review_runs(req)], out, db):
        typer.echo(f"ssdlab: {line}", err=True)
    raise typer.Exit(interrupted_status())


def run_status(doc: dict) -> str:
    """A stored run's status as its drives give it (`complete` when every one is)."""
    return ", ".join(dict.fromkeys(d.get("status", "complete") for d in doc.get("drives") or [])) or "complete"


def build(store: Store, run_ids: list[int], out: Path, y_max: float | None, executor: Any = None) -> Path:
    from ..report import build_report

    check_out_dir(out)
    try:
        return build_report(store, run_ids, out, y_max=y_max, executor=executor)
    except OSError as e:  # the report directory cannot be made or written: the user's to fix
        where = Path(e.filename) if e.filename else None
        if where is None or not (where == out or out in where.parents or where in out.parents):
            raise
        raise UserError(f"cannot write the report to {out}: {e.strerror or e}") from None


app.command("serve")(serve_cmd)  # serve/command.py: a simulated drive over NBD


@app.command(cls=RunIdsCommand, context_settings=RUN_IDS)
def report(
    runs: list[str] = typer.Argument(None, metavar="[RUN]...", help=RUN_HELP),
    latest: bool = typer.Option(False, "--latest", help="the most recent run"),
    out: Path = typer.Option(..., "-o", "--out", help="report directory"),
    y_max: Optional[float] = typer.Option(None, "--y-max", help="fill-curve y-axis top (MB/s; not with --sweep)"),
    db: Db = None,
    sweep_id: Optional[str] = typer.Option(None, "--sweep", help="the report of a sweep (its id, e.g. sw-5fcdec4f2d): metrics against parameters, sensitivity, grid.csv"),
) -> None:
    """A self-contained HTML report plus one PNG per figure."""
    with user_errors():
        check_y_max(y_max)
        store = existing_store(db)
        if sweep_id is not None:
            if runs or latest:
                raise UserError("--sweep reports a whole sweep: give no run ids or --latest with it")
            if y_max is not None:  # it would be ignored: a sweep report has no fill curve
                raise UserError(f"--y-max {y_max:g}: sets the fill curves' y axis of a run report; a sweep "
                                "report (--sweep) draws none: leave --y-max out")
            from ..report.sweep import build_sweep_report
            from ..report.sweep_data import stored_runs

            stored_runs(store, sweep_id)  # a mistyped id: no report directory made
            check_out_dir(out)
            print(build_sweep_report(store, sweep_id, out))
            return
        ids = [run_id(store, r) for r in runs or []]
        if latest:
            ids.append(store.latest_run_id())
        if not ids:
            raise UserError("name runs to report, or --latest")
        ids = list(dict.fromkeys(ids))  # a run named twice (12 -1, --latest) is drawn once
        for i in ids:
            store.run(i)  # unknown run: one clear line
        html = build(store, ids, out, y_max)
    print(html)


@app.command(cls=RunIdsCommand, context_settings=RUN_IDS)
def compare(
    runs: list[str] = typer.Argument(..., metavar="RUN...", help=RUN_HELP),
    db: Db = None,
    json_out: JsonOut = False,
) -> None:
    """Metrics side by side, with the % change of each drive against the first."""
    with user_errors():
        store = existing_store(db)
        ids = dict.fromkeys(run_id(store, r) for r in runs)  # a run named twice (12 -1) is one column
        loaded = [store.run(i) for i in ids]
        for r in loaded:  # a quick run cut short: the figures of the tests it completed
            partial_metrics(store, r)
    for r in loaded:
        bad = [d["spec"] for d in r["drives"] if d["status"] != "complete"]
        if r["status"] != "complete" or bad:
            what = f"run {r['id']} is {r['status']}" + (f" ({', '.join(bad)} not complete)" if bad else "")
            # a drive's name, the runs' settings: stored text, which never drives the terminal
            typer.echo(f"ssdlab: warning: {fmt(what)}: its metrics are partial or missing (-)", err=True)
    for key, what in (("test", "tests"), ("testbed", "testbed tags"),
                      ("methodology_version", "methodology versions")):
        if len({r[key] for r in loaded}) > 1:
            typer.echo(f"ssdlab: warning: runs have different {what}", err=True)
    for line in differing((r["id"], r["test"], r["args"]) for r in loaded):
        typer.echo(f"ssdlab: warning: {fmt(line)}", err=True)
    for line in run_verdicts(loaded):  # why a complete run's figures are `-`
        typer.echo(f"ssdlab: warning: {fmt(line)}", err=True)
    cols = [(column_label(r, d), d["metrics"]) for r in loaded for d in r["drives"]]
    rows = comparison_table(cols)
    if json_out:
        print_json({"columns": [c for c, _ in cols], "rows": rows})
        return
    headers = ["metric"] + [c for c, _ in cols] + [f"% {c}" for c, _ in cols[1:]]
    emit_table("comparison", headers,
               [[r["metric"]] + r["values"] + [pct_cell(p) for p in r["pct"][1:]]
                for r in rows if r["metric"] != "repeats"])


def run_verdicts(loaded: list[dict]) -> list[str]:
    """`run N DRIVE: <verdict>` for each complete drive its test has a verdict on."""
    return [f"run {r['id']} {d['spec']}: {line}" for r in loaded for d in r["drives"]
            if (line := methodology.run_verdict(r["test"], r.get("args"), d["metrics"], d["status"]))]


def column_label(run: dict, drive: dict) -> str:
    """run:drive (capacity): the capacity tells apart the models of a scaling table and
    drives changed with --set."""
    cap = drive["identity"].get("capacity")  # in GB as `ssdlab drives` shows it (2.147, not 2.14748)
    return f"{run['id']}:{drive['spec']}" + (f" ({fmt(cap / 1e9)} GB)" if cap else "")


@app.command()
def validate(
    drive: Optional[list[str]] = typer.Option(
        None, "--drive", help="a calibrated profile id, e.g. xg6-256 or sim:xg6-256 (repeatable; default: all)"),
    figure: Optional[list[str]] = typer.Option(
        None, "--figure", help="only this figure, e.g. post-cache (repeatable; default: every one)"),
    json_out: JsonOut = False,
    markdown: bool = typer.Option(False, "--markdown", help="print the docs/calibration.md page"),
    workers: Optional[int] = typer.Option(None, "--workers", min=1,
                                          help="parallel processes (default: one per core)"),
    ray: bool = typer.Option(False, "--ray", help="run on a local Ray instance (or --ray-address)"),
    ray_address: Optional[str] = typer.Option(None, "--ray-address", metavar="ADDRESS",
                                              help="the Ray cluster to run on (implies --ray)"),
    sets: list[str] = typer.Option([], "--set", help="profile override key=value applied to every "
                                   "drive checked (what-if calibration; repeatable)"),
) -> None:
    """Check the calibrated profiles against the published figures of methodology.md."""
    from .. import validate as val

    log = (lambda s: typer.echo(s, err=True)) if sys.stderr.isatty() else None
    drive = [profile_id(d) for d in drive] if drive else drive  # sim:ID as every other command names it
    with user_errors():
        if json_out and markdown:
            raise UserError("--json and --markdown: each prints the whole result on stdout; give one")
        where = ray_choice(ray, ray_address)
        doc = val.validate(drive, workers, log=log, overrides=parse_sets(sets), ray=where, names=figure)
    if json_out:
        print_json(doc)
    elif markdown:
        sys.stdout.write(val.markdown(doc))
    else:
        with_sets = f" (with --set {' '.join(sets)})" if sets else ""
        emit_table(f"calibration{with_sets}: {doc['passed']} of {doc['total']} figures pass",
                   val.HEADERS, val.table_rows(doc))


app.command("sweep")(sweep_cmd)  # sweep.py: grids of runs
app.command("fit")(fit_cmd)  # fit.py: a simulated twin of a drive
app.command("pts")(pts_cmd)  # pts.py: the SNIA PTS tests and their report
app.command("fio-server", **FIO_SERVER)(fio_server_cmd)  # remote.py: says how drives on other hosts are reached
app.command("agent", hidden=True)(agent_cmd)  # remote.py: started over ssh for --drive HOST:/dev/X
