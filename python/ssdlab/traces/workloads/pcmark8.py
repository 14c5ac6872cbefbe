"""pcmark8-*-like: shaped after the ten application traces of Futuremark's PCMark 8
Storage test, from the per-trace statistics Tom's Hardware published ("How we test
storage", 2015): sequential and random reads, sequential and random writes (counts), and
the data read and written. NOT the original traces: generated streams that match those
statistics, deterministic by seed. What is matched (at scale 1; counts and volumes scale):

- the four counts exactly: a sequential read (write) starts where the previous read
  (write) ended, the random ones anywhere on the drive; reads and writes interleaved at
  random;
- read and written bytes to within one I/O: sizes are 4 KiB or 128 KiB in the proportion
  that gives each trace's mean read and write size.

Not matched (not published): arrival times and idle periods (PCMark replays the recorded
gaps; these streams replay closed loop at QD1 unless --qd), the size distribution beyond
its mean, the footprint, trims and flushes.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..stream import READ, WRITE, IoStream
from .shaping import offsets, sizes

MB = 10**6
QUEUE_DEPTH = 1  # not published; desktop application traces are mostly at depth 1-2


@dataclass(frozen=True)
class Pcmark8Trace:
    name: str
    seq_reads: int
    rand_reads: int
    seq_writes: int
    rand_writes: int
    read_bytes: int
    write_bytes: int
    DEFAULT_SCALE: float = 1.0

    @property
    def DESCRIPTION(self) -> str:  # noqa: N802 (the workload interface's name)
        return (f"generated after the published statistics of PCMark 8 Storage's {self.name} "
                "trace (not the original trace)")

    def ios(self, scale: float) -> int:
        return (round(self.seq_reads * scale) + round(self.rand_reads * scale)
                + round(self.seq_writes * scale) + round(self.rand_writes * scale))

    def generate(self, scale: float, span_bytes: int, seed: int = 42) -> IoStream:
        rng = np.random.default_rng(seed)
        parts = []
        for code, n_seq, n_rand, volume in ((READ, self.seq_reads, self.rand_reads, self.read_bytes),
                                            (WRITE, self.seq_writes, self.rand_writes, self.write_bytes)):
            n_seq, n = round(n_seq * scale), round(n_seq * scale) + round(n_rand * scale)
            length = sizes(rng, n, volume * scale)
            parts.append((code, length, offsets(rng, length, n_seq, span_bytes)))
        (r_op, r_len, r_off), (w_op, w_len, w_off) = parts
        n = r_len.size + w_len.size
        # interleave at random, each direction keeping its own order (its runs stay runs)
        is_read = np.zeros(n, dtype=bool)
        is_read[rng.choice(n, size=r_len.size, replace=False)] = True
        op = np.where(is_read, r_op, w_op).astype(np.uint8)
        length = np.empty(n, dtype=np.int64)
        off = np.empty(n, dtype=np.int64)
        length[is_read], off[is_read] = r_len, r_off
        length[~is_read], off[~is_read] = w_len, w_off
        s = IoStream(np.zeros(n, dtype=np.int64), op, off, length, format="builtin", has_time=False)
        s.default_qd = QUEUE_DEPTH
        s.notes.append(f"generated, not the original trace; closed loop at QD{QUEUE_DEPTH} unless --qd")
        return s


# (sequential reads, random reads, sequential writes, random writes, MB read, MB written)
TRACES = {key: Pcmark8Trace(name, a, b, c, d, r * MB, w * MB) for key, name, a, b, c, d, r, w in (
    ("photoshop-light", "Adobe Photoshop (light)", 1508, 17525, 18342, 1743, 313, 2336),
    ("photoshop-heavy", "Adobe Photoshop (heavy)", 4277, 18655, 44742, 2065, 468, 5640),
    ("illustrator", "Adobe Illustrator", 1036, 21923, 682, 532, 373, 89),
    ("indesign", "Adobe InDesign", 2359, 22207, 4874, 927, 401, 624),
    ("after-effects", "Adobe After Effects", 1772, 17793, 86, 500, 311, 16),
    ("word", "Microsoft Word", 152, 4302, 748, 205, 107, 95),
    ("excel", "Microsoft Excel", 72, 3148, 119, 87, 73, 15),
    ("powerpoint", "Microsoft PowerPoint", 56, 3441, 147, 107, 83, 21),
    ("wow", "World of Warcraft", 1415, 14927, 10, 659, 390, 5),
    ("battlefield3", "Battlefield 3", 5782, 43487, 218, 431, 887, 28),
)}
