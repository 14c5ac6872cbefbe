"""The specification's test grids, shared by the tests and their figures: the IOPS test's
R/W mix x block size matrix and the DIRTH test's thread count x queue depth grid."""

from __future__ import annotations

from ...phase import KIB
from . import common as C

MIXES = (100, 95, 65, 50, 35, 5, 0)  # IOPS: read %, the outer loop
# IOPS: the inner loop, largest first; 0.5 KiB last, on drives with 512-byte blocks only
BLOCKS = (1024 * KIB, 128 * KIB, 64 * KIB, 32 * KIB, 16 * KIB, 8 * KIB, 4 * KIB)
THREADS = (32, 16, 8, 6, 4, 2, 1)  # DIRTH: thread counts, highest demand first
QDS = (32, 16, 8, 6, 4, 2, 1)  # DIRTH: queue depth per thread


def iops_blocks(po: C.PtsOptions) -> tuple[int, ...]:
    return BLOCKS + ((C.SMALL_BLOCK,) if po.small_blocks else ())


def iops_label(read_pct: int, bs: int) -> str:
    return f"rw{read_pct}_bs{C.bs_label(bs)}"


def mix_label(read_pct: int) -> str:
    """An R/W mix as the specification writes it: % read / % write."""
    return f"{read_pct}/{100 - read_pct}"


def dirth_label(t: int, q: int) -> str:
    return f"t{t}q{q}"
