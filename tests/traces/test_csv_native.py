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
    f.write_text("time_us,op,offset_bytes,length_bytes\n0,read,0,4096\n1,read,4096,4096\n")
    assert len(load(f)) == 2
