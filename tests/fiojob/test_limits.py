"""A job file asks the simulator for no more than it may give, checked before anything is
built, run or stored: jobs and sizes counted first (exit 2, one line), values too large for
any size or time refused as such, virtual time bounded as `--seconds` is; a long, mostly
idle job keeps its memory (idle intervals cost nothing, its logs have a budget); includes
stay in the job file's directory and their text is never shown; `${NAME}` expands only the
variables the user names."""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import time
from pathlib import Path

import pytest
from fiojobs import SMALL, job, refused, run_fio

SETS = [x for s in SMALL for x in ("--set", s)]


@pytest.mark.parametrize("body,words", [
    # 4 095 sections x numjobs=1024: counted from the options before any job is built
    ("".join(f"[j{i}]\nrw=read\nsize=1m\nnumjobs=1024\n" for i in range(4095)), ("over 4096 jobs",)),
    ("[a]\nrw=randread\nsize=1m\nbsrange=1-1t\n", ("bsrange=", "multiples of 512", "64 MiB")),
    ("[a]\nrw=randread\nsize=1m\nbsrange=512-1t\n", ("bsrange=", "64 MiB")),
    ("[a]\nrw=randread\nbsrange=4k-64m\nnumjobs=1024\nsize=1m\n", ("block size is larger than the job's size",)),
    ("[a]\nioengine=libaio\nrw=randread\nsize=1m\niodepth=65536\nnumjobs=32\n", ("iodepth add up to", "in flight")),
])
def test_job_counts_and_sizes_are_refused_before_anything_is_built(tmp_path, body, words):
    t = time.monotonic()
    refused(tmp_path, run_fio(tmp_path, job(tmp_path, body)), *words)
    assert time.monotonic() - t < 60  # counted, not built (it took 5 minutes and 7 GB)


HUGE = "1" + "0" * 20  # 1e20
DIGITS = "9" * 400


@pytest.mark.parametrize("line,words", [
    (f"runtime={HUGE}", ("runtime=", "116 days")),
    (f"runtime={DIGITS}", ("runtime", "400-digit")),
    (f"thinktime={HUGE}", ("thinktime=", "116 days")),
    (f"ba={HUGE}", ("ba=", "too large")),
    (f"rate={HUGE}", ("rate=", "too large")),
    (f"rate={DIGITS}", ("rate", "400-digit")),
    (f"size={DIGITS}", ("size", "400-digit")),
    (f"iodepth={DIGITS}", ("iodepth", "400-digit")),
    (f"startdelay={HUGE}ms", ("startdelay=", "116 days")),
])
def test_huge_values_are_refused_before_the_store(tmp_path, line, words):
    refused(tmp_path, run_fio(tmp_path, job(tmp_path, f"[a]\nrw=read\nbs=4k\nsize=1m\n{line}\n")), *words)


def test_huge_skips_are_refused(tmp_path):
    refused(tmp_path, run_fio(tmp_path, job(tmp_path, f"[a]\nrw=read:{HUGE}\nbs=4k\nsize=1m\n")),
            "rw", "too large")


@pytest.mark.parametrize("body,words", [
    ("[a]\nrw=read\nbs=4k\nsize=1m\nruntime=200000000\ntime_based\n", ("runtime=", "116 days")),
    # a rate that needs more virtual time than any run is given (8 GiB at 1 B/s: 272 years)
    ("[a]\nrw=write\nbs=4k\nrate=1\n", ("needs", "virtual time", "give runtime=")),
    ("[a]\nrw=read\nbs=4k\nsize=1g\nthinktime=100s\n", ("needs", "virtual time")),
    ("".join(f"[s{i}]\nstonewall\nrw=read\nsize=1m\nruntime=5000000\ntime_based\n" for i in range(3)),
     ("stonewalled jobs", "virtual time")),
])
def test_virtual_time_is_bounded_as_seconds_is(tmp_path, body, words):
    refused(tmp_path, run_fio(tmp_path, job(tmp_path, body)), *words)


def test_a_long_idle_job_with_fine_logs_keeps_its_memory(tmp_path):
    """One I/O a second for 30 000 s of virtual time, logged every ms: 30 000 intervals
    hold I/O, 30 million do not. They took a sample each (5.5 GB at 100 000 s); now an
    interval without I/O costs nothing, in the job's logs and in the drive's rows."""
    f = job(tmp_path, "[a]\nrw=randread\nbs=4k\nsize=64m\nrate_iops=1\nruntime=30000s\ntime_based\n"
                      "log_avg_msec=1\nwrite_bw_log=a\nwrite_lat_log=a\n")
    logs = tmp_path / "logs"
    logs.mkdir()
    exe = Path(sys.executable).parent / "ssdlab"
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    r = subprocess.run([str(exe), "run", "fio", str(f), "--drive", "sim:tlc-256", *SETS, "--db",
                        str(tmp_path / "r.sqlite"), "--output-format", "json", "--log-dir", str(logs)],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    rss_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    assert rss_mb < 600 or before / 1024 >= 600, rss_mb  # under 600 MB (it was 1.7 GB here)
    j = json.loads(r.stdout)["jobs"][0]
    assert j["read"]["total_ios"] == 30000 and j["read"]["bw_samples"] == 30000
    assert len((logs / "a_bw.1.log").read_text().splitlines()) == 30000  # entries where I/O was


def test_includes_stay_in_the_job_files_directory_and_are_never_echoed(tmp_path):
    secret = "root:$6$not-for-your-eyes:19000:0:99999:7:::"
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "shadow").write_text(secret + "\n")
    jobs = tmp_path / "jobs"
    jobs.mkdir()
    for body in (f"[a]\nrw=read\nsize=1m\ninclude {outside / 'shadow'}\n",
                 "[a]\nrw=read\nsize=1m\ninclude ../outside/shadow\n"):
        r = run_fio(tmp_path, job(jobs, body))
        refused(tmp_path, r, "include", "job file's directory")
        assert "not-for-your-eyes" not in r.output
    (jobs / "link.fio").symlink_to(outside / "shadow")  # a link inside leading out
    r = run_fio(tmp_path, job(jobs, "[a]\nrw=read\nsize=1m\ninclude link.fio\n"))
    refused(tmp_path, r, "include", "job file's directory")
    # inside the directory, a file that is no job file: its line number, never its text
    (jobs / "notes.fio").write_text(secret + "\n")
    r = run_fio(tmp_path, job(jobs, "[a]\nrw=read\nsize=1m\ninclude notes.fio\n"))
    refused(tmp_path, r, "notes.fio:1", "not an option line")
    assert "not-for-your-eyes" not in r.output
    r = run_fio(tmp_path, job(jobs, secret + "\n[a]\nrw=read\nsize=1m\n"))
    refused(tmp_path, r, "job.fio:1", "not an option line")
    assert "not-for-your-eyes" not in r.output


def test_variables_expand_only_when_named(tmp_path, monkeypatch):
    monkeypatch.setenv("SSDLAB_SECRET_TOKEN", "hunter2")
    f = job(tmp_path, "[a]\nrw=read\nbs=4k\nsize=1m\ndescription=${SSDLAB_SECRET_TOKEN}\n")
    r = run_fio(tmp_path, f)
    refused(tmp_path, r, "${SSDLAB_SECRET_TOKEN}", "--env SSDLAB_SECRET_TOKEN")
    assert "hunter2" not in r.output
    r = run_fio(tmp_path, f, "--env", "SSDLAB_SECRET_TOKEN", "--output-format", "json")
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["jobs"][0]["job options"]["description"] == "hunter2"
    r = run_fio(tmp_path, f, "--env", "SSDLAB_SECRET_TOKEN=given", "--output-format", "json")
    assert json.loads(r.stdout)["jobs"][0]["job options"]["description"] == "given"
