"""Trace replay speed on the simulator (target: >= 1,000,000 I/Os per wall-second
for a 4 KiB random trace), printed as one table.

The trace: 4 KiB random I/Os over the whole 256 GB drive (sim:tlc-256), handed to the
simulator in one call (_sim.Drive.replay). Rows: closed loop QD32 on the empty drive
(70 % reads), the same on the full drive after 1.5 drive writes of random 4 KiB writes
(GC steady state: every write moves data), 100 % writes there, and open loop (as
recorded) at 50,000 I/Os per second (the drive keeps up) and at 200,000 (overloaded: I/Os
wait at the host for the drive's queue slots). Each figure is the median of 3 replays of 2 M I/Os.
Also: parsing speed of a plain-CSV trace (read whole and parsed in Rust), for scale.
"""

from __future__ import annotations

import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

N = 2_000_000
TARGET = 1_000_000


def trace(cap: int, read_frac: float, seed: int):
    rng = np.random.default_rng(seed)
    off = rng.integers(0, cap // 4096, N).astype(np.uint64) * 4096
    op = (rng.random(N) >= read_frac).astype(np.uint8)  # 0 read, 1 write
    return op, off, np.full(N, 4096, np.uint64)


def rate(d, t, op, off, ln, qd: int) -> tuple[float, float]:
    walls, iops = [], 0.0
    for _ in range(3):
        t0 = time.perf_counter()
        r = d.replay(t, op, off, ln, queue_depth=qd)
        walls.append(time.perf_counter() - t0)
        iops = r["totals"]["iops"]
    return N / statistics.median(walls), iops


def main() -> None:
    from ssdlab import _sim, profiles
    from ssdlab.phase import purge, rand_io, seq_write

    d = _sim.Drive(profiles.load_text("tlc-256"))
    cap = int(d.info()["user_bytes"])
    zeros = np.zeros(N, np.uint64)
    rows = []
    d.run(purge().resolve(cap))
    rows.append(("empty drive, QD32, 70 % read", *rate(d, zeros, *trace(cap, 0.7, 1), 32)))
    d.run(seq_write("fill", stop_bytes=cap).resolve(cap))
    d.run(rand_io("pre", 0, stop_bytes=int(1.5 * cap) // 4096 * 4096).resolve(cap))
    rows.append(("full drive (GC steady), QD32, 70 % read", *rate(d, zeros, *trace(cap, 0.7, 2), 32)))
    rows.append(("full drive (GC steady), QD32, 100 % write", *rate(d, zeros, *trace(cap, 0.0, 3), 32)))
    timed = (np.arange(N, dtype=np.uint64) * 20_000)  # 50 K I/Os per second: the drive keeps up
    rows.append(("full drive, open loop 50 K IOPS, 70 % read", *rate(d, timed, *trace(cap, 0.7, 4), 0)))
    # offered 3x what the drive does: most I/Os wait at the host
    rows.append(("full drive, open loop overloaded (200 K IOPS offered)",
                 *rate(d, timed // 4, *trace(cap, 0.7, 5), 0)))
    print(f"# trace replay speed: 4 KiB random, {N:,} I/Os per replay (target >= {TARGET:,}/s)")
    print("case\treplay I/Os per wall-second\tsimulated IOPS\tmeets target")
    for name, r, iops in rows:
        print(f"{name}\t{r:,.0f}\t{iops:,.0f}\t{'yes' if r >= TARGET else 'NO'}")
    # parsing, for scale
    from ssdlab.traces import load

    with tempfile.TemporaryDirectory() as tmp:
        f = Path(tmp) / "t.csv"
        n = 500_000
        op, off, _ = trace(cap, 0.7, 5)
        with open(f, "w") as fh:
            fh.write("time_us,op,offset_bytes,length_bytes\n")
            fh.writelines(f"{i * 5},{'rw'[o]},{x},4096\n" for i, o, x in zip(range(n), op[:n], off[:n]))
        t0 = time.perf_counter()
        load(f)
        print(f"parse plain CSV\t{n / (time.perf_counter() - t0):,.0f} lines per second")


if __name__ == "__main__":
    main()
