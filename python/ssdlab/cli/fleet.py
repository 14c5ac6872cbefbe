"""`ssdlab run --fleet`: the command-line half of fleet.py (every drive at once, each its
own run)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Optional

import typer

from .errors import UserError
from .output import emit_table, print_json
from ..store import Store, check_free


def child_args(test: str, o: dict[str, Any]) -> list[str]:
    """The options of `ssdlab run` as given, for each drive's own `ssdlab run`."""
    a = [test] + ([str(o["job"])] if o.get("job") is not None else [])
    a += ["--spare", repr(o["spare"]), "--repeat", str(o["repeat"]), "--seed", str(o["seed"])]
    for flag, key in (("--seconds", "seconds"), ("--interval", "interval"), ("--testbed", "testbed"),
                      ("--db", "db"), ("--destroy-data", "destroy_data"), ("--trace", "trace"),
                      ("--format", "trace_format"), ("--idle-cap", "idle_cap"), ("--qd", "qd")):
        if o.get(key) is not None:
            a += [flag, str(o[key])]
    for s in o.get("sets") or []:
        a += ["--set", s]
    if o.get("speed", 1.0) != 1.0:
        a += ["--speed", repr(o["speed"])]
    if o.get("state", "empty") != "empty":
        a += ["--state", o["state"]]
    if o.get("wrap"):
        a.append("--wrap")
    if not o.get("precondition", True):
        a.append("--no-precondition")
    return a


def run_fleet(test: str, drv: list[tuple[str, Any]], opts: Any, json_out: bool, db: Optional[Path],
              args: list[str], plan: bool) -> int:
    """Check every drive for the whole test (nothing is stored when one is refused), then
    run them all at once; returns the exit status."""
    from .. import fleet
    from ..runner import preflight

    if len(drv) < 2:
        raise UserError("--fleet runs several drives at once: give two or more --drive")
    if plan:
        raise UserError("--fleet with --plan: plan each drive with its own `ssdlab run --plan`")
    try:
        preflight(test, drv, opts)
    finally:
        for _, t in drv:  # each drive's own run takes the device again
            close = getattr(t, "close", None)
            if callable(close):
                close()
    check_free(db)
    Store(db).check_writable()
    members, status = fleet.run([s for s, _ in drv], args, lambda s: typer.echo(s, err=True))
    docs = [m.doc or {"drive": m.spec, "exit_status": m.proc.returncode,
                      "error": (m.lines or [""])[-1]} for m in members]
    if json_out:
        print_json({"test": test, "runs": docs})
    else:
        rows = []
        for m, d in zip(members, docs):
            dd = (d.get("drives") or [{}])[0]
            rows.append([m.spec, d.get("run_id"), dd.get("status") or f"exit {m.proc.returncode}",
                         ", ".join(f"{k}={_short(v)}" for k, v in (dd.get("metrics") or {}).items()
                                   if isinstance(v, (int, float)))[:120]])
        emit_table(f"fleet: {test} on {len(members)} drives", ["drive", "run", "status", "metrics"], rows)
    return status


def _short(v: float) -> str:
    return f"{v:.4g}" if isinstance(v, float) else str(v)
