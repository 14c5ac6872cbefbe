"""The `ssdlab` command's entry point. Importing the CLI takes a few tenths of a second (typer,
pydantic, numpy); a Ctrl-C in that time ends the command as a later one does, with one line and
status 130, not with Python's traceback of the import it cut short."""

from __future__ import annotations

import sys


def main() -> None:
    try:
        from .cli import app
    except KeyboardInterrupt:
        sys.stderr.write("ssdlab: interrupted\n")
        sys.exit(130)
    app()
