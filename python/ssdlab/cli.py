"""The `ssdlab` command: run the review methodology on simulated and real drives."""

from __future__ import annotations

import json
import sys
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator, Optional

import typer

from . import interrupts, methodology, targets
from .analysis import comparison_table
from .cli_errors import (EXIT_INTERRUPTED, EXIT_TERMINATED, EXIT_USER, UserError,  # noqa: F401
                         interrupted_status, sigterm_interrupts, user_errors, warnings_as_lines)
from .cli_inputs import (check_out_dir, check_y_max, no_store, open_drives, parse_sets,
                         read_store)
from .methodology import Options
from .phase import Phase
from .runner import Hooks, RunInterrupted, plan_phases, run_test
from .store import MAX_ID, Store, check_free, jsonable

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
results_app = typer.Typer(no_args_is_help=True, help="Stored runs: list, show, export.")
app.add_typer(results_app, name="results")

TEST_NAMES = ", ".join(methodology.TESTS)
PRECONDITION_TESTS = ", ".join(n for n, m in methodology.TESTS.items()
                               if getattr(m, "PRECONDITION_OPTIONAL", False))
SECONDS_HELP = "the test's timed step: " + "; ".join(
    f"{name}: {m.SECONDS_HELP} (default {m.DEFAULT_SECONDS} s)"
    for name, m in methodology.TESTS.items() if m.DEFAULT_SECONDS is not None)


# ---- output --------------------------------------------------------------------------------
def is_tty() -> bool:
    return sys.stdout.isatty()


def print_json(doc: Any) -> None:
    sys.stdout.write(json.dumps(jsonable(doc), indent=1, allow_nan=False) + "\n")


def fmt(v: Any) -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:.4g}" if abs(v) < 1e4 else f"{v:.0f}"
    if isinstance(v, (dict, list)):
        return json.dumps(jsonable(v), separators=(",", ":"))
    return str(v)


def emit_table(title: str, headers: list[str], rows: list[list[Any]]) -> None:
    """A rich table on a terminal, tab-separated lines otherwise."""
    if is_tty():
        from rich.console import Console
        from rich.table import Table

        t = Table(title=title)
        for h in headers:
            t.add_column(h)
        for r in rows:
            t.add_row(*(fmt(x) for x in r))
        Console().print(t)
    else:
        print(f"# {title}")
        print("\t".join(headers))
        for r in rows:
            print("\t".join(fmt(x) for x in r))


# ---- progress ------------------------------------------------------------------------------
class RichHooks(Hooks):
    """A progress bar per phase on stderr, with ETA and the live MB/s or IOPS."""

    def __init__(self) -> None:
        from rich.console import Console
        from rich.progress import (BarColumn, Progress, TaskProgressColumn, TextColumn,
                                   TimeRemainingColumn)

        self.progress = Progress(TextColumn("{task.description}"), BarColumn(),
                                 TaskProgressColumn(), TimeRemainingColumn(),
                                 TextColumn("{task.fields[live]}"),
                                 console=Console(stderr=True), transient=True)
        self.task = None

    def __enter__(self) -> "RichHooks":
        self.progress.start()
        return self

    def __exit__(self, *exc) -> None:
        self.progress.stop()

    def phase_start(self, drive: str, test: str, phase: Phase, seq: int) -> None:
        self.phase, self.done, self.last_t = phase, 0.0, 0.0
        self.started = time.monotonic()
        if phase.kind == "io":
            self.by_bytes = phase.stop_bytes is not None
            total = float(phase.stop_bytes) if self.by_bytes else float(phase.stop_seconds)
        elif phase.kind == "idle":
            self.by_bytes, total = False, float(phase.seconds)
        else:
            self.by_bytes, total = False, None
        self.iops_view = phase.pattern == "rand" and phase.block_size < 64 * 1024
        self.task = self.progress.add_task(f"{drive} {test} #{seq} {phase.name or phase.kind}",
                                           total=total, live="")

    def sample(self, row: dict) -> None:
        t = float(row.get("t_s", self.last_t + 1.0))
        mbps = float(row.get("mbps", 0.0) or 0.0)
        if self.by_bytes:
            self.done += mbps * 1e6 * max(0.0, t - self.last_t)
        else:
            self.done = t
        self.last_t = t
        live = f"{row.get('iops', 0.0):,.0f} IOPS" if self.iops_view else f"{mbps:,.0f} MB/s"
        self.progress.update(self.task, completed=self.done, live=live)

    def phase_end(self, result) -> None:
        # one bar at a time; a phase that took a while leaves a line behind
        task = next(t for t in self.progress.tasks if t.id == self.task)
        if time.monotonic() - self.started > 2.0:
            self.progress.console.print(f"{task.description}  {task.fields['live']}  "
                                        f"({time.monotonic() - self.started:.0f} s)")
        self.progress.remove_task(self.task)


@contextmanager
def progress_hooks() -> Iterator[Hooks]:
    """Bars only for a person at a terminal; they go to stderr, so --json stdout stays clean."""
    if sys.stdout.isatty() and sys.stderr.isatty():
        with RichHooks() as h:
            yield h
    else:
        yield Hooks()


# ---- commands ------------------------------------------------------------------------------
@app.command()
def drives(json_out: bool = typer.Option(False, "--json", help="print JSON")) -> None:
    """The built-in simulated drive profiles and their key specs."""
    from .profiles import builtin_ids, load_text

    rows = []
    with user_errors():
        for pid in builtin_ids():
            from .targets.sim import SimTarget

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
    drive: list[str] = typer.Option([], "--drive", "-d", help="sim:PROFILE, a profile .toml, /dev/..., file:PATH:SIZE"),
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
) -> None:
    """Run one test of the methodology on one or more drives."""
    with user_errors(), sigterm_interrupts():
        module = methodology.get(test)
        if not precondition and not getattr(module, "PRECONDITION_OPTIONAL", False):
            raise UserError(f"--no-precondition: {test} needs the drive in a known state; "
                            f"only {PRECONDITION_TESTS} can skip its purge and fill")
        opts = Options(spare=spare, repeat=repeat, seconds=seconds, precondition=precondition,
                       interval=interval)
        if seconds is not None and module.DEFAULT_SECONDS is None:
            typer.echo(f"ssdlab: warning: --seconds is not used by {test}", err=True)
        if not precondition and any(not targets.is_real(d) for d in drive):
            typer.echo("ssdlab: warning: --no-precondition on a simulated drive reads a drive "
                       "that was never written", err=True)
        drv = open_drives(drive, parse_sets(sets), seed, destroy_data, plan)
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
    from . import review as rv

    try:
        rv.run(store, specs, drv, sets, seed, opts, args, testbed, jobs, ray, progress_hooks,
               lambda test, run_id, outcomes: docs.append(run_doc(run_id, test, outcomes)))
    except rv.ReviewInterrupted:
        kept = ", ".join(f"{d['test']} (run {d['run_id']})" for d in docs) or "none"
        typer.echo(f"ssdlab: review interrupted; tests stored: {kept}", err=True)
        raise typer.Exit(interrupted_status())


def build(store: Store, run_ids: list[int], out: Path, y_max: float | None) -> Path:
    from .report import build_report

    try:
        return build_report(store, run_ids, out, y_max=y_max)
    except OSError as e:  # the report directory cannot be made or written: the user's to fix
        where = Path(e.filename) if e.filename else None
        if where is None or not (where == out or out in where.parents or where in out.parents):
            raise
        raise UserError(f"cannot write the report to {out}: {e.strerror or e}") from None


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
        store = read_store(db)
        if store is None:
            raise no_store()
        if sweep_id is not None:
            if runs or latest:
                raise UserError("--sweep reports a whole sweep: give no run ids or --latest with it")
            from .report.sweep import build_sweep_report

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
        store = read_store(db)
        if store is None:
            raise no_store()
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
    from . import validate as val

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


@app.command()
def sweep(
    test: str = typer.Argument(..., help=f"one of: {TEST_NAMES}"),
    drive: list[str] = typer.Option([], "--drive", "-d", help="sim:PROFILE or a profile .toml (repeatable: an axis)"),
    sets: list[str] = typer.Option([], "--set", help="an axis: profile key=v1,v2,... (repeatable)"),
    spare: list[str] = typer.Option([], "--spare", help="an axis: spare areas in %, e.g. 0,7,25"),
    grid: Optional[Path] = typer.Option(None, "--grid", help="a TOML grid file (docs/sweeps.md); adds to the options"),
    jobs: Optional[int] = typer.Option(None, "--jobs", "-j", help="points at once on local worker processes (default: one per core; 1: in this process)"),
    ray: bool = typer.Option(False, "--ray", help="run the points on Ray: a local instance, or the cluster of --ray-address; needs the ssdlab ray extra"),
    ray_address: Optional[str] = typer.Option(None, "--ray-address", metavar="ADDRESS", help="the Ray cluster to run on (implies --ray), e.g. ray://head:10001"),
    seconds: Optional[float] = typer.Option(None, "--seconds", help=SECONDS_HELP),
    repeat: Optional[int] = typer.Option(None, "--repeat", help="quick: scored runs of each test (default 5)"),
    interval: Optional[float] = typer.Option(None, "--interval", help="quick: idle seconds between tests"),
    seed: Optional[int] = typer.Option(None, "--seed", help="simulator seed (default 42), the same for every point"),
    testbed: Optional[str] = typer.Option(None, "--testbed"),
    out: Optional[Path] = typer.Option(None, "-o", "--out", help="write the sweep report here at the end"),
    db: Optional[Path] = typer.Option(None, "--db"),
    json_out: bool = typer.Option(False, "--json", help="print one JSON document on stdout"),
) -> None:
    """A grid of runs over drives, spare areas and profile keys, in parallel; each point is a
    normal stored run. Running the same grid again resumes it (finished points are skipped)."""
    from . import sweep as sw
    from .executor import open_executor
    from .units_progress import UnitsProgress

    with user_errors(), sigterm_interrupts():
        g = sw.make_grid(test, drive, sets, spare, grid, seconds=seconds, repeat=repeat,
                         interval=interval, seed=seed, testbed=testbed)
        memory = sw.check(g)  # every point, before anything runs or is stored
        if jobs is not None and jobs < 1:
            raise UserError(f"--jobs {jobs}: must be at least 1")
        if out is not None:
            check_out_dir(out)
        check_free(db)
        store = Store(db)
        store.check_writable()
        have = len(sw.finished(store, g))
        total = len(g.points())
        executor = open_executor(jobs, ray_address or ("local" if ray else None))
        bar = UnitsProgress(f"sweep {g.id} {test}", total, have, executor.describe())

        def on_point(o) -> None:
            label = " ".join(f"{k}={o.point[k]}" for k in g.swept) or o.point["drive"]
            bar.finished(o.status == "complete",
                         f"{label}: {o.status}" + (f" ({o.error})" if o.error else ""))

        try:
            with bar, executor:
                outcomes = sw.run_sweep(store, g, executor, on_point, memory)
        except (KeyboardInterrupt, RunInterrupted):
            n = bar.done + bar.failed
            typer.echo(f"ssdlab: sweep {g.id} interrupted: {n} point{'s' if n != 1 else ''} stored "
                       f"this time, {have + bar.done} of {total} complete; run the same command "
                       "again to resume", err=True)
            raise typer.Exit(interrupted_status())
        doc = sw.summary(store, g, outcomes)
        if out is not None:
            from .report.sweep import build_sweep_report

            doc["report"] = str(build_sweep_report(store, g.id, out))
    if json_out:
        print_json(doc)
    else:
        metric_names = list(dict.fromkeys(k for p in doc["points"] for k, v in p["metrics"].items()
                                          if isinstance(v, (int, float)) and not isinstance(v, bool)))
        emit_table(f"sweep {g.id}: {doc['complete']} complete, {doc['failed']} failed, "
                   f"{doc['skipped']} already done", g.swept + ["status", "run"] + metric_names,
                   [[p["point"][k] for k in g.swept] + [p["status"], p["run_id"]]
                    + [p["metrics"].get(m) for m in metric_names] for p in doc["points"]])
        print(f"sweep {g.id} in {store.path}" + (f"; report: {doc['report']}" if out else ""))
    if doc["failed"]:
        raise typer.Exit(1)


@results_app.command("list")
def results_list(
    db: Optional[Path] = typer.Option(None, "--db"),
    limit: int = typer.Option(50, "--limit"),
    json_out: bool = typer.Option(False, "--json"),
) -> None:
    """Stored runs, newest first."""
    with user_errors():
        if not 1 <= limit <= MAX_ID:
            raise UserError(f"--limit {limit}: must be at least 1")
        store = read_store(db)
        runs = store.runs(limit) if store is not None else []
    if json_out:
        print_json(runs)
        return
    emit_table("runs", ["id", "test", "created", "status", "testbed", "drives"],
               [[r["id"], r["test"], r["created"], r["status"], r["testbed"], ", ".join(r["drives"])]
                for r in runs])


@results_app.command("show")
def results_show(
    run_id: int = typer.Argument(...),
    db: Optional[Path] = typer.Option(None, "--db"),
    json_out: bool = typer.Option(False, "--json"),
) -> None:
    """A run's drives, status and metrics."""
    with user_errors():
        store = read_store(db)
        if store is None:
            raise no_store()
        r = store.run(run_id)
        for d in r["drives"]:
            d["phases"] = [{k: p[k] for k in ("seq", "name", "kind", "status", "totals")}
                           for p in store.phases(d["id"], with_data=False)]
    if json_out:
        print_json(r)
        return
    print(f"run {r['id']}: {r['test']} {r['status']} created {r['created']} "
          f"testbed={r['testbed']} tool={r['tool_version']} engine={r['engine_version']}")
    for d in r["drives"]:
        emit_table(f"{d['spec']} ({d['status']})", ["metric", "value"],
                   [[k, v] for k, v in d["metrics"].items()])


@results_app.command("export")
def results_export(
    run_id: int = typer.Argument(...),
    format: str = typer.Option("json", "--format", help="csv or json"),
    out: Optional[Path] = typer.Option(None, "-o", "--out", help="file (default: stdout)"),
    db: Optional[Path] = typer.Option(None, "--db"),
) -> None:
    """Every recorded value of a run: series, segments, histograms, totals, metrics."""
    with user_errors():
        if format not in ("csv", "json"):
            raise UserError(f"--format {format}: choose csv or json")
        store = read_store(db)
        if store is None:
            raise no_store()
        text = store.export_csv(run_id) if format == "csv" else store.export_json(run_id)
        if out is None:
            sys.stdout.write(text if text.endswith("\n") else text + "\n")
        else:
            try:
                out.write_text(text)
            except OSError as e:
                raise UserError(f"cannot write {out}: {e.strerror}") from None


@results_app.command("import")
def results_import(
    file: Path = typer.Argument(..., help="a pending-results file a run saved when the store could not be written"),
    db: Optional[Path] = typer.Option(None, "--db", help="the store to put it in (default: user data dir)"),
) -> None:
    """Put results a run could not store (its disk was full) back into a store."""
    from .pending import import_file

    with user_errors():
        check_free(db)  # before the store is even created
        store = Store(db)
        store.check_writable()
        run_id, n = import_file(store, file)
    print(f"imported {n} phase{'s' if n != 1 else ''} into run {run_id} in {store.path}")


if __name__ == "__main__":
    app()
