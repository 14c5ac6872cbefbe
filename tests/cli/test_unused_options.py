"""An option every `run` shares (--spare, --repeat, --seconds, --interval) given to a test
that does not read it gets a warning line, as --seconds always did; what a test reads is its
`uses`, checked here against its phases."""

from __future__ import annotations

import dataclasses

import pytest

from clirun import cli
from drives import SMALL, set_flags
from ssdlab import methodology
from ssdlab.methodology import Options
from ssdlab.phase import GB
from ssdlab.runner import plan_phases

CHANGED = {"spare": 95.0, "repeat": 2, "interval": 7.0}


def plan(name: str, opts: Options):
    """The phases on a large drive and a small one (where --spare bounds what a test writes)."""
    out = []
    for cap in (256 * GB, 8 * GB):
        try:
            out.append([p.model_dump() for p in plan_phases(name, cap, opts)])
        except (ValueError, TypeError, AttributeError):
            out.append(None)  # a test that needs its own input (a trace, a job file)
    return None if out[0] is None else out


OWN_INPUT = ("fio", "trace")  # they plan from a job file or a trace of the user's


def test_only_the_tests_with_their_own_input_plan_nothing_without_it():
    assert sorted(n for n in methodology.ALL if plan(n, Options(seconds=1.0)) is None) == sorted(OWN_INPUT)


@pytest.mark.parametrize("name", sorted(set(methodology.ALL) - set(OWN_INPUT)))
def test_a_test_uses_exactly_the_shared_options_its_phases_read(name):
    test = methodology.get(name)
    base = plan(name, Options(seconds=1.0 if test.default_seconds is not None else None))
    assert base is not None, name
    for key, value in CHANGED.items():
        changed = plan(name, dataclasses.replace(Options(seconds=1.0 if test.default_seconds is not None else None),
                                                 **{key: value}))
        assert (changed != base) == (key in test.uses), (name, key)


@pytest.mark.parametrize("test, args, warned", [
    ("idle", ["--interval", "5"], ["--interval"]),
    ("idle", ["--repeat", "3", "--interval", "5", "--spare", "5"], ["--repeat", "--interval"]),
    ("fill", ["--seconds", "5", "--interval", "5"], ["--seconds", "--interval"]),
    ("quick", ["--repeat", "2", "--interval", "0", "--spare", "5", "--seconds", "1"], []),
    ("fingerprint", ["--interval", "5", "--repeat", "2"], ["--repeat"]),
])
def test_an_option_the_test_does_not_read_is_named(test, args, warned):
    r = cli("run", test, "--drive", "sim:sn520-128", *args, "--plan", check=True)
    assert [x for x in r.stderr.splitlines() if "warning" in x] == [
        f"ssdlab: warning: {flag} is not used by {test}" for flag in warned], r.stderr


def test_a_sweep_names_them_too_by_where_they_were_given(tmp_path):
    grid = tmp_path / "g.toml"
    grid.write_text("interval = 3\n")
    r = cli("sweep", "idle", "--drive", "sim:tlc-256", *set_flags(SMALL), "--grid", str(grid), "--repeat", "2",
            "--db", str(tmp_path / "r.sqlite"), check=True, timeout=300)
    assert [x for x in r.stderr.splitlines() if "warning" in x] == [
        "ssdlab: warning: --repeat is not used by idle",
        f"ssdlab: warning: grid file {grid}: interval is not used by idle"], r.stderr
