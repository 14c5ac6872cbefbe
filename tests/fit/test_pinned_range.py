"""A pinned value's range said as a share of the value only where a share means something:
a bracket that reaches the search's floor or ceiling is bounded there by the search, not by
the evidence (and a value near the floor makes any share of it absurd: 0.0055 us pinned to
0..3 us is "-100..+54784 %"), so the twin's file, the printed table, the report and
`fit --json` give the absolute range with the open end said ("at most 3.005 us"), and
`range_rel` is null there (`range_at_bound` says which end is the search's)."""

from __future__ import annotations

import pytest

from ssdlab.fit import profile_out, space
from ssdlab.fit.profile_out import Pin, pinned_label, range_of

from test_twin_labels import notes


def _param(st: space.Start, key: str) -> space.Param:
    return next(q for q in st.params if q.key == key)


def _note(st: space.Start, pin: Pin) -> str:
    text = profile_out.write(st, {pin.key: pin.value}, {pin.key: pin}, "twin-x", "Twin of x", "runs 1", 1, 4)
    return notes(text)[pin.key]


@pytest.mark.parametrize("pin, unit, said, ends", [
    # a value near the floor: any share of it would be absurd
    (Pin("host.write_latency_us", 0.005476, 0.005476, 0.0, 3.005, True, "pinned"), "us", "at most 3.005 us",
     (True, False)),
    (Pin("ftl.idle_gc_target_pct", 29.0, 29.0, 28.0, 30.0, True, "pinned"), "%", "at least 28 %", (False, True)),
])
def test_a_bracket_at_the_searchs_bound_says_its_other_end_not_a_share(pin, unit, said, ends):
    st = space.start("tlc-256", {"capacity_gb": 256.0})
    note = _note(st, pin)
    assert said in note and "%)" not in note.replace(said, ""), note
    rel, at = range_of(_param(st, pin.key), pin)
    assert rel is None and at == ends
    row = {"key": pin.key, "value": pin.value, "unit": unit, "pinned": True, "lo": pin.lo, "hi": pin.hi,
           "range_rel": rel, "range_at_bound": list(at)}
    assert pinned_label(row) == f"pinned to {said}"


def test_a_bracket_inside_the_bounds_is_a_share_of_the_value():
    st = space.start("tlc-256", {"capacity_gb": 256.0})
    pin = Pin("nand.native.read_us", 75.0, 75.0, 72.0, 78.0, True, "pinned")
    note = _note(st, pin)
    assert note.endswith("(-4.0..+4.0 %)"), note
    rel, ends = range_of(_param(st, pin.key), pin)
    assert rel == pytest.approx((-0.04, 0.04)) and ends == (False, False)


def test_a_kept_document_without_the_bounds_gives_no_share_of_a_range_down_to_zero():
    """A document a fit kept before `range_at_bound` (its `range_rel` from the value alone)
    reads as the new one where the range reaches 0 (no parameter's floor is below it): no
    share, its high end."""
    row = {"key": "host.write_latency_us", "value": 0.005476, "unit": "us", "pinned": True, "lo": 0.0, "hi": 3.005,
           "range_rel": [-1.0, 547.84]}
    assert pinned_label(row) == "pinned to at most 3.005 us"
    assert pinned_label({k: v for k, v in row.items() if k != "range_rel"}) == "pinned to at most 3.005 us"


def test_the_printed_table_says_a_range_not_looked_at_is_not_checked(capsys):
    """A parameter the budget ended before its slice has seen its own value alone: the printed
    table says it was not checked, not a range of one value ("60..60", which reads as pinned)."""
    from ssdlab.cli.fit import show

    row = {"key": "nand.native.read_us", "value": 60.0, "unit": "us", "class_value": 60.0, "pinned": False,
           "lo": 60.0, "hi": 60.0, "note": "not checked: the budget ran out before its slice", "range_is": "seen",
           "range_rel": None, "range_at_bound": [False, False]}
    doc = {"class": "tlc-256", "trials": 10, "parameters": [row], "crossval": [], "conflicts": [], "left_out": [],
           "figures": [], "passed": 0, "total": 1, "twin": "t.toml", "stages": {}}
    show(doc)
    line = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("nand.native.read_us"))
    assert "60..60" not in line and line.endswith("not checked"), line
