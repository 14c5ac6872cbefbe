"""destroyer-like: shaped after AnandTech Storage Bench 2013 "The Destroyer", from its
published description (issue 17): 38.83 M reads and 10.98 M writes, 1583 GB read and
876 GB written, average queue depth about 5.5, about two thirds of the I/Os sequential.
NOT the original trace: a generated stream that matches those statistics, deterministic
by seed. What is matched (at scale 1; counts and volumes scale with SCALE):

- read and write counts exactly; read and written bytes to within one I/O: sizes are a
  mix of 4 KiB and 128 KiB, in the proportion that gives the published mean read size
  (40.8 KB) and write size (79.8 KB);
- the sequential share (an I/O starting where the previous one ended) to within one I/O
  of 2/3, reads and writes interleaved at random;
- the queue depth: the stream has no times; it replays closed-loop at QD 6 by default (the
  whole queue depth nearest the published average of 5.5; `--qd` changes it).

Not matched (not published): the size distribution beyond its mean, the footprint (random
I/Os land anywhere on the drive), the arrival times and idle periods, trims and flushes.
"""

from __future__ import annotations

import numpy as np

from ..stream import READ, WRITE, IoStream

DESCRIPTION = ("generated after the published statistics of AnandTech's The Destroyer "
               "(not the original trace)")
READS, WRITES = 38_830_000, 10_980_000
READ_BYTES, WRITE_BYTES = 1583 * 10**9, 876 * 10**9
SEQ_SHARE = 2 / 3
QUEUE_DEPTH = 6  # published average 5.5
SMALL, LARGE = 4096, 131072
DEFAULT_SCALE = 0.01  # 498 K I/Os, 24.6 GB: seconds on the simulator


def ios(scale: float) -> int:
    return round(READS * scale) + round(WRITES * scale)


def _sizes(rng: np.random.Generator, n: int, total: float) -> np.ndarray:
    """n sizes of SMALL or LARGE bytes summing to within one LARGE-SMALL of `total`."""
    k = int(round((total - n * SMALL) / (LARGE - SMALL)))
    k = min(max(k, 0), n)
    out = np.full(n, SMALL, dtype=np.int64)
    out[rng.choice(n, size=k, replace=False)] = LARGE
    return out


def generate(scale: float, span_bytes: int, seed: int = 42) -> IoStream:
    rng = np.random.default_rng(seed)
    nr, nw = round(READS * scale), round(WRITES * scale)
    n = nr + nw
    op = np.full(n, WRITE, dtype=np.uint8)
    op[rng.choice(n, size=nr, replace=False)] = READ
    length = np.empty(n, dtype=np.int64)
    length[op == READ] = _sizes(rng, nr, READ_BYTES * scale)
    length[op == WRITE] = _sizes(rng, nw, WRITE_BYTES * scale)
    # which I/Os continue the previous one (the first cannot)
    seq = np.zeros(n, dtype=bool)
    seq[1 + rng.choice(n - 1, size=min(n - 1, round(n * SEQ_SHARE)), replace=False)] = True
    slots = span_bytes // SMALL
    rand_off = rng.integers(0, slots - LARGE // SMALL, size=n, dtype=np.int64) * SMALL
    # offset: random at each non-sequential I/O, then advancing by the lengths before it
    # (cumulative sums per run of sequential I/Os)
    start = ~seq
    run_id = np.cumsum(start) - 1
    run_base = rand_off[start]
    ends = np.cumsum(length)
    before_run = (ends - length)[start]  # bytes before each run's first I/O
    off = run_base[run_id] + (ends - length) - before_run[run_id]
    # a run reaching the end of the span wraps to its start (rare: runs are short)
    off = off % (span_bytes - LARGE)
    off -= off % SMALL
    s = IoStream(np.zeros(n, dtype=np.int64), op, off, length, format="builtin", has_time=False)
    s.default_qd = QUEUE_DEPTH
    s.notes.append(f"generated, not the original trace; closed loop at QD{QUEUE_DEPTH} unless --qd")
    return s
