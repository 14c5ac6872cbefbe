"""fio parity: does driving fio through ssdlab cost throughput?

Runs one job through ssdlab's FioTarget (job file with 1 s iops/bw/lat logs, the fine
histogram log, json+ output and the 1 s status stream that ssdlab parses live) and the same
job through plain fio (no logs, plain json), back to back on a loop device, in rounds
whose order alternates (ssdlab-fio, fio-ssdlab, ...: ABBA, so a slow drift cancels), and
prints the per-round IOPS ratios, their median (with a 95 % interval) and the ratio of the
means (expected within 3 %; --check fails when either is not, and when the interval is not
within 3 % either: a median inside by chance shows nothing).

The default job is 4 KiB random reads at QD4 on a loop device with direct I/O, backed by
a 1 GiB file in /dev/shm that ssdlab fills once:
- the "disk" is RAM, so the device adds no noise of its own (the virtual disk of the
  development VM scattered +-10 % from run to run, which hid any 3 % difference);
- direct I/O on the loop device (`losetup --direct-io=on`) skips the loop device's page
  cache, so every read goes through the loop driver to the backing file;
- reads leave the device as it was, so every round sees the same device.
A RAM-backed job is bound by the CPU: the I/O path (fio, the loop device's kernel worker)
competes with whatever else runs, so each run waits (--max-wait in all) until the machine
is idle (--quiet-pct of all CPUs), and a round counts only when other programs' CPU time
during both its runs stayed below that too (the machine's user time minus ours and
fio's, and every other process's user and system time: ssdlab's own work never
disqualifies a round). Rounds that do not count are shown
and left out of the verdict. `--backing-dir /var/tmp` puts the file on disk instead.

Needs root (loop devices) and fio.

    sudo .venv/bin/python benchmarks/fio_parity.py [--seconds 3] [--rounds 20] [--check]
"""

from __future__ import annotations

import argparse
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))

from ssdlab import phase as P  # noqa: E402
from ssdlab.fioformat import json_read as fio_output  # noqa: E402
from ssdlab.targets.fio import jobs as fio_job  # noqa: E402
from ssdlab.targets import open_target  # noqa: E402

MIB = 2**20
READ_PCT = {"randread": 100, "randwrite": 0}


def plain_fio(dev: str, engine: str, seconds: float, size: int, bs: int, qd: int, rw: str,
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
rw={rw}
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
    # the same IOPS as ssdlab's totals: all I/Os over the runtime
    return fio_output.totals_from_report(fio_output.final_report(r.stdout))["iops"]


def cpu_busy(seconds: float = 1.0) -> float:
    """The machine's CPU use over `seconds`, 0..1 (/proc/stat; there is no psutil here)."""
    def sample() -> tuple[int, int]:
        v = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:9]]
        return sum(v), v[3] + v[4]  # user .. steal; idle + iowait
    t0, i0 = sample()
    time.sleep(seconds)
    t1, i1 = sample()
    return 1.0 - (i1 - i0) / max(1, t1 - t0)


def others_user_s() -> float:
    """User CPU seconds of the machine minus ours and our children's (fio): other programs'
    work, plus steal time (a virtual machine's CPU taken by the host: as slowing as another
    program). Kernel time is left out, as the I/O path (loop worker, interrupts) is ours."""
    v = Path("/proc/stat").read_text().split()[1:9]  # user, nice, system, idle, iowait, irq, softirq, steal
    t = os.times()
    return (int(v[0]) + int(v[1]) + int(v[7])) / os.sysconf("SC_CLK_TCK") - t.user - t.children_user


def others_procs_s() -> dict[int, float]:
    """CPU seconds (user + system) of every process that is neither ours nor our
    children's (fio) nor a kernel thread: another program's system time (its own fio on
    its own loop device, say) counts too, which the machine's user time above misses."""
    me, hz, out = os.getpid(), os.sysconf("SC_CLK_TCK"), {}
    for pid in (int(x) for x in os.listdir("/proc") if x.isdigit()):
        try:
            f = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        ppid, flags = int(f[1]), int(f[6])
        if pid == me or ppid == me or ppid == 2 or pid == 2 or flags & 0x00200000:  # PF_KTHREAD
            continue
        out[pid] = (int(f[11]) + int(f[12])) / hz
    return out


def others_share(before: dict[int, float], after: dict[int, float], seconds: float) -> float:
    """Share of all CPUs other processes used between two `others_procs_s` snapshots
    (processes that started in between count from 0)."""
    used = sum(t - before.get(pid, 0.0) for pid, t in after.items())
    return used / (seconds * os.cpu_count())


class Quiet:
    """The loop device's I/O runs in a kernel worker at normal priority, so another
    program's CPU burst slows whichever side runs then, far beyond 3 %: before each run,
    wait (within a budget) until the machine is idle; during it, measure what others used."""

    def __init__(self, limit: float, budget_s: float):
        self.limit, self.deadline, self.waited = limit, time.monotonic() + budget_s, 0.0

    def run(self, fn):
        """fn()'s result, and whether other programs stayed below the limit while it ran."""
        t0 = time.monotonic()
        while cpu_busy() > self.limit and time.monotonic() < self.deadline:
            pass
        self.waited += time.monotonic() - t0
        u0, p0, t0 = others_user_s(), others_procs_s(), time.monotonic()
        r = fn()
        dt = time.monotonic() - t0
        share = (others_user_s() - u0) / (dt * os.cpu_count())
        return r, max(share, others_share(p0, others_procs_s(), dt)) <= self.limit


def summary(ours: list[float], plain: list[float]) -> tuple[float, float]:
    """Median of per-round ratios and ratio of means."""
    return (statistics.median(o / p for o, p in zip(ours, plain)),
            statistics.mean(ours) / statistics.mean(plain))


def median_interval(xs: list[float], alpha: float = 0.05) -> tuple[float, float]:
    """A distribution-free >= 95 % interval for the median (order statistics, sign test):
    per-round ratios are not normal, a busy moment gives a far outlier."""
    x, n, k = sorted(xs), len(xs), 0
    while 2 * sum(math.comb(n, i) for i in range(k + 1)) <= alpha * 2**n:
        k += 1
    return (x[k - 1], x[n - k]) if k else (x[0], x[-1])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=3.0)
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--size-mib", type=int, default=1024)
    ap.add_argument("--bs", type=int, default=4096)
    ap.add_argument("--qd", type=int, default=4)
    ap.add_argument("--rw", choices=tuple(READ_PCT), default="randread")
    ap.add_argument("--backing-dir", default="/dev/shm",
                    help="where the loop device's backing file goes (default RAM: /dev/shm)")
    ap.add_argument("--direct-io", action=argparse.BooleanOptionalAction, default=True,
                    help="loop device with direct I/O on its backing file (skips the page cache)")
    ap.add_argument("--plain-job", choices=("minimal", "same"), default="minimal",
                    help="plain fio runs a minimal job (no logs: ssdlab's whole overhead) or the very "
                         "job file ssdlab generates (only the Python driver's overhead)")
    ap.add_argument("--quiet-pct", type=float, default=5.0,
                    help="each run waits until the machine's CPU use is below this (percent of all "
                         "CPUs), and a round counts when other programs used less during both runs")
    ap.add_argument("--max-wait", type=float, default=600.0,
                    help="seconds to wait in all for other programs to stop before runs")
    ap.add_argument("--check", action="store_true",
                    help="exit 1 when the median ratio or the ratio of means of the quiet rounds is off "
                         "by more than 3 %%, 3 when the rounds cannot tell (the median's 95 %% interval "
                         "reaches beyond 3 %%, or fewer than 6 quiet rounds)")
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
    load0 = os.getloadavg()
    backing = tempfile.NamedTemporaryFile(dir=a.backing_dir, prefix="ssdlab-parity-", suffix=".img",
                                          delete=False)
    logdir = tempfile.mkdtemp(prefix="ssdlab-parity-logs-")
    dev = None
    try:
        # allocated, not sparse: no block allocation during the fill or the rounds
        os.posix_fallocate(backing.fileno(), 0, size)
        backing.close()
        dev = subprocess.run(["losetup", "--find", "--show", f"--direct-io={'on' if a.direct_io else 'off'}",
                              backing.name], capture_output=True, text=True, check=True).stdout.strip()
        engine = fio_job.pick_engine()
        ph = P.rand_io("parity", READ_PCT[a.rw], block_size=a.bs, queue_depth=a.qd, stop_seconds=a.seconds)
        with open_target(dev, destroy_data=dev) as t:  # our own scratch device
            t.run(P.seq_write("prefill", stop_bytes=size))  # both see a fully written device
            ours, plain, quiet = [], [], []
            q = Quiet(a.quiet_pct / 100.0, a.max_wait)
            same = None
            if a.plain_job == "same":
                same = fio_job.job_text(ph.resolve(size), dev, engine=engine,
                                        log_prefix=os.path.join(logdir, "p"))
            for i in range(a.rounds):
                order = ("ssdlab", "fio") if i % 2 == 0 else ("fio", "ssdlab")
                ok = True
                for who in order:
                    if who == "ssdlab":
                        r, k = q.run(lambda: t.run(ph))
                        ours.append(r.totals["iops"])
                    else:
                        # the target holds the device exclusively; plain fio does not need to
                        r, k = q.run(lambda: plain_fio(dev, engine, a.seconds, size, a.bs, a.qd, a.rw, same))
                        plain.append(r)
                    ok = ok and k
                quiet.append(ok)
                print(f"round {i + 1} ({' then '.join(order)}): ssdlab {ours[-1]:.0f} IOPS, plain fio "
                      f"{plain[-1]:.0f} IOPS, ratio {ours[-1] / plain[-1]:.4f}"
                      f"{'' if ok else ' (other programs ran: not counted)'}", flush=True)
    finally:
        if dev:
            subprocess.run(["losetup", "-d", dev], check=False)
        backing.close()
        os.unlink(backing.name)
        shutil.rmtree(logdir, ignore_errors=True)
    ratios = [o / p for o, p in zip(ours, plain)]
    load1 = os.getloadavg()
    print(f"plain fio job: {a.plain_job}; engine {engine}, {a.bs} B {a.rw} QD{a.qd}, {a.seconds:g} s x "
          f"{a.rounds} rounds (ABBA order) on {dev} ({a.size_mib} MiB in {a.backing_dir}, direct I/O "
          f"{'on' if a.direct_io else 'off'}); load average (1, 5 min) {load0[0]:.2f} {load0[1]:.2f} before, "
          f"{load1[0]:.2f} {load1[1]:.2f} after, on {os.cpu_count()} CPUs; waited {q.waited:.0f} s for "
          f"other work")
    print(f"per-round ratios {' '.join(f'{x:.3f}' for x in ratios)}")
    med, of_means = summary(ours, plain)
    print(f"all {len(ratios)} rounds: ssdlab mean {statistics.mean(ours):.0f} IOPS, plain fio mean "
          f"{statistics.mean(plain):.0f} IOPS; ratio ssdlab/fio median {med:.4f}, of means {of_means:.4f}")
    qo = [o for o, k in zip(ours, quiet) if k]
    qp = [p for p, k in zip(plain, quiet) if k]
    if len(qo) < 6:  # the fewest rounds that give a 95 % interval
        print(f"only {len(qo)} of {a.rounds} rounds ran on a quiet machine: too busy to resolve 3 %")
        return 3 if a.check else 0
    med, of_means = summary(qo, qp)
    lo, hi = median_interval([o / p for o, p in zip(qo, qp)])
    print(f"{len(qo)} quiet rounds: IOPS ratio ssdlab/fio median {med:.4f} ({(med - 1) * 100:+.2f} %, 95 % "
          f"interval {lo:.3f}..{hi:.3f}), ratio of means {of_means:.4f} ({(of_means - 1) * 100:+.2f} %)")
    if max(abs(med - 1), abs(of_means - 1)) > 0.03:
        print("outside 3 %")
        return 1 if a.check else 0
    if lo < 0.97 or hi > 1.03:
        # a median inside 3 % by chance is no evidence: the interval must be inside too
        print("within 3 %, but the rounds scatter too much to show it: not resolved")
        return 3 if a.check else 0
    print("within 3 %")
    return 0

if __name__ == "__main__":
    sys.exit(main())
