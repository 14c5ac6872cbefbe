"""A plain CSV trace read whole at native speed (plain_csv.parse_text) gives exactly the
stream the line-by-line parser gives, and leaves every line it would read differently (or
refuse) to that parser, so the errors stay the same too."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytest.importorskip("ssdlab._sim")

from ssdlab.traces import TraceError, load, plain_csv  # noqa: E402


def slow(text: bytes):
    lines = [(i + 1, x.decode()) for i, x in enumerate(text.split(b"\n")) if x.strip()]
    return plain_csv.parse(lines, "t.csv")


def same(a, b) -> bool:
    return all(np.array_equal(getattr(a, f), getattr(b, f))
               for f in ("time_ns", "op", "offset_bytes", "length_bytes")) and \
        (a.format, a.has_time) == (b.format, b.has_time)


def test_the_common_case_is_read_natively_and_alike():
    rows = [f"{i * 12.5},{'rwRWtTf'[i % 7]},{i * 8},{4096 * (1 + i % 3)}" for i in range(1000)]
    text = ("\n\ntime_us,op,offset_sectors,length_bytes\r\n" + "\r\n".join(rows) + "\n\n").encode()
    fast = plain_csv.parse_text(text, "t.csv")
    assert fast is not None and len(fast) == 1000
    assert same(fast, slow(text))


FIELD = st.one_of(
    st.from_regex(r"\A[0-9]{1,6}(\.[0-9]{0,3})?([eE][+-]?[0-9]{1,2})?\Z"),
    st.sampled_from(["", " 5", "5 ", "+5", "-5", "1_0", "inf", "nan", "0x10", "1e", ".", ".5",
                     "99999999999999999999", "9e30", "0"]),
)
OP = st.sampled_from(["read", "write", "trim", "flush", "R", "w", "T", "F", "discard", " Read ",
                      "erase", ""])


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(FIELD, OP, FIELD, FIELD), min_size=1, max_size=12),
       st.sampled_from(["time_us,op,offset_bytes,length_bytes",
                        "op,length_kib,time_ns,offset_sectors,extra"]))
def test_native_and_line_by_line_give_the_same_stream_or_the_native_way_steps_aside(rows, header):
    cols = header.split(",")
    lines = []
    for t, op, off, ln in rows:
        v = {"time": t, "op": op, "offset": off, "length": ln, "extra": "x"}
        lines.append(",".join(v[c.split("_")[0]] for c in cols))
    text = (header + "\n" + "\n".join(lines) + "\n").encode()
    fast = plain_csv.parse_text(text, "t.csv")
    try:
        want = slow(text)
    except TraceError:
        assert fast is None  # the line-by-line parser says what is wrong
        return
    if fast is not None:
        assert same(fast, want)


def test_a_bad_line_gets_the_same_error_through_load(tmp_path):
    f = tmp_path / "t.csv"
    f.write_text("time_us,op,offset_bytes,length_bytes\n0,read,0,4096\n1,read,-4096,4096\n")
    with pytest.raises(TraceError, match="line 3: time, offset and length must be >= 0"):
        load(f)
    f.write_text("time_s,op,offset_bytes,length_bytes\n0,read,0,4096\n1e300,read,0,4096\n")
    with pytest.raises(TraceError, match=r"line 3: time 1e300 \(time_s\): not a finite time below 2\*\*63 ns"):
        load(f)
    f.write_text("time_us,op,offset_bytes,length_bytes\n0,read,0,4096\n1,read,4096,4096\n")
    assert len(load(f)) == 2


def big_text(rows: int, bad: int | None = None) -> bytes:
    """A trace of `rows` I/Os, over 4 MiB (read in two halves at once), times a little out
    of order, blank lines, decimal and integer times; line `bad` (0-based) unreadable."""
    out = ["", "time_us,op,offset_sectors,length_bytes"]
    for i in range(rows):
        t = f"{i * 3 + (i % 5) * 7}" if i % 4 else f"{i * 3}.25"
        out.append("f,0,0" if i == bad else f"{t},{'rwRWtTf'[i % 7]},{i * 8},{4096 * (1 + i % 3)}")
        if i % 1000 == 0:
            out.append("  ")
    return ("\n".join(out) + "\n").encode()


def test_a_large_trace_read_in_two_halves_is_the_same_stream():
    text = big_text(220_000)
    assert len(text) > 4 << 20
    fast = plain_csv.parse_text(text, "t.csv")
    assert fast is not None and len(fast) == 220_000
    assert same(fast, slow(text))
    assert plain_csv.parse_text(big_text(220_000, bad=200_000), "t.csv") is None  # in the second half


def test_the_limits_hold_over_both_halves(monkeypatch):
    from ssdlab.traces import limits

    text = big_text(220_000)
    monkeypatch.setattr(limits, "MAX_IOS", 219_999)
    assert plain_csv.parse_text(text, "t.csv") is None
    monkeypatch.setattr(limits, "MAX_IOS", 220_000)
    assert plain_csv.parse_text(text, "t.csv") is not None
    # each half spans about 330 ms of the trace's 660 ms
    monkeypatch.setattr(limits, "MAX_SPAN_NS", 400_000_000)
    assert plain_csv.parse_text(text, "t.csv") is None
    with pytest.raises(TraceError):
        slow(text)


@pytest.mark.parametrize("header,times,want", [
    # nanoseconds since the epoch (eBPF tools write them): past float's 2**53, 256 ns apart
    ("time_ns", ["1700000000000000001", "1700000000000000101", "1700000000000000202"], [0, 100, 201]),
    # microseconds since the epoch with nanosecond decimals
    ("time_us", ["1700000000000000.001", "1700000000000000.102", "1700000000000000.2035"], [0, 101, 203]),
    # seconds with nanosecond decimals, as blkparse prints them, of a host up a year
    ("time_s", ["31536000.000000001", "31536000.000000102", "31536000.000000203"], [0, 101, 202]),
])
def test_times_are_read_exactly_both_ways(header, times, want):
    text = (f"{header},op,offset_bytes,length_bytes\n"
            + "".join(f"{t},write,{i * 4096},4096\n" for i, t in enumerate(times))).encode()
    fast = plain_csv.parse_text(text, "t.csv")
    assert fast is not None
    assert fast.time_ns.tolist() == want
    assert slow(text).time_ns.tolist() == want
