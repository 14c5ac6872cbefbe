"""`ssdlab fio-server`: serve this host's drives to `--drive HOST:/dev/X` runs elsewhere
(targets/remote_guard.py checks them here, then runs `fio --server`)."""

from __future__ import annotations

from typing import Optional

import typer

from .errors import user_errors
from ..targets.remote import DEFAULT_PORT


def fio_server_cmd(
    drives: list[str] = typer.Argument(..., help="this host's drives: /dev/... or file:PATH:SIZE"),
    destroy_data: Optional[str] = typer.Option(None, "--destroy-data", help="allow clients to overwrite these devices (comma-separated; checked here first)"),
    listen: str = typer.Option("", "--listen", help="address to listen on (default: all; an IPv6 address works too)"),
    port: int = typer.Option(DEFAULT_PORT, "--port", help="TCP port of fio's server"),
) -> None:
    """Check this host's drives with the local safety rules, then serve them to
    `ssdlab run --drive THISHOST:/dev/X` through `fio --server` (as root; Ctrl-C stops)."""
    from ..targets.remote_guard import serve

    with user_errors():
        rc = serve(drives, destroy_data, listen, port,
                   log=lambda s: typer.echo(s, err=True))
    raise typer.Exit(rc)
