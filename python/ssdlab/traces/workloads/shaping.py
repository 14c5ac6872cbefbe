"""Shaping helpers of the generated workloads: I/O sizes that hit a published volume, and
offsets that make a chosen share of the I/Os sequential (each continuing the one before)."""

from __future__ import annotations

import numpy as np

SMALL, LARGE = 4096, 131072


def sizes(rng: np.random.Generator, n: int, total: float) -> np.ndarray:
    """n sizes of SMALL or LARGE bytes summing to within one LARGE-SMALL of `total`."""
    k = int(round((total - n * SMALL) / (LARGE - SMALL)))
    k = min(max(k, 0), n)
    out = np.full(n, SMALL, dtype=np.int64)
    out[rng.choice(n, size=k, replace=False)] = LARGE
    return out


def offsets(rng: np.random.Generator, length: np.ndarray, n_seq: int, span_bytes: int) -> np.ndarray:
    """Offsets for I/Os of `length` bytes: `n_seq` of them (never the first) start where
    the previous one ended, the others at a random 4 KiB-aligned place of the span."""
    n = length.size
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    seq = np.zeros(n, dtype=bool)
    seq[1 + rng.choice(n - 1, size=min(n - 1, n_seq), replace=False)] = True
    rand_off = rng.integers(0, span_bytes // SMALL - LARGE // SMALL, size=n, dtype=np.int64) * SMALL
    # random at each run's first I/O, then advancing by the lengths before it
    start = ~seq
    run_id = np.cumsum(start) - 1
    ends = np.cumsum(length)
    before_run = (ends - length)[start]  # bytes before each run's first I/O
    off = rand_off[start][run_id] + (ends - length) - before_run[run_id]
    # a run reaching the end of the span wraps to its start (rare: runs are short)
    off = off % (span_bytes - LARGE)
    return off - off % SMALL
