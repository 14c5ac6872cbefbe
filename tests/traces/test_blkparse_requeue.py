"""blkparse: a request the driver gave back (R, requeue) and dispatched again is replayed
once, as blkparse's own summary counts it; a negative sector is named as such."""

from __future__ import annotations

from pathlib import Path

from bounded import refused, run_cli, stored_runs
from ssdlab.traces import WRITE, load

# 10 writes dispatched; 3 of them requeued and dispatched again (13 D events), as the
# block layer does when the device is busy (blkparse: "Write Dispatches: 13, Writes
# Requeued: 3", 10 completed)
EVENTS = []
seq = 0
for i in range(10):
    sector = 2048 + 8 * i
    t = i * 0.001
    EVENTS.append(f"  8,0    0  {seq + 1:>5}  {t:.9f}  100  Q   W {sector} + 8 [fio]")
    EVENTS.append(f"  8,0    0  {seq + 2:>5}  {t + 1e-6:.9f}  100  D   W {sector} + 8 [fio]")
    seq += 2
    if i in (2, 5, 7):
        EVENTS.append(f"  8,0    0  {seq + 1:>5}  {t + 2e-6:.9f}    0  R   W {sector} + 8 [0]")
        EVENTS.append(f"  8,0    0  {seq + 2:>5}  {t + 5e-6:.9f}  100  D   W {sector} + 8 [fio]")
        seq += 2
    EVENTS.append(f"  8,0    0  {seq + 1:>5}  {t + 9e-5:.9f}    0  C   W {sector} + 8 [0]")
    seq += 1


def test_requeued_dispatches_are_replayed_once(tmp_path: Path) -> None:
    f = tmp_path / "requeue.txt"
    f.write_text("\n".join(EVENTS) + "\n")
    assert sum(" D " in e for e in EVENTS) == 13
    s = load(f)
    assert s.format == "blkparse"
    assert len(s) == 10 and int((s.op == WRITE).sum()) == 10
    assert sorted(s.offset_bytes.tolist()) == [(2048 + 8 * i) * 512 for i in range(10)]
    # the requeued ones go at their second dispatch
    assert s.time_ns[2] == 2_005_000 - 1_000  # from the first D, at 1 µs
    assert any("requeued" in n for n in s.notes)


def test_negative_sector_is_named(tmp_path: Path) -> None:
    f = tmp_path / "neg.txt"
    f.write_text("  8,0    0  1  0.000000000  100  D   W -8 + 8 [fio]\n")
    db = tmp_path / "r.sqlite"
    r = run_cli("run", "trace", "--trace", str(f), "--drive", "sim:sn520-128", "--db", str(db))
    refused(r, "line 1", "sector -8 + 8", ">= 0")
    assert stored_runs(db) == 0


def _peak_per_io(f: Path, n: int) -> float:
    import tracemalloc

    tracemalloc.start()
    try:
        s = load(f)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert len(s) == n
    return peak / n


def test_requeue_tracking_keeps_memory_per_io_near_the_arrays(tmp_path: Path, monkeypatch) -> None:
    """Dispatches are remembered only while they may still be requeued (until their
    completion, C, and at most the latest blkparse.IN_FLIGHT): a trace of N distinct
    dispatches holds about its arrays (25 bytes an I/O, and the copy made at the end), not
    a Python entry of ~250 bytes for each of them; its Q events are dropped once it has D."""
    n = 60_000
    f = tmp_path / "many.txt"
    with open(f, "w") as out:
        for i in range(n):
            t = f"{i // 1000}.{i % 1000:03d}000000"
            out.write(f"  8,0    0 {3 * i + 1:>7} {t}  100  Q   W {8 * i} + 8 [fio]\n"
                      f"  8,0    0 {3 * i + 2:>7} {t}  100  D   W {8 * i} + 8 [fio]\n")
            if i >= 4:  # four in flight
                out.write(f"  8,0    0 {3 * i + 3:>7} {t}    0  C   W {8 * (i - 4)} + 8 [0]\n")
    assert _peak_per_io(f, n) < 150  # before: 290
    # a trace without completions: the latest dispatches only
    g = tmp_path / "no-completions.txt"
    with open(g, "w") as out:
        for i in range(n):
            out.write(f"  8,0    0 {i + 1:>7} {i // 1000}.{i % 1000:03d}000000  100  D   W {8 * i} + 8 [fio]\n")
    from ssdlab.traces import blkparse

    monkeypatch.setattr(blkparse, "IN_FLIGHT", 1000)
    assert _peak_per_io(g, n) < 150


def test_a_request_requeued_while_another_of_the_same_sectors_is_in_flight(tmp_path: Path) -> None:
    # blkparse's own output: two writes of the same 8 sectors dispatched, the first
    # completed, the second requeued and dispatched again. blkparse counts "Write
    # Dispatches: 3, Writes Requeued: 1, Writes Completed: 2": two writes
    f = tmp_path / "same.txt"
    f.write_text("""\
  8,0    0        1     0.000000000   700  Q   W 100 + 8 [(null)]
  8,0    0        2     0.000001000   700  D   W 100 + 8 [(null)]
  8,0    0        3     0.000002000   700  Q   W 100 + 8 [(null)]
  8,0    0        4     0.000003000   700  D   W 100 + 8 [(null)]
  8,0    0        5     0.000050000   700  C   W 100 + 8 [0]
  8,0    0        6     0.000060000   700  R   W 100 + 8 [0]
  8,0    0        7     0.000070000   700  D   W 100 + 8 [(null)]
  8,0    0        8     0.000090000   700  C   W 100 + 8 [0]
""")
    s = load(f)
    assert len(s) == 2 and s.op.tolist() == [WRITE, WRITE]
    assert s.time_ns.tolist() == [0, 69_000]  # the first, and the second at its last dispatch
    assert any(n.startswith("blkparse: 1 requeued") for n in s.notes)


def test_dispatches_of_the_same_sectors_remembered_are_the_latest_few(tmp_path: Path, monkeypatch) -> None:
    """What is remembered of one request's dispatches stays bounded in a trace without
    completions: the latest SAME_IN_FLIGHT, which alone a requeue can undo."""
    from ssdlab.traces import blkparse

    monkeypatch.setattr(blkparse, "SAME_IN_FLIGHT", 4)
    lines = [f"  8,0 0 {i + 1} 0.{i:09d} 100 D W 0 + 8 [fio]" for i in range(6)]
    lines += [f"  8,0 0 {i + 7} 0.{i + 6:09d} 0 R W 0 + 8 [0]" for i in range(6)]
    lines += [f"  8,0 0 {i + 13} 0.{i + 12:09d} 100 D W 0 + 8 [fio]" for i in range(6)]
    f = tmp_path / "same.txt"
    f.write_text("\n".join(lines) + "\n")
    s = load(f)
    assert len(s) == 12 - 4  # the first two dispatches were forgotten: their requeues undo nothing
    assert any(n.startswith("blkparse: 4 requeued") for n in s.notes)
