"""Where a job's I/Os fall, as fio places them on a file of the simulated drive's size:
sizes and offsets given as a percentage of the drive (filesetup.c get_start_offset,
setup_files): a percentage `offset` or `offset_increment` puts each job at
`offset + k * offset_increment` aligned up to `offset_align` (default: the job's smallest
block size); `io_size=N%` is N % of the job's region; a percentage is a whole number;
and holes (`rw=read:N`) that wrap only in a region that starts at 0 (io_u.c
get_next_seq_offset).
Compared with fio 3.33 reading a sparse file of the simulated drive's size (its offsets from
a latency log with log_offset=1)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from fiojobs import job, refused, run_fio, sim, sim_stream

DRIVE = 8 * 10**9  # sim_stream's drive, and the file fio reads


def fio_offsets(tmp_path: Path, body: str) -> tuple[list[list[int]], list[int]]:
    """Each job's read offsets and read I/O count, fio reading a sparse file of DRIVE bytes."""
    if shutil.which("fio") is None:
        pytest.skip("fio not installed (make sysdeps)")
    dev = tmp_path / "dev"
    with dev.open("wb") as f:
        f.truncate(DRIVE)
    (tmp_path / "f.fio").write_text(f"[global]\nioengine=psync\nfilename={dev}\nwrite_lat_log=x\n"
                                    "log_offset=1\n" + body)
    r = subprocess.run(["fio", "--output-format=json", "f.fio"], capture_output=True, text=True,
                       cwd=tmp_path, timeout=120)
    assert r.returncode == 0, r.stderr
    jobs = json.loads(r.stdout[r.stdout.index("{"):])["jobs"]
    offs = [[int(ln.split(",")[4]) for ln in (tmp_path / f"x_lat.{i + 1}.log").read_text().splitlines()]
            for i in range(len(jobs))]
    return offs, [j["read"]["total_ios"] for j in jobs]


CASES = {
    # 99 % of the drive, aligned up to 1 MiB: 75 reads to the end, not 76
    "offset-pct": "[a]\nrw=read\nbs=1m\noffset=99%\n",
    # each clone at k x 33 %, the sum aligned up to the 64 KiB block
    "increment-pct": "[a]\nrw=read\nbs=64k\nsize=128k\nnumjobs=3\noffset_increment=33%\n",
    # offset_align aligns offset + k x offset_increment, not the offset alone
    "offset-align": "[a]\nrw=read\nbs=64k\nsize=128k\noffset=1%\noffset_align=1m\nnumjobs=2\n"
                    "offset_increment=100k\n",
    # the smallest block size of any direction: bs=8k,4k aligns to 4 KiB
    "min-bs": "[a]\nrw=read\nbs=8k,4k\nsize=64k\noffset=37%\n",
    # a byte offset with a percentage increment is aligned too
    "byte-offset": "[a]\nrw=read\nbs=64k\nsize=128k\noffset=1000\nnumjobs=2\noffset_increment=10%\n",
    # holes: a region that starts past 0 ends its pass at the device's end, no wrap (fio
    # compares the offset from the region's start with the device's size): 7 and 4 reads
    "holes-no-wrap": "[a]\nrw=read:1g\nbs=4k\noffset=1g\nnumjobs=2\noffset_increment=3g\n",
    # io_size=N%: N % of the job's region (here 1 MiB), not of the drive
    "io_size-pct": "[a]\nrw=read\nbs=4k\nsize=1m\nio_size=50%\n",
}


@pytest.mark.parametrize("name", list(CASES))
def test_percentages_place_and_size_jobs_as_fio(tmp_path, name):
    body = CASES[name]
    want, counts = fio_offsets(tmp_path, body)
    got = sim_stream(tmp_path, body, max(counts))
    assert len(got) == len(want)
    for (_, offsets, _), w, n in zip(got, want, counts):
        assert list(offsets[:n]) == w
    assert [j["read"]["ios"] for j in sim(tmp_path, body)["jobs"]] == counts


@pytest.mark.parametrize("key", ["size", "offset", "offset_increment", "io_size"])
def test_a_fractional_percentage_is_refused(tmp_path, key):
    # fio reads 1.5% as 1 byte (its number stops at the point; no %): size=1.5% fails
    # "size too small", offset=1.5% starts at byte 1; refused, in one line
    line = refused(tmp_path, run_fio(tmp_path, job(tmp_path, f"[a]\nrw=read\nbs=4k\nsize=1m\n"
                                                             f"numjobs=2\n{key}=1.5%\n")),
                   f"{key}=1.5%", "whole")
    assert "1 byte" in line


def test_numjobs_clones_come_in_fios_order(tmp_path):
    # fio (init.c add_job) makes the clones of a job as subjobs numjobs-1 down to 1 after the
    # job itself: its JSON entries and log files (x_lat.2.log) are at offsets 1g, 5g, 3g
    body = "[a]\nrw=read:1g\nbs=4k\noffset=1g\nnumjobs=3\noffset_increment=2g\n"
    want, counts = fio_offsets(tmp_path, body)
    assert [w[0] for w in want] == [2**30, 5 * 2**30, 3 * 2**30] and counts == [7, 3, 5]
    r = run_fio(tmp_path, job(tmp_path, body), "--output-format", "json")
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert [j["read"]["total_ios"] for j in doc["jobs"]] == counts
