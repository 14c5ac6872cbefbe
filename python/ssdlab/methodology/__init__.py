"""The review tests of methodology.md, one module each. A module provides

    phases(capacity: int, opts: Options) -> Iterable[Phase]
        the steps, in order; a generator may receive each PhaseResult back (`send`) when
        a later step depends on a measured one (copy: idle while a slow source delivers)
    analyze(results: list[PhaseResult], opts: Options) -> dict
        the metrics named in the methodology issue
    DEFAULT_SECONDS, SECONDS_HELP: what --seconds sets for this test
"""

from __future__ import annotations

from types import ModuleType

from . import consistency, copy, fill, fio_run, idle, quick, trace, trim, working_set
from .common import Options
from .pts import PTS_TESTS

TESTS: dict[str, ModuleType] = {
    "fill": fill,
    "consistency": consistency,
    "working-set": working_set,
    "trim": trim,
    "idle": idle,
    "quick": quick,
    "copy": copy,
}
# Tests of the user's own input (a trace, a fio job): `ssdlab run` only, not in `review`.
INPUT_TESTS: dict[str, ModuleType] = {
    "trace": trace,
    "fio": fio_run,
}


def get(test: str):
    try:
        return TESTS[test] if test in TESTS else INPUT_TESTS[test] if test in INPUT_TESTS else PTS_TESTS[test]
    except KeyError:
        raise ValueError(f"unknown test '{test}': choose one of "
                         f"{', '.join([*TESTS, *INPUT_TESTS, *PTS_TESTS])}") from None


__all__ = ["TESTS", "INPUT_TESTS", "PTS_TESTS", "Options", "get"]
