"""The `ssdlab serve` command (registered by cli.py): a simulated drive over NBD until
Ctrl-C, SIGTERM or --seconds; then the run is stored (test `serve`), or, when the store
cannot take it, saved to a pending file that one line names (exit status 1)."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path
from typing import Optional

import typer

from .options import Db, JsonOut, Seed, ServeDestroyData, Sets
from .errors import user_errors
from .inputs import check_seed, parse_sets
from .output import emit_table
from ..store import Store, check_free, jsonable


def _fmt(v: float | None) -> str:
    if isinstance(v, float) and (math.isnan(v) or math.isinf(v)):
        return "-"
    return f"{v:.4g}" if isinstance(v, float) else str(v)


def serve_cmd(
    drive: str = typer.Argument(..., help="sim:PROFILE or a profile .toml"),
    sets: Sets = [],
    socket: Optional[Path] = typer.Option(None, "--socket", help="Unix socket to serve on (default: one in a new private directory under the temporary directory)"),
    tcp: Optional[str] = typer.Option(None, "--tcp", help="serve on TCP HOST:PORT instead of a Unix socket (NBD has no authentication: anyone who reaches it reads and writes the drive; needs --tcp-unauthenticated)"),
    tcp_unauthenticated: bool = typer.Option(False, "--tcp-unauthenticated", help="with --tcp: accept that every local user (and every machine that reaches a non-loopback address) can read and write the served drive"),
    data: Optional[Path] = typer.Option(None, "--data", help="backing file for the data, kept afterwards (default: a sparse temporary file)"),
    destroy_data: ServeDestroyData = None,
    seconds: Optional[float] = typer.Option(None, "--seconds", help="stop after this many seconds (default: until Ctrl-C or SIGTERM)"),
    interval: float = typer.Option(1.0, "--interval", help="seconds between samples of the drive's counters"),
    seed: Seed = 42,
    db: Db = None,
    json_out: JsonOut = False,
) -> None:
    """Export a simulated drive over NBD in real time (fio ioengine=nbd, nbdfuse + a loop device)."""
    from ..serve.nbdkit import is_loopback
    from ..serve.server import ServeOptions, Serving, serve

    with user_errors():
        if socket is not None and tcp is not None:
            raise ValueError("give --socket or --tcp, not both")
        if seconds is not None and not (math.isfinite(seconds) and seconds > 0):
            raise ValueError(f"--seconds {seconds}: must be a positive number")
        if not (math.isfinite(interval) and 0.01 <= interval <= 3600):
            raise ValueError(f"--interval {interval}: must be 0.01 to 3600 seconds")
        check_seed(seed)
        if tcp_unauthenticated and tcp is None:
            raise ValueError("--tcp-unauthenticated goes with --tcp HOST:PORT (the Unix socket needs no such flag)")
        opts = ServeOptions(drive=drive, sets=parse_sets(sets), seed=seed, socket=socket, tcp=tcp,
                            tcp_unauthenticated=tcp_unauthenticated, data=data, destroy_data=destroy_data,
                            seconds=seconds, interval_s=interval)
        serving = Serving(opts)  # every check, before anything starts or is stored
        if serving.tcp:
            who = "every user of this machine" + ("" if is_loopback(serving.tcp[0]) else
                                                   " and every machine that reaches this address")
            typer.echo(f"ssdlab: warning: --tcp {tcp}: NBD has no authentication; {who} can read and write "
                       "the served drive while it is served", err=True)
        check_free(db)
        store = Store(db)
        store.check_writable()
        args = {"drive": drive, "set": sets, "seed": seed, "socket": str(socket) if socket else None,
                "tcp": tcp, "data": str(data) if data else None, "seconds": seconds}

        def ready(s) -> None:
            doc = {"event": "ready", "uri": s.uri, "socket": str(s.socket) if s.socket else None,
                   "capacity": s.capacity, "run_id": s.run_id, "drive": drive}
            if json_out:
                print(json.dumps(doc), flush=True)
            else:
                print(f"serving {drive} ({s.capacity} bytes) at {s.uri}", flush=True)
                print(f"  fio: --ioengine=nbd --uri='{s.uri}'   ssdlab: --drive nbd:{s.socket or s.uri}",
                      flush=True)
                print("  Ctrl-C stops serving and stores the run", flush=True)

        def row(r: dict) -> None:
            if not json_out and r.get("i_requests"):
                print(f"  t={r['t_s']:.0f}s requests={r['i_requests']} late={r['i_late']} "
                      f"lag p99<={r['i_lag_p99_us']:.0f}us waf={_fmt(r.get('waf'))} "
                      f"free_blocks={r['free_blocks']:.0f} slc_used={r['slc_used_bytes'] / 1e9:.3g}GB",
                      file=sys.stderr, flush=True)

        run_id, totals, status = serve(serving, store, args, on_ready=ready, on_row=row)
    from ..served.stats import metrics

    m = metrics(totals)
    pending = str(serving.pending) if serving.pending else None
    if json_out:
        # strict JSON: a value that does not exist (WAF without host writes) is null
        print(json.dumps(jsonable({"event": "end", "run_id": run_id, "status": status, "metrics": m,
                                   "pending": pending}), allow_nan=False), flush=True)
    else:  # the metrics as `run` shows a run's: whole counts, not 1.797e+05
        emit_table(f"run {run_id} serve {drive} ({status})", ["metric", "value"], [[k, v] for k, v in m.items()])
        if not serving.unstored:
            print(f"stored as run {run_id} in {store.path} ({status})")
    if serving.unstored:  # not stored: where it went instead (a pending file), one line
        typer.echo(serving.unstored, err=True)
    if status != "complete" or serving.unstored:
        raise typer.Exit(1)
