"""QD1 latency from published fio logs of a built-in profile's own drive, and from a
review's QD1 test written as a fio job: the job (jobs/*.fio) run on the simulated drive
with `ssdlab run fio`, and each percentile of fio's completion latency (clat) compared with
the simulated latency (the figures: figures/<drive>.toml, measures fio_clat and fio_iops).
The simulator has no host-side submission time, so a published percentile is taken as the
source's clat percentile plus its mean submission latency (lat mean - clat mean, 1.2-2 us);
a maximum, one rare event, passes within a factor of 2 (three runs of one job gave 362, 753
and 830 us).

The drives' state in the sources is not stated (a laptop's and a desktop's drive in use):
the jobs run on a filled drive left idle for 10 minutes, so the data read was written long
before, not just now into the SLC cache."""

from __future__ import annotations

from pathlib import Path

from .figure import RunKey

JOBS = Path(__file__).with_name("jobs")
PREFIX = "fio:"


def run_key(job: str) -> RunKey:
    """The validate run of job file jobs/`job`.fio on the filled drive."""
    return (PREFIX + job, 0.0, None, 1, ())


def job_file(test: str) -> Path | None:
    """The job file a validate run names, None if the run is a methodology test."""
    return JOBS / f"{test[len(PREFIX):]}.fio" if test.startswith(PREFIX) else None


def test_of(test: str) -> str:
    """The methodology test a validate run runs: `fio` for a job file's run."""
    return "fio" if test.startswith(PREFIX) else test
