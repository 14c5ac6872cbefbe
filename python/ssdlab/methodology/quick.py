"""Quick synthetic tests, run the way the tools themselves run them: CrystalDiskMark (its
default and NVMe presets) and then AS SSD, on a purged drive.

CrystalDiskMark (hiyohiyo/CrystalDiskMark, DiskBench.cpp): it writes its test file (1 GiB
by default), then runs every read test and then every write test. Each test is one
unscored "Preparing" run followed by N scored runs back to back (N = 5 by default), and
the figure it shows is the best scored run. Between two tests (also between the last
read and the first write) it waits an interval, 5 s by default, doing nothing. Here:
N = --repeat (default 5), the interval --interval (default 5 s, 0 for none), each run
--seconds (default 2 s; CrystalDiskMark measures 5 s).

AS SSD: its own test file, 1 GB in a separate LBA range after CrystalDiskMark's, written
fresh; then Seq (16 MiB blocks over the file), 4K (QD1), 4K-64Thrd (64 threads at QD1)
and access time, in that order, read before write within each. Access time is the mean
latency of 4K QD1 random I/O on the test file (AS SSD reads 512 B over the whole drive;
on a purged simulated drive unmapped LBAs would answer without touching flash). AS SSD
runs once and shows what it measured; with N runs the whole procedure, fresh file
included, runs N times with the interval between runs, and its figures are the mean of
the runs. Score (methodology.md): read = 0.1 x seq + 4K + 4K-64Thrd (MB/s), write the
same; total = 0.15 x seq write + 0.1 x seq read + 2 x 4K read + 4K write + 4K-64Thrd write
+ 1.5 x 4K-64Thrd read, as the tool weighs them.

Every figure also comes with `<name>_mean`, `<name>_stdev` (sample standard deviation;
NaN after a single run, which has no spread) and, under `repeats`, every run, so clusters
stay visible.
"""

from __future__ import annotations

import re

import numpy as np

from .. import phase as ph
from ..phase import GB, KIB, PhaseResult
from .common import GIB, MIB, Options, area_bytes, area_too_small
from ..figures import lazy
from .test import Test

DEFAULT_SECONDS = 2
DEFAULT_INTERVAL = 5.0  # CrystalDiskMark's IntervalTime
SECONDS_HELP = "seconds per CrystalDiskMark run / AS SSD test"
TEST_FILE = GIB  # CrystalDiskMark's default test size
ASSSD_FILE = GB  # AS SSD: 1 GB
ASSSD_SEQ_BLOCK = 16 * MIB

# name: (pattern, block size, queue depth, jobs), in CrystalDiskMark's order: the default
# preset's four tests, then the NVMe preset's two others
CDM = {
    "cdm_seq1m_q8t1": ("seq", MIB, 8, 1),
    "cdm_seq1m_q1t1": ("seq", MIB, 1, 1),
    "cdm_rnd4k_q32t1": ("rand", 4 * KIB, 32, 1),
    "cdm_rnd4k_q1t1": ("rand", 4 * KIB, 1, 1),
    "cdm_seq128k_q32t1": ("seq", 128 * KIB, 32, 1),
    "cdm_rnd4k_q32t16": ("rand", 4 * KIB, 32, 16),
}
# AS SSD after its sequential test, in its order
ASSSD = {
    "asssd_4k": ("rand", 4 * KIB, 1, 1),
    "asssd_4k64": ("rand", 4 * KIB, 1, 64),
    "asssd_access": ("rand", 4 * KIB, 1, 1),
}
RUN_RE = re.compile(r"^(?P<test>(cdm|asssd)_\w+?)_(?P<rw>read|write)#(?P<run>\d+)$")


def interval_s(opts: Options) -> float:
    return DEFAULT_INTERVAL if opts.interval is None else float(opts.interval)


def files(capacity: int, opts: Options) -> tuple[int, int, int]:
    """(CrystalDiskMark file length, AS SSD file offset, AS SSD file length): two separate
    ranges at the start of the area; a small area is split between them."""
    area = area_bytes(capacity, opts)
    cdm = min(TEST_FILE, area // 2 // MIB * MIB)
    asssd = min(ASSSD_FILE, area - cdm) // ASSSD_SEQ_BLOCK * ASSSD_SEQ_BLOCK or (area - cdm)
    if cdm <= 0 or asssd <= 0:
        raise area_too_small("the quick tests (two test files of at least 1 MiB)", 2 * MIB, capacity, area, opts)
    return cdm, cdm, asssd


def test_file(capacity: int, opts: Options) -> int:
    return files(capacity, opts)[0]


def _io(name: str, pattern: str, read_pct: int, bs: int, qd: int, jobs: int, offset: int,
        length: int, **stop) -> ph.Phase:
    return ph.Phase(kind="io", name=name, pattern=pattern, read_pct=read_pct, block_size=bs,
                    queue_depth=qd, jobs=jobs, offset=offset, length=length, **stop)


def cdm_phases(n: int, opts: Options) -> list[ph.Phase]:
    """Test file; every read test, then every write test; each test: run #0 (preparing,
    unscored) then runs #1..#N; the interval between tests."""
    secs, gap = opts.secs(DEFAULT_SECONDS), interval_s(opts)
    out = [ph.seq_write("test_file", block_size=MIB, queue_depth=1, offset=0, length=n,
                        stop_bytes=n)]
    k = 0
    for rw, read_pct in (("read", 100), ("write", 0)):
        for name, (pattern, bs, qd, jobs) in CDM.items():
            if k and gap > 0:
                out.append(ph.idle(gap, name=f"cdm_interval_{k}"))
            k += 1
            out += [_io(f"{name}_{rw}#{run}", pattern, read_pct, bs, qd, jobs, 0, n,
                        stop_seconds=secs) for run in range(opts.repeat + 1)]
    return out


def asssd_phases(off: int, n: int, opts: Options) -> list[ph.Phase]:
    """N runs of AS SSD, each on a freshly written file: Seq, 4K, 4K-64Thrd, access time,
    read before write."""
    secs, gap = opts.secs(DEFAULT_SECONDS), interval_s(opts)
    out: list[ph.Phase] = []
    for run in range(1, opts.repeat + 1):
        if gap > 0:  # after CrystalDiskMark, and between AS SSD runs
            out.append(ph.idle(gap, name=f"asssd_interval_{run}"))
        out.append(ph.seq_write(f"asssd_file#{run}", block_size=MIB, queue_depth=1, offset=off,
                                length=n, stop_bytes=n))
        for rw, read_pct in (("read", 100), ("write", 0)):
            out.append(_io(f"asssd_seq_{rw}#{run}", "seq", read_pct, ASSSD_SEQ_BLOCK, 1, 1,
                           off, n, stop_bytes=n))
        for name, (pattern, bs, qd, jobs) in ASSSD.items():
            for rw, read_pct in (("read", 100), ("write", 0)):
                out.append(_io(f"{name}_{rw}#{run}", pattern, read_pct, bs, qd, jobs, off, n,
                               stop_seconds=secs))
    return out


def phases(capacity: int, opts: Options) -> list[ph.Phase]:
    cdm, off, asssd = files(capacity, opts)
    return [ph.purge(), *cdm_phases(cdm, opts), *asssd_phases(off, asssd, opts)]


def runs(results) -> dict[tuple[str, str], dict[int, PhaseResult]]:
    """{(test, rw): {run: result}} of the measured phases (run 0: CrystalDiskMark's
    unscored preparing run)."""
    out: dict[tuple[str, str], dict[int, PhaseResult]] = {}
    for res in results:
        m = RUN_RE.match(res.phase.name)
        if m:
            out.setdefault((m["test"], m["rw"]), {})[int(m["run"])] = res
    return out


def cdm_values(by_run: dict[tuple[str, str], dict[int, PhaseResult]]) -> dict[str, list[float]]:
    """Every scored run of every CrystalDiskMark test, MB/s (and IOPS for random tests)."""
    vals: dict[str, list[float]] = {}
    for name, (pattern, *_r) in CDM.items():
        for rw in ("read", "write"):
            scored = [r for k, r in sorted(by_run.get((name, rw), {}).items()) if k > 0]
            vals[f"{name}_{rw}_mbps"] = [float(r.totals["mbps"]) for r in scored]
            if pattern == "rand":
                vals[f"{name}_{rw}_iops"] = [float(r.totals["iops"]) for r in scored]
    return vals


def asssd_run(r: dict[str, PhaseResult]) -> dict[str, float]:
    """One AS SSD run's figures and score; `r` maps "<test>_<rw>" to its result."""
    m: dict[str, float] = {}
    for rw in ("read", "write"):
        m[f"asssd_seq_{rw}_mbps"] = float(r[f"asssd_seq_{rw}"].totals["mbps"])
        m[f"asssd_4k_{rw}_mbps"] = float(r[f"asssd_4k_{rw}"].totals["mbps"])
        m[f"asssd_4k64_{rw}_mbps"] = float(r[f"asssd_4k64_{rw}"].totals["mbps"])
        m[f"asssd_access_{rw}_ms"] = float(r[f"asssd_access_{rw}"].latency["mean_us"]) / 1000.0
        m[f"asssd_score_{rw}"] = (0.1 * m[f"asssd_seq_{rw}_mbps"] + m[f"asssd_4k_{rw}_mbps"]
                                  + m[f"asssd_4k64_{rw}_mbps"])
    # the tool's total is no sum of its read and write scores: it weighs 4K reads twice,
    # 4K-64Thrd reads 1.5 times and sequential writes 0.15 (reads 0.1)
    m["asssd_score_total"] = (0.15 * m["asssd_seq_write_mbps"] + 0.1 * m["asssd_seq_read_mbps"]
                              + 2 * m["asssd_4k_read_mbps"] + m["asssd_4k_write_mbps"]
                              + m["asssd_4k64_write_mbps"] + 1.5 * m["asssd_4k64_read_mbps"])
    return m


def asssd_values(by_run: dict[tuple[str, str], dict[int, PhaseResult]]) -> dict[str, list[float]]:
    per_run: dict[int, dict[str, PhaseResult]] = {}
    for (test, rw), rs in by_run.items():
        if test.startswith("asssd_"):
            for k, res in rs.items():
                per_run.setdefault(k, {})[f"{test}_{rw}"] = res
    whole = {f"{t}_{rw}" for t in ("asssd_seq", *ASSSD) for rw in ("read", "write")}
    # an AS SSD run an interruption cut short has no score: only whole runs count
    figures = [asssd_run(per_run[k]) for k in sorted(per_run) if whole <= set(per_run[k])]
    return {name: [f[name] for f in figures] for name in (figures[0] if figures else {})}


def spread(v: np.ndarray) -> float:
    """The runs' sample standard deviation: NaN for one run, which has no spread (null in
    JSON, "-" in tables: never a 0 that reads as agreement), 0 for runs that agree to the
    bit (np.std's rounding gives 2.8e-13 for three runs of 1638.4)."""
    if v.size < 2:
        return float("nan")
    return 0.0 if np.all(v == v[0]) else float(v.std(ddof=1))


def analyze(results, opts: Options) -> dict:
    by_run = runs(results)
    out: dict = {}
    repeats: dict[str, list[float]] = {}
    for values, shown in ((cdm_values(by_run), np.max), (asssd_values(by_run), np.mean)):
        for name, vals in values.items():
            v = np.asarray(vals, dtype=np.float64)
            if not v.size:
                continue
            out[name] = float(shown(v))  # what the tool shows: CDM the best run, AS SSD the mean
            out[f"{name}_mean"] = float(v.mean())
            out[f"{name}_stdev"] = spread(v)
            repeats[name] = [float(x) for x in v]
    out["repeats"] = repeats
    return out


TEST = Test(
    name="quick",
    title="Quick synthetic tests",
    phases=phases,
    analyze=analyze,
    figures=lazy("quick"),
    default_seconds=DEFAULT_SECONDS,
    seconds_help=SECONDS_HELP,
    uses=frozenset({"spare", "repeat", "interval"}),
    partial_metrics=True,
    cost=2.2,
    # the scatter of the repeated runs, not a figure of the drive: a real drive's moves with
    # the host and the moment far beyond a tolerance (and 0 when the runs agree)
    unfitted=("*_stdev",),
)
