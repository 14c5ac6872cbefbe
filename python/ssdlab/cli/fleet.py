"""`ssdlab run --fleet`: the command-line half of fleet.py (every drive at once, each its
own run)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Optional

import typer

from .errors import EXIT_INTERRUPTED, EXIT_TERMINATED, UserError, told_interruption
from .output import emit_table, print_json
from ..store import Store, check_free


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
            t.close()
    check_free(db)
    Store(db).check_writable()
    members, status = fleet.run([s for s, _ in drv], args, lambda s: typer.echo(s, err=True))
    if status in (EXIT_INTERRUPTED, EXIT_TERMINATED):  # each member said what its run kept
        told_interruption()
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
