"""QD1 latency from published fio logs of a built-in profile's own drive, and from a
review's QD1 test written as a fio job: the job (jobs/*.fio) run on the simulated drive
with `ssdlab run fio`, and each percentile of fio's completion latency (clat) compared with
the simulated latency.
The simulator has no host-side submission time, so a published percentile is taken as the
source's clat percentile plus its mean submission latency (lat mean - clat mean, 1.2-2 us).

The drives' state in the sources is not stated (a laptop's and a desktop's drive in use):
the jobs run on a filled drive left idle for 10 minutes, so the data read was written long
before, not just now into the SLC cache."""

from __future__ import annotations

from pathlib import Path
from typing import Callable

from .figure import Ctx, Figure, RunKey, on_testbed, ratio

JOBS = Path(__file__).with_name("jobs")
PREFIX = "fio:"
TOL_MAX = 2.0  # a maximum is one rare event: three runs of one job gave 362, 753 and 830 us


def run_key(job: str) -> RunKey:
    """The validate run of job file jobs/`job`.fio on the filled drive."""
    return (PREFIX + job, 0.0, None, 1, ())


def job_file(test: str) -> Path | None:
    """The job file a validate run names, None if the run is a methodology test."""
    return JOBS / f"{test[len(PREFIX):]}.fio" if test.startswith(PREFIX) else None


def test_of(test: str) -> str:
    """The methodology test a validate run runs: `fio` for a job file's run."""
    return "fio" if test.startswith(PREFIX) else test


def _direction(c: Ctx, run: RunKey, job: str, rw: str) -> dict | None:
    """Direction `rw` of fio job `job` in the run's fio JSON, None if it did no I/O."""
    doc = c.runs[(c.drive, run)]["metrics"]["fio"]
    return next((j[rw] for j in doc["jobs"] if j["jobname"] == job and j[rw]["total_ios"]), None)


def clat(run: RunKey, job: str, rw: str, pct: str) -> Callable[[Ctx], float | None]:
    """The simulated latency (us) of fio job `job`, direction `rw`: percentile `pct` of
    fio's JSON ("50.000000"), "max" or "mean"."""
    def f(c: Ctx) -> float | None:
        d = _direction(c, run, job, rw)
        if d is None:
            return None
        lat = d["clat_ns"]
        return float(lat[pct] if pct in ("max", "mean") else lat["percentile"][pct]) / 1e3
    return f


def iops(run: RunKey, job: str, rw: str) -> Callable[[Ctx], float | None]:
    """The IOPS of fio job `job`, direction `rw`, in the simulated run."""
    def f(c: Ctx) -> float | None:
        d = _direction(c, run, job, rw)
        return None if d is None else float(d["iops"])
    return f


def _write_rate(drive: str, job_file_name: str, job: str, published: float, source: str) -> Figure:
    """QD1 random writes at a steady rate for the whole job: no slowdown within it."""
    run = run_key(job_file_name)
    return Figure(drive, "QD1 4K write IOPS (30 s)", run, iops(run, job, "write"), value=published, unit="IOPS",
                  how=f"ssdlab run fio calibration/jobs/{job_file_name}.fio --state full: job {job}, write iops",
                  source=source + f": write iops {published:g}", kind="latency")


PCTS = (("p50", "50.000000"), ("p99", "99.000000"), ("p99.9", "99.900000"), ("max", "max"))


def _figures(drive: str, job_file_name: str, job: str, rw: str, published: dict[str, float],
             slat: float, source: str, mix: str = "") -> list[Figure]:
    run = run_key(job_file_name)
    out = []
    for name, pct in PCTS:
        if name not in published:
            continue
        v = published[name] + slat
        label = f"QD1 4K {rw} {name}" + (f" ({mix})" if mix else "")
        how = (f"ssdlab run fio calibration/jobs/{job_file_name}.fio --state full: job {job}, "
               f"{rw} clat {name} (us)")
        src = f"{source}: clat {name} {published[name]:g} us + {slat:.2f} us submission"
        if name == "max":
            out.append(Figure(drive, label, run, clat(run, job, rw, pct), lo=v / TOL_MAX, hi=v * TOL_MAX,
                              unit="us", how=how, source=src, kind="latency"))
        else:
            out.append(Figure(drive, label, run, clat(run, job, rw, pct), value=v, unit="us", how=how,
                              source=src, kind="latency"))
    return out


# The host grants no memory buffer: a DRAM-less controller's mapping cache is then its own
# SRAM (about 1 MiB; from 0.5 to 2 MiB the BG4's ratio below moves 1.48-1.54).
NO_HMB = ("mapping.kind=sram", "mapping.cache_mib=1")


def _hmb_figures() -> list[Figure]:
    run = run_key("anandtech-burst-random-read")
    off = on_testbed(run, NO_HMB)
    mean = clat(run, "burst-random-read", "read", "mean")
    return [Figure(d, "QD1 4K read without HMB / with", run, ratio(clat(off, "burst-random-read", "read", "mean"), mean),
                   value=1 / 0.6, unit="ratio", needs=((d, off),), kind="latency",
                   how="ssdlab run fio calibration/jobs/anandtech-burst-random-read.fio --state full: job "
                       "burst-random-read, mean read latency with `--set " + " --set ".join(NO_HMB)
                       + "` over the mean with the host memory buffer",
                   source="AnandTech, The Toshiba BG4 review (1 TB, 2019), burst 4kB random read at QD1 over 16 GB: "
                          "\"Without HMB, it's about 40% slower\" (0.6 of the IOPS, 1.67 x the mean latency); the "
                          "mapping cache covers the span at every capacity")
            for d in ("bg4-128", "bg4-256")]


def figures() -> list[Figure]:
    r2 = ("fio 3.28 on a Samsung PM981a 512 GB (MZVLB512HBJQ-000L7), libaio, raw 2 GB partition, "
          "30 s (github.com/fiumad/Advanced-Computer-Systems @3ca14ba2, proj3/fio_results/"
          "test_combination_bs4k_rw{}_qd1.json)")
    r1 = ("fio 3.36 on a Samsung PM981a 256 GB (MZVLB256HBHQ-00000), io_uring, 8 GiB file on ext4, "
          "5 s ramp + 30 s, first of three runs (github.com/AIALRA-0/ECSE-4320-Advanced-Computer-Systems "
          "@609ac2f5, Project3 SSD/results/qd1_test/rand{}_qd1_1.json; the three runs: {})")
    t1 = ("fio 3.16 on a Toshiba XG6 256 GB (KXG60ZNV256G), libaio, raw 512 MB partition, 512 MiB per job "
          "(each block once), the sweep's first jobs (github.com/anotherAsad/AdvancedComputerSystems @3c5819e1, "
          "Project3/out_dir/outfile_blk4k_qlen1_rw{}.json)")
    return [
        *_hmb_figures(),
        *_figures("pm981a-512", "pm981a-raw-qd1", "rw100", "read",
                  {"p50": 67.072, "p99": 84.480, "p99.9": 123.392, "max": 2960.277}, 73.5959 - 71.7818,
                  r2.format(100)),
        _write_rate("pm981a-512", "pm981a-raw-qd1", "rw0", 65895.6, r2.format(0)),
        *_figures("pm981a-512", "pm981a-raw-qd1", "rw0", "write",
                  {"p50": 11.584, "p99": 15.552, "p99.9": 24.960, "max": 3290.680}, 14.2402 - 12.2822,
                  r2.format(0)),
        *_figures("pm981a-512", "pm981a-raw-qd1", "rw70", "read", {"p99": 544.768}, 86.4631 - 84.6081,
                  r2.format(70) + ", the reads of a 70/30 random mix", mix="70/30 mix"),
        *_figures("pm981a-256", "pm981a-ext4-qd1", "randread", "read",
                  {"p50": 74.240, "p99": 98.816, "p99.9": 154.624, "max": 829.608}, 79.4077 - 77.724,
                  r1.format("read", "p99 96.8-105.0, p99.9 154.6-160.8, max 362-830 us")),
        _write_rate("pm981a-256", "pm981a-ext4-qd1", "randwrite", 66657.4,
                    r1.format("write", "66 657 / 66 448 / 65 950 IOPS")),
        *_figures("pm981a-256", "pm981a-ext4-qd1", "randwrite", "write",
                  {"p50": 12.096, "p99": 30.336, "p99.9": 92.672, "max": 2567.010}, 14.7962 - 13.577,
                  r1.format("write", "p99 30.3-31.4, p99.9 92.7-99.8, max 2567-2970 us")),
        *_figures("xg6-256", "xg6-raw-qd1", "rw100", "read",
                  {"p50": 97.792, "p99": 201.728, "p99.9": 473.088, "max": 4283.380}, 115.374 - 106.608,
                  t1.format("100_0")),
        *_figures("xg6-256", "xg6-raw-qd1", "rw0", "write",
                  {"p50": 13.120, "p99": 23.424, "p99.9": 63.232, "max": 237.495}, 16.535 - 14.030,
                  t1.format("0_100")),
    ]
