"""The tests of the methodology (methodology.md), one module each; each module builds one
`Test` (test.py): its phases, analysis, figures, cost and options. This registry is the
one list of them: the CLI, the review, the report and validate ask it."""

from __future__ import annotations

from . import consistency, copy, fill, fingerprint, fio_run, idle, low_qd_write, quick, trace, trim, working_set
from .common import Options
from .test import Test
from .pts import PTS_TESTS

# the review's tests, in the order a review runs and a report shows them
TESTS: dict[str, Test] = {}
# tests of the user's own input (a trace, a fio job): `ssdlab run` only, not in `review`
INPUT_TESTS: dict[str, Test] = {}
ALL: dict[str, Test] = {}


def register(test: Test) -> Test:
    """Add a test to the registry (review tests to TESTS, input tests to INPUT_TESTS)."""
    if test.name in ALL:
        raise ValueError(f"a test named '{test.name}' is already registered")
    (TESTS if test.in_review else INPUT_TESTS)[test.name] = test
    ALL[test.name] = test
    return test


register(fill.TEST)
register(consistency.TEST)
register(working_set.TEST)
register(trim.TEST)
register(idle.TEST)
register(quick.TEST)
register(copy.TEST)
register(trace.TEST)
register(fio_run.TEST)
register(low_qd_write.TEST)
register(fingerprint.TEST)
for _t in PTS_TESTS.values():  # the SNIA PTS tests: `ssdlab run pts-TEST` and `ssdlab pts`
    register(_t)


def spare_matters(test: str) -> bool:
    """Whether reports name a run's spare area even at 0 % (a test no longer registered: no)."""
    t = ALL.get(test)
    return bool(t and t.spare_matters)


def get(test: str) -> Test:
    try:
        return ALL[test]
    except KeyError:
        raise ValueError(f"unknown test '{test}': choose one of {', '.join(ALL)}") from None


def run_verdict(test: str, args: dict | None, metrics: dict, status: str) -> str | None:
    """The test's verdict on a stored complete run (consistency: steady state not reached),
    read with the `--seconds` it ran with; None: none, or not a complete run."""
    verdict = ALL[test].verdict if test in ALL else None
    if verdict is None or status != "complete":
        return None
    seconds = (args or {}).get("seconds")
    ok = isinstance(seconds, (int, float)) and not isinstance(seconds, bool)
    return verdict(metrics, Options(seconds=seconds if ok else None))


__all__ = ["ALL", "TESTS", "INPUT_TESTS", "PTS_TESTS", "Options", "Test", "get", "register", "run_verdict",
           "spare_matters"]
