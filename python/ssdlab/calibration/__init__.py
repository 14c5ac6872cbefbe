"""What the simulated profiles are checked against (`ssdlab validate`) and what a twin can be
fitted to (`ssdlab fit --figures`): one figures file per built-in drive (figures/<drive>.toml:
its published figures, the manufacturer's ratings, QD1 latencies of published fio logs, and
behaviour no real drive shows). `figures_file.py` reads them, `figure.py` holds what a figure
is and how it reads its runs, `measures.py` the derived measures a file may name."""

from __future__ import annotations

from . import fio_logs
from .figure import CONS0, CONS25, FILL, IDLE, QUICK, TOLERANCE, TRIM60, Ctx, Figure, RunKey, fmt, testbed_flags
from .figures_file import KINDS, FiguresError, FiguresFile, builtin, builtin_paths, load


def all_figures() -> list[Figure]:
    """Every built-in drive's figures, by kind (published, latency, spec sheet, behaviour),
    then by drive, each file's in its own order."""
    figs = [f for p in builtin_paths() for f in load(p).figures]
    return sorted(figs, key=lambda f: KINDS.index(f.kind))


__all__ = ["CONS0", "CONS25", "FILL", "IDLE", "QUICK", "TOLERANCE", "TRIM60", "Ctx", "Figure", "FiguresError",
           "FiguresFile", "RunKey", "all_figures", "builtin", "builtin_paths", "fio_logs", "fmt", "load",
           "testbed_flags"]
