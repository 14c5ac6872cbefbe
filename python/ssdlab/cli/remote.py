"""Drives on other hosts, the commands of the drive's host: `ssdlab agent` (hidden: ssdlab
starts it there over ssh for `--drive HOST:/dev/X`; targets/remote/agent.py) and `ssdlab
fio-server`, which serves nothing: it says how drives on other hosts are reached."""

from __future__ import annotations

import os
import sys
from typing import Any, Optional

import typer

from ..errors import one_line
from ..targets.remote.allowlist import CONFIG
from .errors import EXIT_USER

GONE = ("`ssdlab fio-server` is gone: fio's server runs any job anyone who reaches its port "
        "sends it (as root), so ssdlab serves nothing; on the machine that runs the tests, use "
        "`ssdlab run TEST --drive THISHOST:/dev/X`, which reaches this host over ssh with your "
        "own keys (docs/real-drives-remote.md)")


def fio_server_cmd(ctx: typer.Context) -> None:
    """Gone: drives on other hosts are reached over ssh (`--drive HOST:/dev/X`)."""
    typer.echo(f"ssdlab: error: {GONE}", err=True)
    raise typer.Exit(EXIT_USER)


def agent_cmd(
    drives: Optional[str] = typer.Option(None, "--drives", metavar="LIST", help="the drives this host lets the agent test, comma-separated: /dev/X, file:/PATH[:SIZE], file:/DIR/[:SIZE] (SIZE: the largest file it may make; without one, none larger than it is) (put it in authorized_keys' command=)"),
    config: Optional[str] = typer.Option(None, "--config", metavar="FILE", help=f"the list in a file instead of {CONFIG} (root's, writable by root only)"),
    fio_memory: Optional[str] = typer.Option(None, "--fio-memory", metavar="SIZE", help="the most memory fio may take for one phase on this host (e.g. 2G); default: half of what the host has available when the phase is checked"),
) -> None:
    """The drive host's half of `--drive HOST:/dev/X`: ssdlab runs it over ssh and talks
    to it on stdin and stdout. Not for use by hand. It tests only the drives this host
    lists (--drives, /etc/ssdlab/agent.toml): docs/real-drives-remote.md "Security model"."""
    from ..targets.remote.allowlist import AllowList, BadList
    from ..units import parse_size

    try:
        allowed = AllowList.load(drives, config)
        memory = None if fio_memory is None else parse_size(fio_memory, minimum=1 << 20)
    except (BadList, ValueError) as e:  # ssh shows the client this line and the exit status
        what = "--fio-memory " if not isinstance(e, BadList) else ""
        typer.echo(f"ssdlab: error: agent: {what}{one_line(e)}", err=True)
        raise typer.Exit(EXIT_USER) from None
    if os.isatty(0):
        typer.echo("ssdlab: error: `ssdlab agent` is started over ssh by `ssdlab run --drive "
                   "HOST:/dev/X` on another machine; there is nothing to run by hand", err=True)
        raise typer.Exit(EXIT_USER)
    from ..targets.remote.agent import main

    sys.stdout.flush()
    raise typer.Exit(main(allowed, memory))


FIO_SERVER: dict[str, Any] = {"context_settings": {"allow_extra_args": True, "ignore_unknown_options": True,
                                   "help_option_names": []},
              "hidden": True, "add_help_option": False}
