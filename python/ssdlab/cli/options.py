"""The options several commands share, declared once (typer reads the Annotated types):
`def cmd(db: Db = None, seed: Seed = 42, ...)`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from .inputs import REVIEW_SECONDS_HELP, SECONDS_HELP

Db = Annotated[Optional[Path], typer.Option("--db", help="results store (default: user data dir)")]
Seed = Annotated[int, typer.Option("--seed", help="simulator seed")]
Sets = Annotated[list[str], typer.Option("--set", help="profile override key=value (simulated drives)")]
def _testbed(value: Optional[str]) -> Optional[str]:
    from ..store import StoreError, check_testbed

    try:
        return check_testbed(value)
    except StoreError as e:
        raise typer.BadParameter(str(e).split(": ", 1)[1]) from None


Testbed = Annotated[Optional[str], typer.Option("--testbed", callback=_testbed,
                                                help="tag runs to compare like with like (one line)")]
Spare = Annotated[float, typer.Option("--spare", help="leave this % of LBAs (at the end) unwritten")]
JsonOut = Annotated[bool, typer.Option("--json", help="print one JSON document on stdout")]
DestroyData = Annotated[Optional[str], typer.Option(
    "--destroy-data", help="real drives: allow overwriting this device (name it exactly as --drive does)")]
Drives = Annotated[list[str], typer.Option(
    "--drive", "-d", help="sim:PROFILE, a profile .toml, /dev/..., file:PATH:SIZE, nbd:SOCKET (a served "
    "drive), HOST[:PORT]:/dev/... (a drive on another host); repeatable")]
Seconds = Annotated[Optional[float], typer.Option("--seconds", help=SECONDS_HELP)]
ReviewSeconds = Annotated[Optional[float], typer.Option("--seconds", help=REVIEW_SECONDS_HELP)]
ServeDestroyData = Annotated[Optional[str], typer.Option(
    "--destroy-data", help="with --data: allow overwriting that existing file, which ssdlab did not write "
    "(name it as --data does)")]
QUICK_INTERVAL = "quick: idle seconds between tests (default 5, CrystalDiskMark's; 0: none)"
Interval = Annotated[Optional[float], typer.Option(
    "--interval", help=f"{QUICK_INTERVAL}; "
    "fingerprint: the idle pause (default 600; the settle after the fill waits at most as long)")]
ReviewInterval = Annotated[Optional[float], typer.Option("--interval", help=QUICK_INTERVAL)]  # no fingerprint
Repeat = Annotated[int, typer.Option("--repeat", help="quick: scored runs of each test (CrystalDiskMark shows the best)")]
