"""The specification's test grids, shared by the tests and their figures: the IOPS test's
R/W mix x block size matrix and the DIRTH test's thread x queue-depth grid."""

from __future__ import annotations

from ...phase import KIB
from . import common as C

MIXES = (100, 95, 65, 50, 35, 5, 0)  # IOPS: read %
BLOCKS = (1024 * KIB, 128 * KIB, 64 * KIB, 32 * KIB, 16 * KIB, 8 * KIB, 4 * KIB)  # IOPS
THREADS = (32, 16, 8, 4, 2, 1)  # DIRTH
QDS = (32, 16, 8, 4, 2, 1)  # DIRTH: queue depth per thread


def iops_label(read_pct: int, bs: int) -> str:
    return f"rw{read_pct}_bs{C.bs_label(bs)}"


def dirth_label(t: int, q: int) -> str:
    return f"t{t}q{q}"
