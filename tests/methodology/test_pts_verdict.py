"""A PTS run that never reached steady state says so under its figures (`ssdlab run`,
each point of `ssdlab sweep`, `results show`, `compare`): its numbers are the last rounds'
averages, not steady-state values, and a table of them does not show it."""

from __future__ import annotations

import pytest
from ssdlab.methodology import Options, get, run_verdict
from ssdlab.methodology.pts import PTS_TESTS
from ssdlab.methodology.pts import common as C


def metrics(values: dict[str, list[float]]) -> dict:
    return C.steady_metrics(values, 25)


@pytest.mark.parametrize("name", ["pts-iops", "pts-latency", "pts-hir", "pts-dirth"])
def test_never_steady_says_which_variable_and_in_how_many_rounds(name):
    m = metrics({"RND 4 KiB 0/100 IOPS": [100.0] * 25, "RND 64 KiB 65/35 IOPS": [100.0, 150.0] * 12 + [100.0]})
    line = get(name).verdict(m, Options())
    assert line == ("steady state NOT ACHIEVED: RND 64 KiB 65/35 IOPS not steady in 25 rounds; "
                    "the figures average the last 5 rounds, not a steady state")
    assert get(name).verdict(metrics({"x": [100.0] * 5}), Options()) is None
    assert run_verdict(name, {}, m, "complete") == line


def test_throughput_names_the_block_size_that_was_not_steady():
    steady = metrics({"SEQ 1024 KiB 0/100 MB/s": [100.0] * 5})
    swinging = metrics({"SEQ 128 KiB 0/100 MB/s": [100.0, 150.0] * 10})
    m = {"bs1m": steady, "bs128k": swinging, "steady_reached": False, "steady_round": 5, "rounds": 5}
    assert get("pts-throughput").verdict(m, Options()) == (
        "steady state NOT ACHIEVED: SEQ 128 KiB 0/100 MB/s not steady in 20 rounds; "
        "the figures average the last 5 rounds, not a steady state")


def test_tests_without_rounds_have_no_verdict():
    assert PTS_TESTS["pts-wsat"].verdict is None and PTS_TESTS["pts-xsr"].verdict is None


def test_as_read_back_from_the_store_every_failing_variable_in_one_list():
    m = metrics({"a": [100.0, 150.0] * 10, "b": [100.0, 150.0] * 10})
    m["rounds"] = 20.0  # the store gives numbers back as floats
    assert get("pts-iops").verdict(m, Options()).startswith(
        "steady state NOT ACHIEVED: a, b not steady in 20 rounds; the figures average the last 5 rounds")



def test_one_round_is_one_round():
    """A run of one round (`--rounds 1`): "in 1 round" on the command's line, in the
    verdict and in the report's header row; a stored count (a float) reads the same."""
    from ssdlab.cli.pts import verdict_line
    from ssdlab.methodology.pts.figures import steady_text

    m = metrics({"a": [100.0]})
    m["rounds"] = 1.0
    assert verdict_line(m) == "steady state not reached in 1 round"
    assert get("pts-iops").verdict(m, Options()).startswith("steady state NOT ACHIEVED: a not steady in 1 round;")
    assert steady_text(m).startswith("NOT ACHIEVED in 1 round: ")
    m["rounds"] = 2
    assert verdict_line(m) == "steady state not reached in 2 rounds"
