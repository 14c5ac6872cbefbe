"""fio parity: does driving fio through ssdlab cost throughput?

Runs one job (4 KiB random writes, QD32, N seconds) through ssdlab's FioTarget (job file
with 1 s iops/bw/lat logs, the fine histogram log, json+ output and the 1 s status
stream) and the same job through plain fio (no logs, plain json), back to back on a loop
device, several times alternating the order, and prints the ratio of their IOPS
(expected within 3 %).

Needs root (loop devices) and fio. The loop device is backed by a sparse file in
/dev/shm by default (memory: steady, so the comparison shows ssdlab's own overhead,
not disk noise); --backing-dir puts it elsewhere.

    sudo .venv/bin/python benchmarks/fio_parity.py [--seconds 10] [--rounds 3] [--check]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))

from ssdlab import phase as P  # noqa: E402
from ssdlab.targets import fio_job  # noqa: E402
from ssdlab.targets.fio import FioTarget  # noqa: E402

MIB = 2**20


def plain_fio(dev: str, engine: str, seconds: float, size: int, bs: int, qd: int,
              same_job: str | None = None) -> float:
    job = same_job or f"""[global]
ioengine={engine}
direct=1
filename={dev}
refill_buffers=1
randrepeat=0
norandommap=1
random_generator=tausworthe64
group_reporting=1
[plain]
rw=randwrite
bs={bs}
iodepth={qd}
offset=0
size={size}
runtime={int(seconds * 1000)}ms
time_based=1
"""
    with tempfile.NamedTemporaryFile("w", suffix=".fio", delete=False) as fh:
        fh.write(job)
    try:
        r = subprocess.run(["fio", "--output-format=json", fh.name], capture_output=True, text=True,
                           check=True)
    finally:
        os.unlink(fh.name)
    rep = json.loads(r.stdout[r.stdout.index("{"):])
    w = rep["jobs"][0]["write"]
    return w["total_ios"] / (w["runtime"] / 1000.0)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=5.0)
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--size-mib", type=int, default=512)
    ap.add_argument("--bs", type=int, default=4096)
    ap.add_argument("--qd", type=int, default=32)
    ap.add_argument("--backing-dir", default="/dev/shm")
    ap.add_argument("--plain-job", choices=("minimal", "same"), default="minimal",
                    help="plain fio runs a minimal job (no logs: ssdlab's whole overhead) or the very "
                         "job file ssdlab generates (only the Python driver's overhead)")
    ap.add_argument("--check", action="store_true", help="exit 1 when the ratio is off by more than 3 %%")
    a = ap.parse_args()
    if os.geteuid() != 0:
        print("fio_parity: needs root for a loop device", file=sys.stderr)
        return 2
    fio_job.fio_binary()
    # both sides (fio inherits it) get the CPU first on a busy machine: the comparison is
    # about ssdlab's overhead, not about who else runs
    try:
        os.nice(-20)
    except OSError:
        pass
    size = a.size_mib * MIB
    backing = tempfile.NamedTemporaryFile(dir=a.backing_dir, prefix="ssdlab-parity-", suffix=".img",
                                          delete=False)
    backing.truncate(size)
    backing.close()
    logdir = tempfile.mkdtemp(prefix="ssdlab-parity-logs-")
    dev = subprocess.run(["losetup", "--find", "--show", backing.name], capture_output=True,
                         text=True, check=True).stdout.strip()
    try:
        engine = fio_job.pick_engine()
        ph = P.rand_io("parity", 0, block_size=a.bs, queue_depth=a.qd, stop_seconds=a.seconds)
        with FioTarget(dev) as t:
            t.run(P.seq_write("prefill", stop_bytes=size))  # both see a fully written device
            ours, plain = [], []
            for i in range(a.rounds):
                order = ("ssdlab", "fio") if i % 2 == 0 else ("fio", "ssdlab")
                for who in order:
                    if who == "ssdlab":
                        r = t.run(ph)
                        ours.append(r.totals["iops"])
                    else:
                        # the target holds the device exclusively; plain fio does not need to
                        same = None
                        if a.plain_job == "same":
                            same = fio_job.job_text(ph.resolve(size), dev, engine=engine,
                                                    log_prefix=os.path.join(logdir, "p"))
                        plain.append(plain_fio(dev, engine, a.seconds, size, a.bs, a.qd, same))
                print(f"round {i + 1}: ssdlab {ours[-1]:.0f} IOPS, plain fio {plain[-1]:.0f} IOPS, "
                      f"ratio {ours[-1] / plain[-1]:.4f}", flush=True)
        ratios = [o / p for o, p in zip(ours, plain)]
        ratio = statistics.median(ratios)
        load = os.getloadavg()[0]
        print(f"plain fio job: {a.plain_job}; engine {engine}, {a.bs} B random writes QD{a.qd}, {a.seconds:g} s x {a.rounds} rounds "
              f"(order alternating) on {dev} ({a.size_mib} MiB in {a.backing_dir}); load average {load:.1f} "
              f"on {os.cpu_count()} CPUs")
        print(f"ssdlab mean {statistics.mean(ours):.0f} IOPS, plain fio mean {statistics.mean(plain):.0f} IOPS; "
              f"per-round ratios {min(ratios):.3f}..{max(ratios):.3f}")
        q = statistics.quantiles(ratios, n=4) if len(ratios) >= 4 else [min(ratios), ratio, max(ratios)]
        print(f"ratio of means {statistics.mean(ours) / statistics.mean(plain):.4f}; per-round ratios "
              f"interquartile {q[0]:.3f}..{q[2]:.3f} (a spread wider than a few % means the machine "
              "is too busy to resolve 3 %)")
        print(f"IOPS ratio ssdlab/fio (median of rounds): {ratio:.4f} ({(ratio - 1) * 100:+.2f} %)")
        if a.check and abs(ratio - 1) > 0.03:
            return 1
        return 0
    finally:
        subprocess.run(["losetup", "-d", dev], check=False)
        os.unlink(backing.name)
        shutil.rmtree(logdir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
