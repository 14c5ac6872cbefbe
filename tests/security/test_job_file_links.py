"""A fio job file (`ssdlab run fio JOBFILE`) is read once, by its own path, never through a
link another user planted (in /tmp, say), and the text the run stores is the text it
compiled: reading the file again by name after the compile let another user swap it for
a link to a file only root may read, whose text root then stored in the results."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from bounded import refused, run_cli, stored_runs
from otheruser import as_nobody, needs_other_user, sticky  # noqa: F401 (fixtures)

pytest.importorskip("ssdlab._sim")

JOB = "[w]\nrw=randwrite\nbs=4k\nsize=16m\nruntime=1\ntime_based=1\n"


@needs_other_user
def test_a_job_file_through_another_users_link_is_refused_unread(sticky: Path, tmp_path: Path) -> None:
    d = tmp_path / "root-only"
    d.mkdir(mode=0o700)
    (d / "job.fio").write_text("; SECRET of a file only root reads\n" + JOB)
    link = sticky / "job.fio"
    as_nobody("ln", "-s", str(d / "job.fio"), str(link))
    assert os.lstat(link).st_uid != 0
    db = tmp_path / "r.sqlite"
    r = run_cli("run", "fio", str(link), "--drive", "sim:sn520-128", "--db", str(db))
    line = refused(r, str(link), "symlink")
    assert "SECRET" not in r.stderr + r.stdout, line
    assert stored_runs(db) == 0


@needs_other_user
def test_an_include_through_another_users_link_is_refused(sticky: Path, tmp_path: Path) -> None:
    (sticky / "secret.fio").write_text("; SECRET\n" + JOB)  # root's, in the job's own directory
    as_nobody("ln", "-s", str(sticky / "secret.fio"), str(sticky / "inc.fio"))
    job = sticky / "job.fio"
    job.write_text("include inc.fio\n")
    from ssdlab.fiojob import FioJobError
    from ssdlab.fiojob.compile import compile_job

    with pytest.raises(FioJobError, match="symlink"):
        compile_job(job, 1 << 30)


def test_the_stored_job_text_is_the_text_compiled(tmp_path: Path) -> None:
    job = tmp_path / "job.fio"
    job.write_text(JOB)
    from ssdlab.fiojob.compile import compile_job
    from ssdlab.methodology.fio_run import TEST, FioJobOptions

    parsed = FioJobOptions.compiled(str(job), compile_job(job, 1 << 30), "empty")
    job.unlink()
    job.symlink_to(tmp_path / "elsewhere")  # replaced after the compile (by another user, in /tmp)
    (tmp_path / "elsewhere").write_text("SECRET\n")
    assert TEST.options is not None
    stored = TEST.options.stored(parsed, {"job": str(job)})
    assert stored == {"job": {"file": str(job), "text": JOB}}
