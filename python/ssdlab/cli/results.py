"""`ssdlab results`: stored runs listed, shown, exported, and pending results imported."""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path
from typing import Optional

import typer

from .. import safe_path, store_export
from .options import Db, JsonOut
from .errors import UserError, user_errors
from .inputs import RUN_HELP, RUN_IDS, RunIdsCommand, existing_store, read_store, run_id as named_run, whole_number
from .output import emit_table, fmt, print_json
from ..no_result import has_result, no_result
from ..runner import partial_metrics
from ..store import MAX_ID, Store, check_free
from ..store_damage import SQLITE_HEADER

results_app = typer.Typer(no_args_is_help=True, help="Stored runs: list, show, export, import.")


@results_app.command("list")
def results_list(
    db: Db = None,
    limit: str = typer.Option("50", "--limit", metavar="N", help=f"the newest N runs, N a whole number 1 to {MAX_ID}"),
    json_out: JsonOut = False,
) -> None:
    """Stored runs, newest first."""
    with user_errors():
        n = whole_number("--limit", limit, 1, MAX_ID)
        store = read_store(db)
        runs = store.runs(n) if store is not None else []
    if json_out:
        print_json(runs)
        return
    emit_table("runs", ["id", "test", "created", "status", "testbed", "drives"],
               [[r["id"], r["test"], r["created"], r["status"], r["testbed"], ", ".join(r["drives"])]
                for r in runs])


@results_app.command("show", cls=RunIdsCommand, context_settings=RUN_IDS)
def results_show(
    run: str = typer.Argument(..., metavar="RUN", help=RUN_HELP),
    db: Db = None,
    json_out: JsonOut = False,
) -> None:
    """A run's drives, status and metrics."""
    with user_errors():
        store = existing_store(db)
        r = store.run(named_run(store, run))
        partial_metrics(store, r)
        for d in r["drives"]:
            d["phases"] = [{k: p[k] for k in ("seq", "name", "kind", "status", "totals")}
                           for p in store.phases(d["id"], with_data=False)]
    if json_out:
        print_json(r)
        return
    # stored text through fmt: no tag is `None`, and none drives the terminal
    print(f"run {r['id']}: {fmt(r['test'])} {fmt(r['status'])} created {fmt(r['created'])} "
          f"testbed={fmt(r['testbed'])} tool={fmt(r['tool_version'])} engine={fmt(r['engine_version'])}")
    for d in r["drives"]:
        if d["status"] != "running" and not has_result(d["metrics"]):  # one line, not an empty table
            print(fmt(f"{d['spec']}{who(d.get('identity') or {})}: {no_result(d['status'])}"))
            continue
        part = d.get("partial_metrics")
        said = f"; metrics of its {part['phases']} complete phases, not a whole run" if part else ""
        emit_table(f"{d['spec']} ({d['status']}{said}){who(d.get('identity') or {})}", ["metric", "value"],
                   [[k, v] for k, v in d["metrics"].items()])


def who(ident: dict) -> str:
    """A real drive's model, serial and firmware, as the plan names it (a simulated drive's
    spec says which it is)."""
    if ident.get("kind", "sim") == "sim" or not ident.get("model"):
        return ""
    extra = ident.get("extra") or {}
    loop = extra.get("kind") == "loop" and extra.get("backing_file")  # its "serial" is its file
    named = [("backing file", extra.get("backing_file"))] if loop else [("serial", ident.get("serial"))]
    named.append(("firmware", ident.get("firmware")))
    return ": " + " ".join([str(ident["model"])] + [f"{k} {v}" for k, v in named if v])


@results_app.command("export", cls=RunIdsCommand, context_settings=RUN_IDS)
def results_export(
    run: str = typer.Argument(..., metavar="RUN", help=RUN_HELP),
    format: str = typer.Option("json", "--format", help="csv or json"),
    out: Optional[Path] = typer.Option(None, "-o", "--out", help="file (default: stdout)"),
    db: Db = None,
) -> None:
    """Every recorded value of a run: series, segments, histograms, totals, metrics."""
    with user_errors():
        if format not in ("csv", "json"):
            raise UserError(f"--format {format}: choose csv or json")
        store = existing_store(db)
        run_id = named_run(store, run)
        text = store_export.to_csv(store, run_id) if format == "csv" else store_export.to_json(store, run_id)
        if out is None:
            sys.stdout.write(text if text.endswith("\n") else text + "\n")
        else:  # a new file renamed over the name: a link planted there is replaced, not followed
            check_export_target(out, store)
            safe_path.write(out, text, f"-o {out}")


def check_export_target(out: Path, store: Store) -> None:
    """`-o` replaces an existing file, but never the results store it exports from nor any
    other SQLite database (a store named by mistake): its runs would be lost."""
    try:
        st = os.stat(out)
    except OSError:
        return  # a new file, or one whose problem safe_path.write names
    if not stat.S_ISREG(st.st_mode):
        return
    if os.path.samestat(st, os.stat(store.real)):
        raise UserError(f"-o {out}: that is the results store the run is exported from; "
                        "give the export a file name of its own")
    try:
        fd = os.open(out, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return
    try:
        head = os.read(fd, len(SQLITE_HEADER))
    finally:
        os.close(fd)
    if head == SQLITE_HEADER:
        raise UserError(f"-o {out}: an SQLite database (a results store?), which an export never "
                        "replaces; give the export a file name of its own")


@results_app.command("import")
def results_import(
    file: Path = typer.Argument(..., help="a pending-results file a run saved when the store could not be written"),
    db: Db = None,
) -> None:
    """Put results a run could not store (its disk was full) back into a store."""
    from ..pending import import_file, read

    with user_errors():
        run = read(file)  # the whole file checked before a store is made
        check_free(db)  # before the store is even created
        store = Store(db)
        store.check_writable()
        run_id, n = import_file(store, file, run)
    print(f"imported {n} phase{'s' if n != 1 else ''} into run {run_id} in {store.path}")
