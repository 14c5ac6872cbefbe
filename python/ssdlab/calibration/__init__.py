"""What the simulated profiles are checked against (`ssdlab validate`): the published figures
of methodology.md, the manufacturers' spec sheets, and behaviour no real drive shows
(freezes). `figure.py` holds what a figure is and how it reads its runs."""

from __future__ import annotations

from . import fio_logs, freezes, published, spec_sheets
from .figure import CONS0, CONS25, FILL, IDLE, QUICK, TOLERANCE, TRIM60, Ctx, Figure, RunKey, fmt, testbed_flags


def all_figures(profile_ids: list[str]) -> list[Figure]:
    """Every figure: published, fio logs, spec sheets, then the behaviour rows of `profile_ids`."""
    return published.figures() + fio_logs.figures() + spec_sheets.figures() + freezes.figures(profile_ids)


__all__ = ["CONS0", "CONS25", "FILL", "IDLE", "QUICK", "TOLERANCE", "TRIM60", "Ctx", "Figure", "RunKey",
           "all_figures", "fmt", "testbed_flags"]
