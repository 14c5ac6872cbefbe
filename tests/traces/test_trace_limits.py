"""Traces that used to exhaust memory or time, or to be stored as failed runs: each is now
refused before anything is stored (one line naming the limit, exit status 2), or replayed
in bounded memory. The command runs in a child process under a memory limit
(tests/bounded.py)."""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import pytest

from bounded import refused, run_cli, stored_runs
from ssdlab.traces import load

DRIVE = ["--drive", "sim:sn520-128"]


def trace_run(tmp: Path, text: str | bytes, *extra: str, name: str = "t.csv"):
    f = tmp / name
    f.write_bytes(text if isinstance(text, bytes) else text.encode())
    db = tmp / "r.sqlite"
    return run_cli("run", "trace", "--trace", str(f), *DRIVE, "--db", str(db), *extra), db


def test_week_long_gap_replays_in_bounded_memory(tmp_path: Path) -> None:
    week_us = 7 * 86400 * 10**6
    r, db = trace_run(tmp_path, f"time_us,op,offset_bytes,length_bytes\n0,write,0,4096\n"
                                f"{week_us},write,4096,4096\n", "--json")
    assert r.returncode == 0, r.stderr[-2000:]
    from ssdlab.store import Store

    phases = Store(db, create=False).phases(1)
    replay = [p for p in phases if p["name"] == "trace-empty"][0]
    t = replay["series"]["t_s"]
    assert t[-1] == pytest.approx(7 * 86400, abs=1)
    assert len(t) < 10  # the quiet week is its first and last intervals
    assert np.all(replay["series"]["ios"][1:] == 0)


@pytest.mark.parametrize("name, text, words", [
    ("wait.log", "fio version 2 iolog\nf add\nf wait 9223372036854775\nf write 0 4096\n",
     ["line 3", "at most 1e+07 s"]),
    ("ticks.csv", "0,h,0,Write,0,4096,1\n100000000000000000,h,0,Write,4096,4096,1\n",
     ["line 2", "at most 1e+07 s"]),
    ("v3.log", "fio version 3 iolog\n0 f add\n0 f write 0 4096\n99999999999999999999 f write 0 4096\n",
     ["line 4", "at most 1e+07 s"]),
    ("blk.txt", "  8,0 0 1 0.000000000 1 D W 0 + 8 [x]\n  8,0 0 2 99999999999.000000000 1 D W 8 + 8 [x]\n",
     ["line 2", "at most 1e+07 s"]),
])
def test_huge_time_is_refused_with_its_line(tmp_path: Path, name: str, text: str, words: list[str]) -> None:
    r, db = trace_run(tmp_path, text, name=name)
    refused(r, *words)
    assert stored_runs(db) == 0


@pytest.mark.parametrize("speed, words", [("1e-9", ["--speed 1e-09", "0.001 to 1e+06"]),
                                          ("1e-300", ["--speed 1e-300", "0.001 to 1e+06"]),
                                          ("0.001", ["replayed at --speed 0.001", "at most 1e+07 s"])])
def test_speed_out_of_range_is_refused(tmp_path: Path, speed: str, words: list[str]) -> None:
    r, db = trace_run(tmp_path, "time_s,op,offset_bytes,length_bytes\n0,write,0,4096\n"
                                "100000,write,4096,4096\n", "--speed", speed)
    refused(r, *words)
    assert stored_runs(db) == 0


def test_idle_of_the_longest_documented_length_runs_in_bounded_memory(tmp_path: Path) -> None:
    db = tmp_path / "r.sqlite"
    # the drive at 2 GB on one channel: the idle period, not the drive's tables, is what grows
    small = ["user_capacity_gb=2", "nand.channels=1", "nand.blocks_per_plane=88", "slc.dynamic_max_gb=0.5"]
    r = run_cli("run", "idle", "--seconds", "1e7", *DRIVE, *(x for s in small for x in ("--set", s)),
                "--db", str(db), "--json", timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    assert stored_runs(db) == 1


@pytest.mark.parametrize("line, words", [
    ("0,write,9223372036854775807,4096", ["line 2", "past 2**63 bytes"]),  # int64 wrap
    ("0,write,18446744073709551616,4096", ["line 2", "past 2**63 bytes"]),  # >= 2**64
    ("0,write,0,9223372036854775808", ["line 2", "past 2**63 bytes"]),
])
def test_offsets_past_any_device_are_refused_with_their_line(tmp_path: Path, line: str, words) -> None:
    r, db = trace_run(tmp_path, f"time_us,op,offset_bytes,length_bytes\n{line}\n", "--wrap")
    refused(r, *words)
    assert stored_runs(db) == 0
    r, db = trace_run(tmp_path, f"time_us,op,offset_bytes,length_bytes\n{line}\n")
    refused(r, *words)
    assert stored_runs(db) == 0


def test_msr_offset_of_2_to_the_63_is_refused_with_its_line(tmp_path: Path) -> None:
    r, db = trace_run(tmp_path, "0,h,0,Write,9223372036854775808,4096,1\n", name="m.csv")
    refused(r, "line 1", "past 2**63 bytes")
    assert stored_runs(db) == 0


def test_gzip_bomb_without_newline_stops_at_the_line_limit(tmp_path: Path) -> None:
    f = tmp_path / "bomb.csv.gz"
    # 3 GiB of NUL bytes, 3 MB of gzip: 3072 gzip members of 1 MiB each (a gzip file may hold
    # several; any reader decompresses them as one stream), each compressed once, not 3072 times
    member = gzip.compress(b"\0" * (1 << 20), compresslevel=9)
    with open(f, "wb") as g:
        for _ in range(3072):
            g.write(member)
    db = tmp_path / "r.sqlite"
    r = run_cli("run", "trace", "--trace", str(f), "--format", "msr", *DRIVE, "--db", str(db), timeout=120)
    refused(r, "line 1", "longer than 4096 characters")
    assert stored_runs(db) == 0


def test_text_past_the_size_limit_is_refused(tmp_path: Path, monkeypatch) -> None:
    from ssdlab.traces import limits

    f = tmp_path / "t.csv.gz"
    with gzip.open(f, "wb") as g:
        g.write(b"0,h,0,Write,0,4096,1\n" * 200_000)
    monkeypatch.setattr(limits, "MAX_TEXT_BYTES", 1 << 20)
    import ssdlab.traces as traces

    monkeypatch.setattr(traces, "MAX_TEXT_BYTES", 1 << 20)
    with pytest.raises(traces.TraceError, match="GiB of text"):
        load(f, "msr")


def test_a_plain_csv_is_read_whole_with_progress(tmp_path: Path) -> None:
    f = tmp_path / "t.csv"
    f.write_bytes(b"time_us,op,offset_bytes,length_bytes\n" + b"".join(
        b"%d,read,%d,4096\n" % (i, i * 4096) for i in range(200_000)))
    seen: list[tuple[int, int]] = []
    s = load(f, "csv", progress=lambda done, size: seen.append((done, size)))
    assert len(s) == 200_000 and s.offset_bytes[-1] == 199_999 * 4096
    size = f.stat().st_size
    assert len(seen) > 1 and seen[-1] == (size, size) and all(d <= size for d, _ in seen)


def test_blank_lines_are_read_with_progress(tmp_path: Path) -> None:
    f = tmp_path / "nl.csv.gz"
    with gzip.open(f, "wb") as g:
        g.write(b"time_us,op,offset_bytes,length_bytes\n")
        for _ in range(64):
            g.write(b"\n" * (1 << 20))
        g.write(b"5,write,0,4096\n")
    seen: list[tuple[int, int]] = []
    s = load(f, "csv", progress=lambda done, size: seen.append((done, size)))
    assert len(s) == 1
    assert len(seen) > 1 and seen[-1][0] == seen[-1][1] == f.stat().st_size
    with pytest.raises(ValueError, match=r"line 67108866: time must be a number"):
        f2 = tmp_path / "nl2.csv.gz"
        with gzip.open(f2, "wb") as g:
            g.write(b"time_us,op,offset_bytes,length_bytes\n" + b"\n" * (1 << 26) + b"x,write,0,4096\n")
        load(f2, "csv")


def test_too_many_ios_is_refused(monkeypatch) -> None:
    from ssdlab.traces import limits

    monkeypatch.setattr(limits, "MAX_IOS", 3)
    with pytest.raises(ValueError, match="line 5: more than 3 I/Os"):
        load(Path(__file__).parents[1] / "data" / "traces" / "plain.csv", "csv")
