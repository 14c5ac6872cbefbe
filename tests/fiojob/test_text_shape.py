"""The normal output's lines in the order and shape fio prints them (stat.c
show_thread_status_normal, show_ddir_status, show_clat_percentiles, show_latencies), each
job run by fio 3.33 (null engine) and by ssdlab: numbers (which differ: fio's null engine
takes no time) read as `#`, latency units as `U`; fio's host lines (cpu, disk stats) left
out, as ssdlab has no host to report. The lines fio prints before its jobs run (each job's
description, `Starting N processes`) are compared as they are."""

from __future__ import annotations

import json
import re
import shutil
import subprocess

import pytest

from fiojobs import job, run_fio

HOST = re.compile(r"^(  cpu +:|Disk stats|  [a-z0-9]+: ios=|fio-\d|Starting \d|[a-z]+: \(g=\d+\): rw=)")


def _shape(out: str) -> list[str]:
    """Each line with its numbers `#` and units `U`, repeats of a line merged (fio's
    latency-share and percentile rows vary in number with the values)."""
    seen: list[str] = []
    for ln in out.splitlines():
        if HOST.match(ln) or not ln.strip() or ln.startswith(("ssdlab:", "drive sim:", "stored as run")):
            continue
        if "lat percentiles and IOPS in virtual time" in ln or ln.startswith("  note: "):
            continue  # ssdlab's notes on what its figures measure
        s = re.sub(r"pid=\d+: .*$", "pid=#", ln)
        s = re.sub(r"\((nsec|usec|msec)\)", "(U)", s)
        s = re.sub(r">=\d+=", "#=", s)
        s = re.sub(r"\d+(\.\d+)?[kMGTPE]?i?B?(/s)?", "#", s)
        s = re.sub(r"\[ *#\]", "[#]", s)
        s = re.sub(r"= +#", "=#", s)
        s = re.sub(r"  lat \(U\) +: .*", "  lat (U)   : ...", s)  # which bounds have I/O
        s = re.sub(r"^     \|.*", "     | ...", s)
        if not seen or seen[-1] != s:
            seen.append(s)
    return seen


def _texts(tmp_path, body: str) -> tuple[str, str]:
    """fio's text output and ssdlab's for the same job file on the null engine."""
    if shutil.which("fio") is None:
        pytest.skip("fio not installed (make sysdeps)")
    (tmp_path / "n.fio").write_text("[global]\nioengine=null\nfilename=ssdlab-null\n" + body)
    fio = subprocess.run(["fio", "n.fio"], capture_output=True, text=True, cwd=tmp_path, timeout=60)
    assert fio.returncode == 0, fio.stderr
    r = run_fio(tmp_path, job(tmp_path, "[global]\nioengine=null\n" + body))
    assert r.exit_code == 0, r.output
    return fio.stdout, r.stdout


def _both(tmp_path, body: str) -> tuple[list[str], list[str]]:
    theirs, ours = _texts(tmp_path, body)
    return _shape(theirs), _shape(ours)


@pytest.mark.parametrize("body", [
    # percentile_list's decimals (fio's percentile_precision), slat and lat percentiles
    "[a]\nrw=randread\nbs=4k\nsize=16m\niodepth=4\npercentile_list=50:99.5:99.999\n"
    "lat_percentiles=1\nslat_percentiles=1\n",
    "[a]\nrw=randwrite\nbs=4k\nsize=4m\npercentile_list=50:90\nfsync=8\n",
    "[a]\nrw=randrw\nbs=4k\nsize=8m\niodepth=2\n",
    "[a]\ndescription=a described job\nrw=read\nbs=4k\nsize=1m\n",
])
def test_the_job_lines_are_fios(tmp_path, body):
    fio, sim = _both(tmp_path, body)
    assert sim == fio


def test_percentile_decimals_follow_the_list(tmp_path):
    """fio prints each percentile with as many decimals as the list's longest fraction
    (parse.c counts them into percentile_precision): `99.999th`, not `100.00th`."""
    r = run_fio(tmp_path, job(tmp_path, "[a]\nrw=randread\nbs=4k\nsize=1m\npercentile_list=50:99.999\n"))
    assert r.exit_code == 0, r.output
    row = next(ln for ln in r.stdout.splitlines() if ln.startswith("     |"))
    assert re.match(r"^     \| 50\.000th=\[ *\d+\], 99\.999th=\[ *\d+\]$", row), row
    r = run_fio(tmp_path, job(tmp_path, "[a]\nrw=randread\nbs=4k\nsize=1m\npercentile_list=50:90\n"))
    row = next(ln for ln in r.stdout.splitlines() if ln.startswith("     |"))
    assert re.match(r"^     \|  50th=\[ *\d+\],  90th=\[ *\d+\]$", row), row  # " %3.0fth"


def test_the_description_is_in_the_json_as_fios(tmp_path):
    r = run_fio(tmp_path, job(tmp_path, "[a]\ndescription=a described job\nrw=read\nbs=4k\nsize=1m\n"),
                "--output-format", "json")
    assert r.exit_code == 0, r.output
    (j,) = json.loads(r.stdout)["jobs"]
    assert j["desc"] == "a described job" and list(j)[-1] == "desc"  # fio's last key


def _before_jobs(out: str) -> list[str]:
    """The lines before the first job's report, but fio's version line, its notes and its files' lay-out."""
    lines = []
    for ln in out.splitlines():
        if "(groupid=" in ln or ln.startswith("drive sim:"):
            break
        if ln.strip() and not ln.startswith(("fio-", "ssdlab:", "note:")) and "Laying out IO file" not in ln:
            lines.append(ln)
    return lines


@pytest.mark.parametrize("body", [
    "[a]\nrw=randread\nbs=4k\nsize=1m\niodepth=4\nnumjobs=3\n"
    "[b]\nrw=write\nbsrange=4k-16k\nsize=1m\nstonewall\n"
    "[c]\nrw=randrw\nbssplit=4k/50:64k/50,8k\nsize=1m\nioengine=libaio\nthread\nnumjobs=2\n",
    "[a]\nioengine=psync\niodepth=8\nrw=readwrite\nbs=64k,4k\nsize=1m\n"
    "[b]\nrw=randtrimwrite\nbs=1m\nsize=8m\nthread\n[c]\nrw=trim\nbs=1m\nsize=8m\nthread\n",
])
def test_the_lines_before_the_jobs_are_fios(tmp_path, body):
    """Each job's `NAME: (g=N): rw=..., bs=..., ioengine=..., iodepth=N` line (a clone's `...`)
    and `Starting N threads and M processes`, as fio 3.33 prints them for the job file."""
    theirs, ours = (_before_jobs(t) for t in _texts(tmp_path, body))
    assert theirs[-1].startswith("Starting ")
    assert ours == theirs
