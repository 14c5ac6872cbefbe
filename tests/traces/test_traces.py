"""Trace parsers: every format's sample parses to the I/Os it holds, in the
units its parser states; formats are detected; bad lines are refused with their line
number; hypothesis round-trips random I/O lists through every format and throws random
text at every parser (a TraceError or a stream, never anything else)."""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ssdlab import traces
from ssdlab.phase import Replay
from ssdlab.traces import FLUSH, READ, TRIM, WRITE, TraceError, load
from ssdlab.fioformat import iolog
from ssdlab.targets.fio import replay as fio_replay
from ssdlab.traces.timing import fit, issue_times, prepare

DATA = Path(__file__).parents[1] / "data" / "traces"


def ops(s):
    return [traces.OP_NAMES[o] for o in s.op]


def test_fio_v3_written_by_fio():
    s = load(DATA / "fio_v3.log")
    assert s.format == "fio-v3" and s.has_time and len(s) == 40
    assert set(ops(s)) == {"read", "write"}
    assert (s.length_bytes == 4096).all() and (s.offset_bytes % 4096 == 0).all()
    assert s.offset_bytes.max() < 16 * 2**20  # the job's size=16m
    lines = [x.split() for x in (DATA / "fio_v3.log").read_text().splitlines()[1:]]
    io = [x for x in lines if x[2] in ("read", "write")]
    # microseconds since the job started -> ns from the first I/O
    assert s.time_ns[-1] == (int(io[-1][0]) - int(io[0][0])) * 1000
    assert s.offset_bytes[0] == int(io[0][3])


def test_fio_v2_waits_trims_and_syncs():
    s = load(DATA / "fio_v2.log")
    assert s.format == "fio-v2" and s.has_time
    assert ops(s) == ["write", "write", "flush", "read", "trim", "read", "flush"]
    assert s.time_ns.tolist() == [0, 1_000_000, 1_000_000, 1_000_000, 1_250_000, 1_250_000, 1_250_000]
    assert s.offset_bytes.tolist() == [0, 131072, 0, 4096, 1048576, 8192, 0]
    assert s.length_bytes.tolist() == [131072, 131072, 0, 4096, 1048576, 8192, 0]


def test_fio_v2_without_waits_is_closed_loop(tmp_path):
    f = tmp_path / "a.log"
    f.write_text("fio version 2 iolog\n/f add\n/f write 0 4096\n/f read 0 4096\n")
    s = load(f)
    assert not s.has_time
    p = prepare(Replay(trace=str(f)), 10**9)
    assert p.queue_depth == 1 and "closed loop QD1" == p.mode


def test_blkparse_uses_d_events_in_sectors():
    s = load(DATA / "blkparse.txt")
    assert s.format == "blkparse" and any("D events" in n for n in s.notes)
    assert ops(s) == ["write", "read", "trim", "flush", "write", "read"]
    assert s.offset_bytes.tolist() == [2048 * 512, 4096 * 512, 8192 * 512, 0, 16384 * 512, 524288 * 512]
    assert s.length_bytes.tolist() == [256 * 512, 8 * 512, 2048 * 512, 0, 8 * 512, 64 * 512]
    assert s.time_ns.tolist() == [0, 998_300, 1_998_000, 2_497_900, 2_997_500, 2_499_997_500]


def test_blkparse_queue_events_when_no_dispatch(tmp_path):
    f = tmp_path / "q.txt"
    f.write_text("  8,0 0 1 0.5 10 Q W 8 + 8 [a]\n  8,0 0 2 0.75 10 Q R 16 + 16 [a]\n")
    s = load(f)
    assert ops(s) == ["write", "read"] and s.time_ns.tolist() == [0, 250_000_000]
    assert any("Q events" in n for n in s.notes)


def test_msr_filetime_ticks_and_bytes():
    s = load(DATA / "msr.csv")
    assert s.format == "msr"
    assert ops(s) == ["read", "write", "write", "read", "read"]
    # FILETIME: 100 ns ticks
    assert s.time_ns.tolist() == [0, 100_000, 20_100_000, 1_000_100_000, 1_000_100_100]
    assert s.offset_bytes.tolist() == [6832128, 1073741824, 1073807360, 0, 512]
    assert s.length_bytes.tolist() == [4096, 65536, 65536, 512, 3584]


def test_plain_csv_units_from_the_header():
    s = load(DATA / "plain.csv")
    assert s.format == "csv"
    assert ops(s) == ["write", "write", "read", "trim", "flush", "read"]
    assert s.time_ns.tolist() == [0, 500_000, 1_250_000, 2_000_000, 2_000_000, 10_000_000]
    assert s.offset_bytes.tolist() == [0, 256 * 512, 0, 1024 * 512, 0, 8 * 512]
    assert s.length_bytes.tolist() == [128 * 1024, 128 * 1024, 4096, 1024 * 1024, 0, 8192]


def test_gzip_traces_are_read(tmp_path):
    f = tmp_path / "msr.csv.gz"
    f.write_bytes(gzip.compress((DATA / "msr.csv").read_bytes()))
    assert load(f).offset_bytes.tolist() == load(DATA / "msr.csv").offset_bytes.tolist()


@pytest.mark.parametrize("text,fmt,line,words", [
    ("fio version 3 iolog\n5 f write 0 4096\nx f read 0 4096\n", None, 3, "timestamp 'x'"),
    ("fio version 2 iolog\nf write 0\n", None, 2, "needs OFFSET and LENGTH"),
    ("fio version 2 iolog\nf write 0 0\n", None, 2, "length 0"),
    ("fio version 2 iolog\nf write -4096 4096\n", None, 2, "negative"),
    ("fio version 4 iolog\n", "fio", 1, "not a fio iolog header"),
    ("  8,0 0 1 0.1 1 D W 8 + 8 [a]\n  8,0 0 2 zz 1 D W 8 + 8 [a]\n", "blkparse", 2, "malformed"),
    ("  8,0 0 1 0.1 1 D W 8 + 8 [a]\n  8,16 0 2 0.2 1 D W 8 + 8 [a]\n", None, 2, "two devices"),
    ("1,h,0,Read,0,4096,1\n2,h,0,Erase,0,4096,1\n", None, 2, "Type 'Erase'"),
    ("1,h,0,Read,0,4096,1\n2,h,1,Read,0,4096,1\n", None, 2, "one disk"),
    ("1,h,0,Read,0,0,1\n", None, 1, "Size > 0"),
    ("time,op,offset_bytes,length_bytes\n0,read,0,4096\n", None, 1, "needs a unit"),
    ("time_us,op,offset_bytes,length_bytes\n0,read,0,4096\n1,read,x,4096\n", None, 3, "whole numbers"),
    ("time_us,op,offset_bytes,length_bytes\n0,fetch,0,4096\n", None, 2, "op 'fetch'"),
])
def test_bad_lines_name_the_line(tmp_path, text, fmt, line, words):
    f = tmp_path / "bad"
    f.write_text(text)
    with pytest.raises(TraceError) as e:
        load(f, fmt)
    msg = str(e.value)
    assert "\n" not in msg and words in msg
    assert (f"line {line}:" in msg) if line else True


def test_unknown_format_and_empty_trace(tmp_path):
    f = tmp_path / "x"
    f.write_text("hello world\n")
    with pytest.raises(TraceError, match="cannot tell the trace format.*--format"):
        load(f)
    f.write_text("fio version 2 iolog\n/f add\n")
    with pytest.raises(TraceError, match="no I/Os"):
        load(f)
    f.write_bytes(b"\xff\xfe\x00binary")
    with pytest.raises(TraceError, match="not a text trace"):
        load(f, "csv")
    with pytest.raises(TraceError, match="--format fio-v2 but the header says fio-v3"):
        load(DATA / "fio_v3.log", "fio-v2")


def test_fit_refuses_or_wraps_past_the_drive():
    s = load(DATA / "msr.csv")  # reaches 1073807360 + 65536 bytes
    with pytest.raises(TraceError, match="msr.csv: line 2: the I/O reaches byte 1073807360.*spans 1073872896.*--wrap"):
        fit(s, 2**30, wrap=False)
    w = fit(s, 2**30, wrap=True)
    assert (w.offset_bytes + w.length_bytes <= 2**30).all()
    assert w.offset_bytes.tolist()[:3] == [6832128, 0, 65536] and any("--wrap" in n for n in w.notes)
    assert fit(s, 2**31, wrap=False) is s


def test_issue_times_speed_and_idle_cap():
    t = np.array([0, 1_000, 101_000, 60_101_000], dtype=np.int64)
    assert issue_times(t, 1.0, None).tolist() == t.tolist()
    assert issue_times(t, 2.0, None).tolist() == [0, 500, 50_500, 30_050_500]
    assert issue_times(t, 1.0, 25_000_000).tolist() == [0, 1_000, 101_000, 25_101_000]


# ---- hypothesis: round trips through every format, and random text -----------------------
IOS = st.lists(st.tuples(st.integers(0, 10**7), st.sampled_from([READ, WRITE, TRIM, FLUSH]),
                         st.integers(0, 2**30), st.integers(1, 2**16)), min_size=1, max_size=40)


def write_as(fmt: str, ios, path: Path) -> None:
    """Write (time_us, op, sector, sectors) I/Os in `fmt`, sorted by time."""
    ios = sorted(ios, key=lambda x: x[0])
    names = {READ: "read", WRITE: "write", TRIM: "trim", FLUSH: "sync"}
    if fmt == "fio-v3":
        body = [f"{t} f {names[o]}" + ("" if o == FLUSH else f" {s * 512} {n * 512}") for t, o, s, n in ios]
        text = "fio version 3 iolog\n" + "\n".join(body)
    elif fmt == "blkparse":
        rw = {READ: "R", WRITE: "W", TRIM: "D", FLUSH: "FN"}
        text = "\n".join(f"  8,0 1 {i} {t // 10**6}.{t % 10**6:06d}000 1 D {rw[o]:>3}"
                         + ("" if o == FLUSH else f" {s} + {n}") + " [p]" for i, (t, o, s, n) in enumerate(ios))
    elif fmt == "msr":
        text = "\n".join(f"{128166372003061629 + t * 10},h,0,{'Read' if o == READ else 'Write'},"
                         f"{s * 512},{n * 512},10" for t, o, s, n in ios)
    else:
        text = "time_us,op,offset_sectors,length_sectors\n" + "\n".join(
            f"{t},{names[o] if o != FLUSH else 'flush'},{s},{n}" for t, o, s, n in ios)
    path.write_text(text + "\n")


@pytest.mark.parametrize("fmt", ["fio-v3", "blkparse", "msr", "csv"])
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ios=IOS)
def test_round_trip(tmp_path, fmt, ios):
    if fmt == "msr":  # reads and writes only
        ios = [(t, o if o in (READ, WRITE) else WRITE, s, n) for t, o, s, n in ios]
    f = tmp_path / f"t.{fmt}"
    write_as(fmt, ios, f)
    s = load(f)
    assert s.format == fmt
    want = sorted(ios, key=lambda x: x[0])
    t0 = want[0][0]
    assert s.time_ns.tolist() == [(t - t0) * 1000 for t, *_ in want]
    assert s.op.tolist() == [o for _, o, _, _ in want]
    assert s.offset_bytes.tolist() == [0 if o == FLUSH else sec * 512 for _, o, sec, _ in want]
    assert s.length_bytes.tolist() == [0 if o == FLUSH else n * 512 for _, o, _, n in want]


@pytest.mark.parametrize("fmt", list(traces.FORMATS) + [None])
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_random_text_is_a_stream_or_a_trace_error(tmp_path, fmt, data):
    heads = {"fio": "fio version 3 iolog\n", "fio-v2": "fio version 2 iolog\n",
             "fio-v3": "fio version 3 iolog\n", "csv": "time_us,op,offset_bytes,length_bytes\n"}
    alphabet = st.sampled_from(list("0123456789,.+ -\tabcdefRWDFNQxyz") + ["read", "write", "\n",
                                                                          "8,0", " D ", "Read"])
    body = "".join(data.draw(st.lists(alphabet, max_size=200)))
    f = tmp_path / "fuzz"
    f.write_text(heads.get(fmt, "") + body)
    try:
        s = load(f, fmt)
    except TraceError as e:
        assert "\n" not in str(e)
        return
    assert len(s) > 0 and s.time_ns.dtype == np.int64 and (np.diff(s.time_ns) >= 0).all()
    assert (s.offset_bytes >= 0).all() and (s.length_bytes[s.op != FLUSH] > 0).all()


def test_replay_job_text():
    """The iolog and job a real drive replays (times already scaled by --speed)."""
    p = prepare(Replay(trace=str(DATA / "plain.csv"), speed=2.0), 2**30)
    lines = list(iolog.v3_lines(p.time_ns, p.stream, fio_replay.LOG_NAME))
    assert lines[0] == "fio version 3 iolog\n"
    assert lines[2] == "0 trace write 0 131072\n" and lines[3] == "250 trace write 131072 131072\n"
    assert "2000 trace sync\n" not in lines and "1000 trace sync\n" in lines
    job = fio_replay.job_text(p, "/w/p1.iolog", "/dev/loop9", engine="libaio", log_prefix=None)
    assert "read_iolog=/w/p1.iolog" in job and "replay_redirect=/dev/loop9" in job
    assert "iodepth=1" in job and "replay_no_stall" not in job
    q = prepare(Replay(trace=str(DATA / "plain.csv"), queue_depth=8), 2**30)
    job = fio_replay.job_text(q, "/w/p1.iolog", "/dev/loop9", engine="libaio", log_prefix=None)
    assert "iodepth=8" in job and "replay_no_stall=1" in job


def test_a_prepared_replay_is_kept_while_its_trace_is_the_same(tmp_path):
    """A run prepares a replay three times (check, plan, replay): the later ones are the
    first one, and a changed trace file or another replay is prepared anew."""
    f = tmp_path / "t.csv"
    f.write_text("time_us,op,offset_bytes,length_bytes\n0,read,0,4096\n10,write,4096,4096\n")
    r = Replay(trace=str(f), speed=2.0)
    p = prepare(r, 2**30)
    assert prepare(Replay(trace=str(f), speed=2.0), 2**30) is p
    assert prepare(Replay(trace=str(f), speed=1.0), 2**30) is not p
    assert prepare(r, 2**31) is not p
    f.write_text("time_us,op,offset_bytes,length_bytes\n0,read,0,4096\n300,write,8192,4096\n")  # another size
    q = prepare(r, 2**30)
    assert q is not p and q.time_ns.tolist() == [0, 150000] and q.stream.offset_bytes.tolist() == [0, 8192]


@pytest.mark.parametrize("ops", [(0, 1), (0, 1, 2, 3)])
def test_summary_seq_pct_counts_reads_and_writes_that_follow_each_other(ops):
    rng = np.random.default_rng(3)
    n = 5000
    op = rng.choice(np.array(ops, dtype=np.uint8), n)
    ln = rng.choice(np.array([4096, 8192], dtype=np.int64), n)
    off = np.cumsum(ln) - ln  # each I/O where the one before it ended...
    off[rng.random(n) < 0.3] = 0  # ...but some
    s = traces.IoStream(np.arange(n, dtype=np.int64), op, off, ln, "csv", True)
    data = np.flatnonzero(op <= WRITE)
    want = (off[data][1:] == off[data][:-1] + ln[data][:-1]).mean() * 100.0
    assert s.summary()["seq_pct"] == want and 0 < want < 100


@pytest.mark.parametrize("gz", [False, True])
def test_a_byte_order_mark_is_not_part_of_the_header(tmp_path, gz):
    """Spreadsheets save "UTF-8 CSV" with a byte order mark before the header."""
    text = "\ufefftime_us,op,offset_bytes,length_bytes\r\n0,write,0,4096\r\n5,read,0,4096\r\n".encode()
    f = tmp_path / "bom.csv"
    f.write_bytes(gzip.compress(text) if gz else text)
    s = load(f)
    assert s.format == "csv" and s.time_ns.tolist() == [0, 5000]
    f.write_bytes(b"\xef\xbb\xbffio version 2 iolog\nf write 0 4096\n")
    assert load(f).format == "fio-v2"


def test_an_empty_trace_says_so(tmp_path):
    f = tmp_path / "empty.csv"
    for text in (b"", b"\n\n  \n"):
        f.write_bytes(text)
        with pytest.raises(TraceError, match="empty.csv: the file has no lines: give a trace"):
            load(f)


def test_fio_v3_log_of_two_jobs_in_one_file():
    # fio writes each job's log, header and all, to a write_iolog file the jobs share
    text = (DATA / "fio_v3_two_jobs.log").read_text()
    assert text.count("fio version 3 iolog") == 2
    s = load(DATA / "fio_v3_two_jobs.log")
    io = [x.split() for x in text.splitlines() if x.split()[2:3] in (["read"], ["write"])]
    assert len(s) == len(io) == 8 and sorted(ops(s)) == ["read"] * 4 + ["write"] * 4
    assert sorted(s.offset_bytes.tolist()) == sorted(int(x[3]) for x in io)
    assert int(s.length_bytes.sum()) == sum(int(x[4]) for x in io)
    # each job's clock starts at its own start: the two run side by side, merged by time
    first = min(int(x[0]) for x in io)
    assert s.time_ns.tolist() == sorted((int(x[0]) - first) * 1000 for x in io)
    assert any("2 jobs" in n for n in s.notes)


def test_fio_v2_log_of_two_jobs_restarts_the_wait_clock(tmp_path):
    f = tmp_path / "two.log"
    f.write_text("fio version 2 iolog\n/a add\n/a write 0 4096\n/a wait 1000\n/a write 4096 4096\n"
                 "fio version 2 iolog\n/b add\n/b wait 500\n/b read 0 4096\n")
    s = load(f)
    assert ops(s) == ["write", "read", "write"]
    assert s.time_ns.tolist() == [0, 500_000, 1_000_000]


def test_fio_logs_of_two_versions_in_one_file_are_refused(tmp_path):
    f = tmp_path / "mixed.log"
    f.write_text("fio version 3 iolog\n0 /a write 0 4096\nfio version 2 iolog\n/a read 0 4096\n")
    with pytest.raises(TraceError, match=r"line 3: .*version 2.*version 3"):
        load(f)
