"""What an interrupted review says: its report is never drawn, so after hours of a real
drive's tests the user needs the runs kept, the tests not run, and the commands that show
them and go on from there."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Optional


def interrupted_lines(kept: list[tuple[str, int, str]], tests: list[str], out: Optional[Path],
                      db: Optional[Path], how: str = "interrupted") -> list[str]:
    """`kept`: (test, run id, status) of the runs stored, in order; `tests`: every run the
    review makes; `how` it ended (interrupted, or stopped by a failed test). Two lines:
    what was stored and not run; the commands to go on."""
    said = ", ".join(f"{t} (run {i}" + ("" if s == "complete" else f", {s}") + ")" for t, i, s in kept)
    done = {t for t, _, s in kept if s == "complete"}
    left = [t for t in tests if t not in done]
    first = f"review {how}; tests stored: {said or 'none'}" + (
        f"; not run: {', '.join(t for t in left if t not in {k for k, _, _ in kept})}" if left else "")
    if not kept:
        return [first]
    where = (f" -o {shlex.quote(str(out))}" if out else " -o DIR") + (f" --db {shlex.quote(str(db))}" if db else "")
    ids = " ".join(str(i) for _, i, _ in kept)
    go_on = (f"their report: ssdlab report {ids}{where}; to go on, `ssdlab run TEST` with the review's options "
             f"for each of {', '.join(left)}, then `ssdlab report` of all the runs (or the review again, from the start)"
             if left else f"their report: ssdlab report {ids}{where}")
    return [first, go_on]
