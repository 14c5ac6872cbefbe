"""`run fio --log-dir DIR`: the simulator opens a per-I/O log file again by its name in DIR
each time its buffer fills (a run of 16384 writes opened its latency log three times), so
in a directory another user may rename entries in (writable by others and not sticky), they
could swap it between two opens for a FIFO (the run waits for ever) or, where
fs.protected_hardlinks is 0, a second name of a file of root's, which the run then appends
to. Such a DIR is refused in one line before anything runs, as a report directory is; a
sticky one (as /tmp) and one of the caller's own are written as before."""

from __future__ import annotations

import clirun
from nbdserve import one_line_exit_2

JOB = "[a]\nrw=randwrite\nbs=4k\nsize=8m\nwrite_lat_log=a\n"
SMALL = ["--drive", "sim:tlc-256", "--set", "user_capacity_gb=0.5"]


def run_fio(tmp_path, logs):
    job = tmp_path / "a.fio"
    job.write_text(JOB)
    return clirun.cli("run", "fio", str(job), *SMALL, "--log-dir", str(logs), "--db", str(tmp_path / "r.sqlite"))


def test_a_log_directory_others_may_write_is_refused_before_the_run(tmp_path):
    logs = tmp_path / "shared"
    logs.mkdir()
    logs.chmod(0o777)
    one_line_exit_2(run_fio(tmp_path, logs), f"--log-dir {logs}", "may be written by users other than")
    assert list(logs.iterdir()) == [] and not (tmp_path / "r.sqlite").exists()


def test_a_sticky_or_private_log_directory_is_written(tmp_path):
    for mode in (0o1777, 0o700):
        logs = tmp_path / f"logs{mode:o}"
        logs.mkdir()
        logs.chmod(mode)
        r = run_fio(tmp_path, logs)
        assert r.returncode == 0, r.stderr
        assert (logs / "a_clat.1.log").stat().st_size > 0
