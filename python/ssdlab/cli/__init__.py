"""The `ssdlab` command: run the review methodology on simulated and real drives."""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path
from typing import Any, Optional

import typer

from .. import interrupts, methodology, targets

from . import trace as trace_cli
from ..analysis import comparison_table
from .errors import (EXIT_INTERRUPTED, EXIT_TERMINATED, EXIT_USER, UserError,  # noqa: F401
                         interrupted_status, sigterm_interrupts, user_errors, warnings_as_lines)
from .inputs import (PRECONDITION_TESTS, SECONDS_HELP, TEST_NAMES, check_out_dir, check_y_max,
                         existing_store, open_drives, parse_sets)
from .output import emit_table, print_json, progress_hooks
from .results import results_app
from .sweep import sweep_cmd
from .remote import fio_server_cmd
from .fleet import child_args, run_fleet
from ..methodology import Options
from ..review import fresh as review_fresh
from ..runner import RunInterrupted, plan_phases, run_test
from .serve import serve_cmd
from ..store import Store, check_free

# click's base error, found through typer's public BadParameter (typer vendors click)
ClickException = next(c for c in typer.BadParameter.__mro__ if c.__name__ == "ClickException")


class App(typer.Typer):
    """Command-line mistakes (missing argument, unknown option) as one line, exit 2."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        kwargs.setdefault("standalone_mode", False)
        try:
            with interrupts.handled(ignore_after_stop=True), warnings_as_lines():
                rv = super().__call__(*args, **kwargs)
        except ClickException as e:
            if type(e).__name__ == "NoArgsIsHelpError":  # the help is already printed
                sys.exit(EXIT_USER)
            typer.echo(f"ssdlab: error: {e.format_message()} (see --help)", err=True)
            sys.exit(EXIT_USER if e.exit_code == 2 else e.exit_code)
        except typer.Abort:  # Ctrl-C or SIGTERM outside a run: nothing was stored
            typer.echo("ssdlab: interrupted", err=True)
            sys.exit(interrupted_status())
        sys.exit(rv if isinstance(rv, int) else 0)


app = App(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False,
          help="SSD characterization: the review methodology on simulated and real drives.")
app.add_typer(results_app, name="results")

@app.command()
def drives(json_out: bool = typer.Option(False, "--json", help="print JSON")) -> None:
    """The built-in simulated drive profiles and their key specs."""
    from ..profiles import builtin_ids, load_text

    rows = []
    with user_errors():
        for pid in builtin_ids():
            from ..targets.sim import SimTarget

            i = SimTarget(load_text(pid)).info
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


def show_metrics(doc: dict) -> None:
    for d in doc["drives"]:
        emit_table(f"run {doc['run_id']} {doc['test']} {d['drive']} ({d['status']})",
                   ["metric", "value"], [[k, v] for k, v in d["metrics"].items() if k != "repeats"])


@app.command()
def run(
    test: str = typer.Argument(..., help=f"one of: {TEST_NAMES}"),
    job: Optional[Path] = typer.Argument(None, help="fio: the fio job file to replay on the simulated drive"),
    drive: list[str] = typer.Option([], "--drive", "-d", help="sim:PROFILE, a profile .toml, /dev/..., file:PATH:SIZE, HOST[:PORT]:/dev/... (a drive on another host)"),
    spare: float = typer.Option(0.0, "--spare", help="leave this % of LBAs (at the end) unwritten"),
    repeat: int = typer.Option(5, "--repeat", help="quick: scored runs of each test (CrystalDiskMark shows the best)"),
    seconds: Optional[float] = typer.Option(None, "--seconds", help=SECONDS_HELP),
    interval: Optional[float] = typer.Option(None, "--interval", help="quick: idle seconds between tests (default 5, CrystalDiskMark's; 0: none)"),
    sets: list[str] = typer.Option([], "--set", help="profile override key=value (simulated drives)"),
    testbed: Optional[str] = typer.Option(None, "--testbed", help="tag runs to compare like with like"),
    db: Optional[Path] = typer.Option(None, "--db", help="results store (default: user data dir)"),
    json_out: bool = typer.Option(False, "--json", help="print one JSON document on stdout"),
    destroy_data: Optional[str] = typer.Option(None, "--destroy-data", help="real drives: allow overwriting this device"),
    plan: bool = typer.Option(False, "--plan", help="print the phases (real drives: the fio jobs, commands and safety verdict) and run nothing"),
    seed: int = typer.Option(42, "--seed", help="simulator seed"),
    precondition: bool = typer.Option(True, "--precondition/--no-precondition", help=f"--no-precondition skips the purge and fill ({PRECONDITION_TESTS} on an already filled drive: reads only)"),
    trace: Optional[Path] = typer.Option(None, "--trace", help="trace: the trace file to replay, or builtin:NAME[@SCALE], a generated workload: destroyer-like, pcmark8-photoshop-heavy-like, ... (docs/methodology.md)"),
    trace_format: Optional[str] = typer.Option(None, "--format", help="trace: fio, fio-v2, fio-v3, blkparse, msr or csv (default: detected)"),
    speed: float = typer.Option(1.0, "--speed", help="trace: replay X times as fast as recorded"),
    idle_cap: Optional[str] = typer.Option(None, "--idle-cap", help="trace: no gap between I/Os longer than this (25ms: the Storage Bench rule)"),
    qd: Optional[int] = typer.Option(None, "--qd", help="trace: as fast as possible at this fixed queue depth (closed loop)"),
    state: str = typer.Option("empty", "--state", help="trace: replay on the empty drive, the full drive, or both"),
    wrap: bool = typer.Option(False, "--wrap", help="trace: fold offsets past the drive into it instead of refusing the trace"),
    fleet: bool = typer.Option(False, "--fleet", help="run the drives at the same time, each as its own run (e.g. drives on several hosts: --drive h1:/dev/X --drive h2:/dev/Y)"),
) -> None:
    """Run one test of the methodology on one or more drives."""
    with user_errors(), sigterm_interrupts():
        the_test = methodology.get(test)
        given = [o for o, v in zip(trace_cli.TRACE_ONLY, (trace, trace_format, speed != 1.0, idle_cap,
                                                          qd, state != "empty", wrap)) if v]
        trace_opts = trace_cli.trace_options(test, trace, trace_format, speed, idle_cap, qd,
                                             state, wrap, given)
        if job is not None and test != "fio":
            raise UserError(f"{job}: a job file is only for `ssdlab run fio JOBFILE`")
        if trace_opts is not None:  # parsed now: a bad trace is refused before any store
            typer.echo(f"ssdlab: {trace_cli.announce(trace_opts)}", err=True)
        if not precondition and not the_test.precondition_optional:
            raise UserError(f"--no-precondition: {test} needs the drive in a known state; "
                            f"only {PRECONDITION_TESTS} can skip its purge and fill")
        opts = Options(spare=spare, repeat=repeat, seconds=seconds, precondition=precondition,
                       interval=interval, trace=trace_opts)
        if seconds is not None and the_test.default_seconds is None:
            typer.echo(f"ssdlab: warning: --seconds is not used by {test}", err=True)
        if not precondition and any(not targets.is_real(d) for d in drive):
            typer.echo("ssdlab: warning: --no-precondition on a simulated drive reads a drive "
                       "that was never written", err=True)
        drv = open_drives(drive, parse_sets(sets), seed, destroy_data, plan)
        if test == "fio":  # the job's I/Os, captured with fio's null engine (needs the capacity)
            opts = dataclasses.replace(opts, trace=trace_cli.fio_options(job, drv))
        if fleet:  # fleet.py: every drive at once, each its own `ssdlab run`
            raise typer.Exit(run_fleet(test, drv, opts, json_out, db, child_args(test, dict(
                job=job, spare=spare, repeat=repeat, seconds=seconds, interval=interval, sets=sets,
                testbed=testbed, db=db, destroy_data=destroy_data, seed=seed, precondition=precondition,
                trace=trace, trace_format=trace_format, speed=speed, idle_cap=idle_cap, qd=qd,
                state=state, wrap=wrap)), plan))
        if plan:
            return print_plan(test, drv, opts, json_out)
        check_free(db)  # before the store is even created
        store = Store(db)
        store.check_writable()
        args = {"drives": drive, "spare": spare, "repeat": repeat, "seconds": seconds,
                "set": sets, "seed": seed}
        if not precondition:
            args["precondition"] = False
        if interval is not None:
            args["interval"] = interval
        if trace_opts is not None:
            args["trace"] = trace_cli.trace_args(trace_opts)
        if test == "fio":
            args["job"] = {"file": str(job), "text": job.read_text(errors="replace")[:100_000]}
        with progress_hooks() as hooks:
            try:
                run_id, outcomes = run_test(store, test, drv, opts, args, testbed, hooks)
            except RunInterrupted as e:
                if json_out:  # scripts still learn the run id and what each drive reached
                    print_json(run_doc(e.run_id, test, e.outcomes))
                raise
    doc = run_doc(run_id, test, outcomes)
    if json_out:
        print_json(doc)
    else:
        if test == "fio":  # fio's own layout
            from ..methodology.fio_run import fio_style

            for d in doc["drives"]:
                print(fio_style(d["drive"], opts.trace.name, d["metrics"]))
        else:
            show_metrics(doc)
        print(f"stored as run {run_id} in {store.path}")


def print_plan(test: str, drv, opts: Options, json_out: bool) -> None:
    plans = []
    for spec, target in drv:
        cap = target.identify().capacity
        phases = plan_phases(test, cap, opts)
        plans.append({"drive": spec, "capacity": cap,
                      "phases": [p.resolve(cap) if p.kind in ("io", "trim") else p.model_dump()
                                 for p in phases]})
        # real drives also show the fio jobs and commands they would run
        if callable(getattr(target, "plan", None)):
            plans[-1]["commands"] = target.plan(phases)
    if json_out:
        print_json({"test": test, "plan": plans})
        return
    for p in plans:
        if "commands" in p:  # a real drive: its own plan (safety verdict, fio jobs, commands)
            sys.stdout.write(p["commands"])
            continue
        emit_table(f"{test} on {p['drive']}", ["#", "name", "kind", "what"],
                   [[i, ph["name"], ph["kind"], describe(ph)] for i, ph in enumerate(p["phases"])])


def describe(ph: dict) -> str:
    """A phase in a few words: what matters for its kind."""
    if ph["kind"] == "idle":
        return f"{ph['seconds']:.4g} s"
    if ph["kind"] == "purge":
        return "whole drive"
    if ph["kind"] == "replay":
        r = ph["replay"]
        how = (f"QD{r['queue_depth']}" if r["queue_depth"] else f"x{r['speed']:g}"
               + (f" idle cap {r['idle_cap_s'] * 1e3:g} ms" if r["idle_cap_s"] is not None else ""))
        return f"trace {r['trace']} ({r['format'] or 'detected'}) {how}" + (" wrapped" if r["wrap"] else "")
    rng = f"bytes {ph['offset']}..{ph['offset'] + ph['length']}"
    if ph["kind"] == "trim":
        return rng
    stop = " ".join(x for x in (ph["stop_bytes"] and f"stop {ph['stop_bytes']} B",
                                ph["stop_seconds"] and f"stop {ph['stop_seconds']:g} s") if x)
    return (f"{ph['pattern']} {ph['read_pct']}% read {ph['block_size'] // 1024} KiB "
            f"QD{ph['queue_depth']}x{ph['jobs']} {rng} {stop}")


@app.command()
def review(
    drive: list[str] = typer.Option([], "--drive", "-d", help="drives to review"),
    out: Path = typer.Option(..., "-o", "--out", help="report directory"),
    spare: float = typer.Option(0.0, "--spare"),
    repeat: int = typer.Option(5, "--repeat", help="quick: scored runs of each test"),
    seconds: Optional[float] = typer.Option(None, "--seconds",
                                            help="every test's timed step (see `run --help`)"),
    interval: Optional[float] = typer.Option(None, "--interval",
                                             help="quick: idle seconds between tests (default 5)"),
    sets: list[str] = typer.Option([], "--set"),
    testbed: Optional[str] = typer.Option(None, "--testbed"),
    db: Optional[Path] = typer.Option(None, "--db"),
    y_max: Optional[float] = typer.Option(None, "--y-max", help="fill-curve y-axis top (MB/s)"),
    json_out: bool = typer.Option(False, "--json"),
    destroy_data: Optional[str] = typer.Option(None, "--destroy-data"),
    seed: int = typer.Option(42, "--seed"),
    jobs: Optional[int] = typer.Option(None, "--jobs", "-j", help="simulated drives: tests at once on local worker processes (default: one per core; 1: one after another)"),
    ray: bool = typer.Option(False, "--ray", help="simulated drives: run the tests on a local Ray instance (or --ray-address)"),
    ray_address: Optional[str] = typer.Option(None, "--ray-address", metavar="ADDRESS", help="the Ray cluster to run the tests on (implies --ray)"),
) -> None:
    """The whole methodology on the drives, then one report."""
    with user_errors(), sigterm_interrupts():
        opts = Options(spare=spare, repeat=repeat, seconds=seconds, interval=interval)
        drv = open_drives(drive, parse_sets(sets), seed, destroy_data, False)
        check_y_max(y_max)
        check_out_dir(out)  # before any test runs, not after them all
        check_free(db)  # before the store is even created
        if jobs is not None and jobs < 1:
            raise UserError(f"--jobs {jobs}: must be at least 1")
        store = Store(db)
        store.check_writable()
        docs: list[dict] = []
        args = {"drives": drive, "spare": spare, "repeat": repeat, "seconds": seconds,
                "set": sets, "seed": seed, "review": True}
        if interval is not None:
            args["interval"] = interval
        run_review(store, drive, drv, parse_sets(sets), seed, opts, args, testbed, docs, jobs,
                   ray_address or ("local" if ray else None))
        # the application workload, empty and full drive (docs/methodology.md "trace"),
        # on new simulated drives as every other test
        # (not on drives on other hosts: fio cannot send them the trace; docs/real-drives.md)
        if any(targets.is_remote(s) for s, _ in drv):
            typer.echo("ssdlab: warning: review skips the application workload (trace) on drives "
                       "on other hosts", err=True)
            drv = [(s, t) for s, t in drv if not targets.is_remote(s)]
        if drv:
            with progress_hooks() as hooks:
                drv = review_fresh(drv, parse_sets(sets), seed)
                app = trace_cli.review_workload(drv)
                args = {"drives": drive, "set": sets, "seed": seed, "review": True,
                        "trace": trace_cli.trace_args(app)}
                run_id, outcomes = run_test(store, "trace", drv, dataclasses.replace(opts, trace=app),
                                            args, testbed, hooks)
                docs.append(run_doc(run_id, "trace", outcomes))
        html = build(store, [d["run_id"] for d in docs], out, y_max)
    if json_out:
        print_json({"report": str(html), "runs": docs})
    else:
        for d in docs:
            show_metrics(d)
        print(f"report: {html}")


def run_review(store: Store, specs: list[str], drv, sets: list[str], seed: int, opts: Options,
               args: dict, testbed: Optional[str], docs: list[dict], jobs: Optional[int],
               ray: Optional[str]) -> None:
    """The tests in parallel on simulated drives, else one after another (review.py)."""
    from .. import review as rv

    try:
        rv.run(store, specs, drv, sets, seed, opts, args, testbed, jobs, ray, progress_hooks,
               lambda test, run_id, outcomes: docs.append(run_doc(run_id, test, outcomes)))
    except rv.ReviewInterrupted:
        kept = ", ".join(f"{d['test']} (run {d['run_id']})" for d in docs) or "none"
        typer.echo(f"ssdlab: review interrupted; tests stored: {kept}", err=True)
        raise typer.Exit(interrupted_status())


def build(store: Store, run_ids: list[int], out: Path, y_max: float | None) -> Path:
    from ..report import build_report

    try:
        return build_report(store, run_ids, out, y_max=y_max)
    except OSError as e:  # the report directory cannot be made or written: the user's to fix
        where = Path(e.filename) if e.filename else None
        if where is None or not (where == out or out in where.parents or where in out.parents):
            raise
        raise UserError(f"cannot write the report to {out}: {e.strerror or e}") from None


app.command("serve")(serve_cmd)  # serve/command.py: a simulated drive over NBD


@app.command()
def report(
    runs: list[int] = typer.Argument(None, help="run ids"),
    latest: bool = typer.Option(False, "--latest", help="the most recent run"),
    out: Path = typer.Option(..., "-o", "--out", help="report directory"),
    y_max: Optional[float] = typer.Option(None, "--y-max", help="fill-curve y-axis top (MB/s)"),
    db: Optional[Path] = typer.Option(None, "--db"),
    sweep_id: Optional[str] = typer.Option(None, "--sweep", help="the report of a sweep (its id, e.g. sw-5fcdec4f2d): metrics against parameters, sensitivity, grid.csv"),
) -> None:
    """A self-contained HTML report plus one PNG per figure."""
    with user_errors():
        check_y_max(y_max)
        store = existing_store(db)
        if sweep_id is not None:
            if runs or latest:
                raise UserError("--sweep reports a whole sweep: give no run ids or --latest with it")
            from ..report.sweep import build_sweep_report

            check_out_dir(out)
            print(build_sweep_report(store, sweep_id, out))
            return
        ids = list(runs or [])
        if latest:
            ids.append(store.latest_run_id())
        if not ids:
            raise UserError("name runs to report, or --latest")
        for i in ids:
            store.run(i)  # unknown run: one clear line
        html = build(store, ids, out, y_max)
    print(html)


@app.command()
def compare(
    runs: list[int] = typer.Argument(..., help="run ids"),
    db: Optional[Path] = typer.Option(None, "--db"),
    json_out: bool = typer.Option(False, "--json"),
) -> None:
    """Metrics side by side, with the % change of each drive against the first."""
    with user_errors():
        store = existing_store(db)
        loaded = [store.run(i) for i in runs]
    for r in loaded:
        bad = [d["spec"] for d in r["drives"] if d["status"] != "complete"]
        if r["status"] != "complete" or bad:
            what = f"run {r['id']} is {r['status']}" + (f" ({', '.join(bad)} not complete)" if bad else "")
            typer.echo(f"ssdlab: warning: {what}: its metrics are partial or missing (-)", err=True)
    for key, what in (("test", "tests"), ("testbed", "testbed tags"),
                      ("methodology_version", "methodology versions")):
        if len({r[key] for r in loaded}) > 1:
            typer.echo(f"ssdlab: warning: runs have different {what}", err=True)
    cols = [(column_label(r, d), d["metrics"]) for r in loaded for d in r["drives"]]
    rows = comparison_table(cols)
    if json_out:
        print_json({"columns": [c for c, _ in cols], "rows": rows})
        return
    headers = ["metric"] + [c for c, _ in cols] + [f"% {c}" for c, _ in cols[1:]]
    emit_table("comparison", headers,
               [[r["metric"]] + r["values"] + [None if p is None else round(p, 1) for p in r["pct"][1:]]
                for r in rows if r["metric"] != "repeats"])


def column_label(run: dict, drive: dict) -> str:
    """run:drive (capacity): the capacity tells apart the models of a scaling table and
    drives changed with --set."""
    cap = drive["identity"].get("capacity")
    return f"{run['id']}:{drive['spec']}" + (f" ({cap / 1e9:g} GB)" if cap else "")


@app.command()
def validate(
    drive: Optional[list[str]] = typer.Option(
        None, "--drive", help="a calibrated profile id, e.g. xg6-256 (repeatable; default: all)"),
    json_out: bool = typer.Option(False, "--json", help="print one JSON document"),
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
    with user_errors():
        doc = val.validate(drive, workers, log=log, overrides=parse_sets(sets),
                           ray=ray_address or ("local" if ray else None))
    if json_out:
        print_json(doc)
    elif markdown:
        sys.stdout.write(val.markdown(doc))
    else:
        with_sets = f" (with --set {' '.join(sets)})" if sets else ""
        emit_table(f"calibration{with_sets}: {doc['passed']} of {doc['total']} figures pass",
                   val.HEADERS, val.table_rows(doc))


app.command("sweep")(sweep_cmd)  # sweep.py: grids of runs
app.command("fio-server")(fio_server_cmd)  # remote.py: drives for HOST:/dev/X runs elsewhere
