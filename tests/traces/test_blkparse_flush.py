"""blkparse: a flush asked for with data (RWBS `F` first: a preflush, as a journal commit
sends) is a flush and then the data, whichever events are replayed."""

from __future__ import annotations

from pathlib import Path

import pytest

from ssdlab.traces import FLUSH, OP_NAMES, READ, WRITE, TraceError, load

# blkparse's own output for a device-mapper volume (bio-based: Q and C events, no D); the
# third request is a preflush + FUA write, the fifth a flush with no data
DM = """\
253,0    0        1     0.000000000   700  Q  WS 2048 + 8 [(null)]
253,0    0        2     0.000050000   700  C  WS 2048 + 8 [0]
253,0    0        3     0.000100000   700  Q FWFS 4096 + 8 [(null)]
253,0    0        4     0.000180000   700  C FWFS 4096 + 8 [0]
253,0    0        5     0.000200000   700  Q FWS [(null)]
253,0    0        6     0.000260000   700  C FWS 0 [0]
253,0    0        7     0.000300000   700  Q  RM 8192 + 32 [(null)]
253,0    0        8     0.000340000   700  C  RM 8192 + 32 [0]
CPU0 (dm-0):
"""


def test_a_queued_preflush_write_is_a_flush_then_the_write(tmp_path: Path) -> None:
    f = tmp_path / "dm.txt"
    f.write_text(DM)
    s = load(f)
    assert [OP_NAMES[o] for o in s.op] == ["write", "flush", "write", "flush", "read"]
    # as many flushes as requests asked for one (an independent count: RWBS starting with F)
    asked = sum(1 for x in DM.splitlines() if x.split()[5:6] == ["Q"] and x.split()[6].startswith("F"))
    assert int((s.op == FLUSH).sum()) == asked == 2
    assert s.time_ns.tolist() == [0, 100_000, 100_000, 200_000, 300_000]
    assert s.offset_bytes.tolist() == [2048 * 512, 0, 4096 * 512, 0, 8192 * 512]
    assert s.length_bytes.tolist() == [4096, 0, 4096, 0, 16384]
    assert s.line is not None and s.line.tolist() == [1, 3, 3, 5, 7]


def test_a_requeued_preflush_write_is_replayed_once(tmp_path: Path) -> None:
    f = tmp_path / "d.txt"
    f.write_text("  8,0    0  1  0.000000000  100  D FWS 2048 + 8 [fio]\n"
                 "  8,0    0  2  0.000010000    0  R FWS 2048 + 8 [0]\n"
                 "  8,0    0  3  0.000020000  100  D FWS 2048 + 8 [fio]\n"
                 "  8,0    0  4  0.000090000    0  C FWS 2048 + 8 [0]\n"
                 "  8,0    0  5  0.000100000  100  D   R 0 + 8 [fio]\n")
    s = load(f)
    assert s.op.tolist() == [FLUSH, WRITE, READ]
    assert s.time_ns.tolist() == [0, 0, 80_000]
    assert any(n.startswith("blkparse: 1 requeued dispatches") for n in s.notes)


def test_a_trace_of_completions_only_names_the_events_it_needs(tmp_path: Path) -> None:
    # `blkparse -a complete`: every request, but only when it completed
    f = tmp_path / "c.txt"
    f.write_text("".join(x + "\n" for x in DM.splitlines() if " C " in x))
    with pytest.raises(TraceError, match=r"line 1: .*4 events.*none is D \(issued\) or Q \(queued\)"):
        load(f)


def test_a_blktrace_binary_file_is_refused_naming_blkparse(tmp_path: Path) -> None:
    import struct

    # what blktrace writes (DEV.blktrace.CPU): its records, not blkparse's text
    f = tmp_path / "sda.blktrace.0"
    f.write_bytes(struct.pack("<IIQQIIIIIHH", 0x65617407, 1, 0, 2048, 4096, 1 | (0x112 << 16),
                              700, 8 << 20, 0, 0, 0))
    for fmt in (None, "blkparse"):
        with pytest.raises(TraceError, match=r"sda.blktrace.0: blktrace's binary output: give "
                           r"blkparse's text \(blkparse -i sda > trace.txt\)"):
            load(f, fmt)
