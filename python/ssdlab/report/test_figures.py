"""The figures a test draws itself (methodology.test.Test.figures), grouped by test: the
report asks each test of the runs for its figures and never branches on a test's name."""

from __future__ import annotations

from typing import Any

from .model import ReportRun


def figures_by_test(runs: list[ReportRun]) -> list[tuple[str, list[Any]]]:
    from .. import methodology

    out: list[tuple[str, list[Any]]] = []
    for name in dict.fromkeys(r.test for r in runs):
        try:
            test = methodology.get(name)
        except ValueError:
            continue
        draw = getattr(test, "figures", None)
        if not callable(draw):
            continue
        figs = draw([r for r in runs if r.test == name])
        if figs:
            out.append((name, figs))
    return out
