"""When garbage collection can have begun in random writes after a sequential fill.

A filled drive has free flash only in its spare area: the LBAs the test leaves unwritten
(--spare) and the drive's own over-provisioning. Until the random writes have used that
up, the drive writes into free blocks (the burst) and moves no valid pages, so no second
before then can be steady state, however flat it looks."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

# NAND comes in GiB and capacity is sold in GB: a drive with no extra spare still has
# 2^30 / 10^9 - 1 = 7.4 % more flash than LBAs, less some for the firmware's own blocks
OWN_SPARE_MIN = 0.07


def spare_floor_bytes(area: int, spare_pct: float) -> float:
    """The least spare area a drive can have when a test writes its first `area` bytes and
    leaves `spare_pct` % of its LBAs unwritten: those LBAs and OWN_SPARE_MIN of its capacity."""
    capacity = area / (1.0 - spare_pct / 100.0)
    return capacity * (1.0 + OWN_SPARE_MIN) - area


def gc_onset_s(series: Mapping[str, np.ndarray], block_size: int, spare_bytes: float) -> int | None:
    """The first second in which GC can have run (None: not in this phase): once the
    writes since the fill reach `spare_bytes`, and, where the drive counts the valid pages
    its GC moves (a simulated drive), not before the first second it moved any."""
    iops = np.nan_to_num(np.asarray(series["iops"], dtype=np.float64))  # a missing second: unknown, 0
    written = np.cumsum(iops) * block_size
    onset = int(np.searchsorted(written, spare_bytes, side="left"))
    if onset >= written.size:
        return None
    moves = series.get("gc_moves")
    if moves is not None and len(moves) == written.size:
        moved = np.flatnonzero(np.nan_to_num(np.asarray(moves, dtype=np.float64)) > 0)
        if not moved.size:
            return None
        onset = max(onset, int(moved[0]))
    return onset
