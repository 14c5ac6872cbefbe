"""The `ssdlab` command's entry point. Importing the CLI takes a few tenths of a second (typer,
pydantic, numpy); a Ctrl-C or SIGTERM in that time is held until the import is done (raised
inside it, a library may wrap it in an error of its own), then ends the command as a later
one does: one line, status 130 (143)."""

from __future__ import annotations

import signal
import sys


def main() -> None:
    got: list[int] = []
    held = (signal.SIGINT, signal.SIGTERM)
    old = {s: signal.signal(s, lambda signum, _frame: got.append(signum)) for s in held}
    # a fleet starts its members with both blocked (fleet.py): held from here on
    signal.pthread_sigmask(signal.SIG_UNBLOCK, held)
    try:
        from .cli import app
    finally:
        for s, h in old.items():
            signal.signal(s, h)
    if got:
        sys.stderr.write("ssdlab: interrupted\n")
        sys.exit(143 if signal.SIGTERM in got else 130)
    app(prog_name="ssdlab")


if __name__ == "__main__":  # `python -m ssdlab.command`: a fleet's members, with the same hold
    main()
