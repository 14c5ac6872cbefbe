"""A trace's offsets replay as the file gives them (docs/methodology-trace.md, "Partitions
and offsets"): blkparse's sectors are the whole disk's, also in a trace of one partition,
whose remap (`A`) lines are not I/O; a fio iolog's offsets are those of the file fio wrote."""

from __future__ import annotations

from pathlib import Path

from ssdlab.traces import READ, WRITE, load

# blktrace -d /dev/sda2 (the partition starts at sector 2097152): each I/O is remapped to
# the disk (A) before it is queued (Q) and issued (D)
PARTITION = """\
  8,0    1        1     0.000000000  1234  A   W 2099200 + 8 <- (8,2) 2048
  8,0    1        2     0.000001000  1234  Q   W 2099200 + 8 [dd]
  8,0    1        3     0.000002000  1234  G   W 2099200 + 8 [dd]
  8,0    1        4     0.000010000  1234  D   W 2099200 + 8 [dd]
  8,0    1        5     0.000100000     0  C   W 2099200 + 8 [0]
  8,0    1        6     0.001000000  1234  A   R 2099208 + 8 <- (8,2) 2056
  8,0    1        7     0.001001000  1234  Q   R 2099208 + 8 [dd]
  8,0    1        8     0.001010000  1234  D   R 2099208 + 8 [dd]
  8,0    1        9     0.001100000     0  C   R 2099208 + 8 [0]
"""


def test_a_partitions_blkparse_trace_keeps_the_disks_sectors(tmp_path: Path) -> None:
    f = tmp_path / "sda2.txt"
    f.write_text(PARTITION)
    s = load(f)
    assert list(s.op) == [WRITE, READ]
    assert list(s.offset_bytes) == [2099200 * 512, 2099208 * 512]  # not 2048 and 2056 sectors
    assert list(s.length_bytes) == [4096, 4096]


def test_a_fio_iolog_keeps_its_files_offsets(tmp_path: Path) -> None:
    f = tmp_path / "sda2.iolog"
    f.write_text("fio version 3 iolog\n0 /dev/sda2 add\n0 /dev/sda2 open\n"
                 "10 /dev/sda2 write 1048576 4096\n20 /dev/sda2 read 1052672 4096\n"
                 "30 /dev/sda2 close\n")
    s = load(f)
    assert list(s.op) == [WRITE, READ]
    assert list(s.offset_bytes) == [1048576, 1052672]  # from the partition's start, as fio wrote them
