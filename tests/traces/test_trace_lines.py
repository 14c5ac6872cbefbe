"""Where a trace's problem is: an error found after the I/Os are sorted by time names the
file's line (1-based, as an editor shows), in every reader; and what may come before a
header (blank lines, '#' comments) does not hide it."""

from __future__ import annotations

from pathlib import Path

import pytest

from ssdlab.traces import TraceError, load, plain_csv
from ssdlab.traces.timing import MAX_IO, fit

BIG = MAX_IO + 4096
# the big I/O is on line 4 of each file but the 2nd by time (the old message said "I/O 2")
OUT_OF_ORDER = {
    "csv": ("time_us,op,offset_bytes,length_bytes\n"
            "50,write,0,4096\n"
            "10,write,0,4096\n"
            f"30,write,0,{BIG}\n"),
    "msr": ("128166372003062629,wdev,0,Write,0,4096,1\n"
            "128166372003060629,wdev,0,Write,0,4096,1\n"
            "\n"
            f"128166372003061629,wdev,0,Write,0,{BIG},1\n"),
    "blkparse": ("  8,0    0        1     0.000050000   100  D   W 0 + 8 [fio]\n"
                 "  8,0    0        2     0.000010000   100  D   W 0 + 8 [fio]\n"
                 "  8,0    0        3     0.000020000   100  C   W 0 + 8 [0]\n"
                 f"  8,0    0        4     0.000030000   100  D   W 0 + {BIG // 512} [fio]\n"),
}


# (format, read by the native CSV reader): the CSV both ways, the others have one
@pytest.mark.parametrize("fmt,native", [("csv", True), ("csv", False), ("msr", False), ("blkparse", False)])
def test_an_io_too_large_is_named_by_its_line_not_its_place_in_time(tmp_path: Path, monkeypatch, fmt: str,
                                                                       native: bool) -> None:
    if not native:
        monkeypatch.setattr(plain_csv, "parse_text", lambda text, path: None)
    f = tmp_path / f"t.{fmt}"
    f.write_text(OUT_OF_ORDER[fmt])
    s = load(f)
    assert s.format == fmt and any("sorted" in n for n in s.notes)
    with pytest.raises(ValueError, match=rf"^{f}: line 4: {BIG} bytes in one I/O: reads and writes"):
        fit(s, 2**30, wrap=False)


@pytest.mark.parametrize("native", [True, False])
def test_an_io_past_the_drive_is_named_by_its_line(tmp_path: Path, monkeypatch, native: bool) -> None:
    if not native:
        monkeypatch.setattr(plain_csv, "parse_text", lambda text, path: None)
    f = tmp_path / "far.csv"
    f.write_text("\n# recorded by hand\ntime_us,op,offset_bytes,length_bytes\n9,read,0,4096\n\n"
                 "1,write,40000000000,4096\n5,read,4096,4096\n")
    with pytest.raises(ValueError, match=rf"^{f}: line 6: the I/O reaches byte 40000004096"):
        fit(load(f), 2**30, wrap=False)


def test_a_csv_read_natively_in_two_halves_keeps_each_io_line(tmp_path: Path) -> None:
    n = 300_000  # over 4 MiB: the native reader parses two halves at once
    f = tmp_path / "big.csv"
    with open(f, "w") as out:
        out.write("\n\ntime_us,op,offset_bytes,length_bytes\n")
        for i in range(n):
            out.write(f"{n - i},write,{i * 4096},4096\n")
    assert f.stat().st_size > 4 << 20
    s = load(f)
    assert s.line is not None and s.line[0] == n + 3 and s.line[-1] == 4  # sorted: the last line first
    assert (s.offset_bytes == (s.line - 4) * 4096).all()


MSR_HEADER = "Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime\n"
MSR_IOS = "128166372003061629,wdev,0,Read,6832128,4096,4202\n128166372003062629,wdev,0,Write,0,65536,1035\n"


@pytest.mark.parametrize("before", ["\n", "\n  \n\n", "# wdev_0 from SNIA IOTTA\n", "\n# a note\n\n# another\n"])
@pytest.mark.parametrize("header", [True, False])
def test_msr_after_blank_lines_or_comments(tmp_path: Path, before: str, header: bool) -> None:
    f = tmp_path / "wdev_0.csv"
    f.write_text(before + (MSR_HEADER if header else "") + MSR_IOS)
    for fmt in (None, "msr"):
        s = load(f, fmt)
        assert s.format == "msr" and s.offset_bytes.tolist() == [6832128, 0], fmt
        assert s.line is not None and s.line.tolist() == [i + before.count("\n") + header for i in (1, 2)]


@pytest.mark.parametrize("native", [True, False])
def test_csv_after_blank_lines_or_comments(tmp_path: Path, monkeypatch, native: bool) -> None:
    if not native:
        monkeypatch.setattr(plain_csv, "parse_text", lambda text, path: None)
    f = tmp_path / "t.csv"
    f.write_text("\n# from the lab's logger\n\ntime_us,op,offset_bytes,length_bytes\n0,write,0,4096\n")
    for fmt in (None, "csv"):
        s = load(f, fmt)
        assert s.format == "csv" and s.line is not None and s.line.tolist() == [5]


def test_a_bad_csv_header_after_a_comment_names_its_line(tmp_path: Path) -> None:
    f = tmp_path / "t.csv"
    f.write_text("# units below\n\ntime,op,offset_bytes,length_bytes\n0,write,0,4096\n")
    with pytest.raises(ValueError, match=rf"^{f}: line 3: column 'time' needs a unit"):
        load(f)


def test_a_last_line_that_is_not_text_is_named_by_its_own_number(tmp_path):
    f = tmp_path / "t.log"
    f.write_bytes(b"fio version 3 iolog\n0 /a write 0 4096\n\xff")  # no newline after it
    with pytest.raises(TraceError, match=r"t.log: line 3: not a text trace \(byte 0xff"):
        load(f)
