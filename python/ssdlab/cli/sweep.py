"""`ssdlab sweep`: a grid of runs over drives, spare areas and profile keys (sweep.py),
run on the executor (executor.py)."""

from __future__ import annotations

import inspect
import shlex
from pathlib import Path
from typing import Any, Optional

import typer

from .options import Db, Drives, Interval, JsonOut, Seconds, Testbed
from .errors import UserError, interrupted_status, sigterm_interrupts, user_errors
from .inputs import TEST_NAMES, made_dirs, ray_choice
from .output import emit_table, print_json
from .plan import print_sweep_plan
from .request import refuse_others, test_options, typer_parameters
from ..methodology import Options, get
from ..runner import RunInterrupted, check_kept, kept_before
from ..store import Store, check_free


def sweep(
    test: str = typer.Argument(..., help=f"one of: {TEST_NAMES}"),
    drive: Drives = [],
    sets: list[str] = typer.Option([], "--set", help="an axis: profile key=v1,v2,... (repeatable)"),
    spare: list[str] = typer.Option([], "--spare", help="an axis: spare areas in %, e.g. 0,7,25"),
    grid: Optional[Path] = typer.Option(None, "--grid", help="a TOML grid file (docs/sweeps.md); adds to the options"),
    jobs: Optional[int] = typer.Option(None, "--jobs", "-j", help="points at once on local worker processes (default: one per core; 1: in this process)"),
    ray: bool = typer.Option(False, "--ray", help="run the points on Ray: a local instance, or the cluster of --ray-address; needs the ssdlab ray extra"),
    ray_address: Optional[str] = typer.Option(None, "--ray-address", metavar="ADDRESS", help="the Ray cluster to run on (implies --ray), e.g. ray://head:10001"),
    seconds: Seconds = None,
    repeat: Optional[int] = typer.Option(None, "--repeat", help="quick: scored runs of each test (default 5)"),
    interval: Interval = None,
    seed: Optional[int] = typer.Option(None, "--seed", help="simulator seed (default 42), the same for every point"),
    testbed: Testbed = None,
    out: Optional[Path] = typer.Option(None, "-o", "--out", help="write the sweep report here at the end"),
    db: Db = None,
    json_out: JsonOut = False,
    plan: bool = typer.Option(False, "--plan", help="print the points and an estimate of their drive time; run and store nothing"),
    values: Optional[dict[str, Any]] = None,
) -> None:
    """A grid of runs over drives, spare areas and profile keys, in parallel; each point is a
    normal stored run. Running the same grid again resumes it (finished points are skipped)."""
    from .. import sweep as sw
    from ..executor import open_executor
    from ..units_progress import UnitsProgress

    with user_errors(), sigterm_interrupts(), made_dirs() as dirs:
        refuse_others(test, values or {}, "sweep")  # e.g. PTS --rounds to a fill sweep
        g = sw.make_grid(test, drive, sets, spare, grid, own=values, seconds=seconds, repeat=repeat,
                         interval=interval, seed=seed, testbed=testbed)
        memory = sw.check(g)  # every point, before anything runs or is stored
        unused = get(test).unused(g.given)
        if "--spare" in unused and len(g.spares) > 1:  # its points would be one run, repeated
            raise UserError(f"{g.source('--spare')}: {test} does not use a spare area, so its "
                            f"{len(g.spares)} spare values would run the same points again; give one or none")
        if jobs is not None and jobs < 1:
            raise UserError(f"--jobs {jobs}: must be at least 1")
        if not plan:
            where = ray_choice(ray, ray_address)
            if out is not None:
                dirs.check(out)
            check_free(db)
            store = Store(db)
            store.check_writable()
        for flag in unused:  # once every check passed: a refusal is one line
            typer.echo(f"ssdlab: warning: {g.source(flag)} is not used by {test}", err=True)
        if plan:  # every point checked; no store, no executor, no report directory (as `run --plan`, it warns)
            return print_sweep_plan(g, json_out)
        have = len(sw.finished(store, g))
        total = g.size
        executor = open_executor(jobs, where)
        bar = UnitsProgress(f"sweep {g.id} {test}", total, have, executor.describe())

        stored: list[int] = []  # the runs of this time's points

        def on_point(o) -> None:
            if o.run_id is not None:
                stored.append(o.run_id)
            check_kept(store, stored)  # the points before it were in the same file
            label = " ".join(f"{k}={o.point[k]}" for k in g.swept) or o.point["drive"]
            bar.finished(o.status == "complete",
                         f"{label}: {o.status}" + (f" ({o.error})" if o.error else ""))

        try:
            with bar, executor, kept_before(store, lambda: stored):
                outcomes = sw.run_sweep(store, g, executor, on_point, memory)
        except (KeyboardInterrupt, RunInterrupted):
            check_kept(store, stored)
            n = bar.done + bar.failed
            typer.echo(f"ssdlab: sweep {g.id} interrupted: {n} point{'s' if n != 1 else ''} stored "
                       f"this time, {have + bar.done} of {total} complete; run the same command "
                       "again to resume", err=True)
            raise typer.Exit(interrupted_status())
        doc = sw.summary(store, g, outcomes)
        if out is not None:
            from ..report.sweep import build_sweep_report

            try:
                doc["report"] = str(build_sweep_report(store, g.id, out))
            except KeyboardInterrupt:  # every point stored: say so, and how to draw the report
                check_kept(store, stored)
                where = f" --db {shlex.quote(str(db))}" if db else ""
                typer.echo(f"ssdlab: sweep {g.id} interrupted while drawing its report: {doc['complete'] + doc['skipped']} "
                           f"of {total} points complete; its report: ssdlab report --sweep {g.id} -o "
                           f"{shlex.quote(str(out))}{where}", err=True)
                raise typer.Exit(interrupted_status()) from None
    ids = [p["run_id"] for p in doc["points"] if p["run_id"] is not None]
    if json_out:
        print_json(doc)
        with user_errors():
            check_kept(store, ids)  # (as `run`'s: the document first, then the line that says they are lost)
    else:
        with user_errors():
            check_kept(store, ids)
        metric_names = list(dict.fromkeys(k for p in doc["points"] for k, v in p["metrics"].items()
                                          if isinstance(v, (int, float)) and not isinstance(v, bool)))
        emit_table(f"sweep {g.id}: {doc['complete']} complete, {doc['failed']} failed, "
                   f"{doc['skipped']} already done", g.swept + ["status", "run"] + metric_names,
                   [[p["point"][k] for k in g.swept] + [p["status"], p["run_id"]]
                    + [p["metrics"].get(m) for m in metric_names] for p in doc["points"]])
        show_verdicts(test, g.seconds, doc["points"])
        print(f"sweep {g.id} in {store.path}" + (f"; report: {doc['report']}" if out else ""))
    if doc["failed"]:
        raise typer.Exit(1)


class SweepCommand:
    __doc__ = sweep.__doc__  # the command's help: one text
    __annotations__ = dict[str, Any]()  # typer reads the parameters from the signature

    @property
    def __signature__(self) -> inspect.Signature:
        """sweep's own options, then those of the tests it runs that take options of their
        own (the PTS settings), as `run` declares them."""
        mine = [p for p in inspect.signature(sweep, eval_str=True).parameters.values() if p.name != "values"]
        return inspect.Signature(mine + typer_parameters(sweep=True))

    def __call__(self, **kw: Any) -> None:
        own = {name: kw.pop(name) for name in test_options(sweep=True)}
        given = {name: v for name, v in own.items() if v != test_options(sweep=True)[name][0].default}
        sweep(**kw, values=given)


sweep_cmd = SweepCommand()


def show_verdicts(test: str, seconds: float | None, points: list[dict]) -> None:
    """The test's line for the points a table of numbers says nothing of (consistency: steady
    state not reached), once per different line with how many points it holds for."""
    verdict = get(test).verdict
    if verdict is None:
        return
    opts = Options(seconds=seconds)
    lines = [verdict(p["metrics"], opts) for p in points]
    for line in dict.fromkeys(x for x in lines if x):
        print(f"{lines.count(line)} of {len(points)} points: {line}")
