"""destroyer-like: shaped after AnandTech Storage Bench 2013 "The Destroyer", from its
published description: 38.83 M reads and 10.98 M writes, 1583 GB read and
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
from .shaping import offsets, sizes

DESCRIPTION = ("generated after the published statistics of AnandTech's The Destroyer "
               "(not the original trace)")
READS, WRITES = 38_830_000, 10_980_000
READ_BYTES, WRITE_BYTES = 1583 * 10**9, 876 * 10**9
SEQ_SHARE = 2 / 3
QUEUE_DEPTH = 6  # published average 5.5
DEFAULT_SCALE = 0.01  # 498 K I/Os, 24.6 GB: seconds on the simulator


def ios(scale: float) -> int:
    return round(READS * scale) + round(WRITES * scale)


def generate(scale: float, span_bytes: int, seed: int = 42) -> IoStream:
    rng = np.random.default_rng(seed)
    nr, nw = round(READS * scale), round(WRITES * scale)
    n = nr + nw
    op = np.full(n, WRITE, dtype=np.uint8)
    op[rng.choice(n, size=nr, replace=False)] = READ
    length = np.empty(n, dtype=np.int64)
    length[op == READ] = sizes(rng, nr, READ_BYTES * scale)
    length[op == WRITE] = sizes(rng, nw, WRITE_BYTES * scale)
    off = offsets(rng, length, round(n * SEQ_SHARE), span_bytes)
    s = IoStream(np.zeros(n, dtype=np.int64), op, off, length, format="builtin", has_time=False)
    s.default_qd = QUEUE_DEPTH
    s.notes.append(f"generated, not the original trace; closed loop at QD{QUEUE_DEPTH} unless --qd")
    return s
