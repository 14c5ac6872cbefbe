"""A mixed job's rates, as fio's io_u.c rate_ddir applies them: a direction that is ahead of
its rate gives way to the other when that one is due (or unlimited), so each direction of
`rw=randrw` runs at its own rate whatever `rwmixread`; compared with fio's null engine."""

from __future__ import annotations

import pytest

import json

from fiojobs import fio_null, fio_null_unstalled, job, run_fio, sim

MIXED = {
    # both directions at 100 I/Os a second: 200 of each in 2 s, not 70 % of them reads
    "mix70-both-100": ("rwmixread=70\nrate_iops=100\n", 200, 200),
    # reads at 100, writes at 50
    "per-direction": ("rate_iops=100,50\n", 200, 100),
    # the bandwidth: 400 KiB/s reads (100 a second), 200 KiB/s writes (50 a second)
    "bandwidth": ("rwmixread=20\nrate=400k,200k\n", 200, 100),
}


@pytest.mark.parametrize("name", list(MIXED))
def test_each_direction_of_a_mixed_job_runs_at_its_own_rate(tmp_path, name):
    opts, reads, writes = MIXED[name]
    body = f"[a]\nrw=randrw\nbs=4k\nsize=1m\ntime_based\nruntime=2\n{opts}"
    f = fio_null_unstalled(tmp_path, body, lambda j: all(
        abs(j[d]["total_ios"] - want) <= 1 for d, want in (("read", reads), ("write", writes))))
    (s,) = sim(tmp_path, body)["jobs"]
    for d, want in (("read", reads), ("write", writes)):
        assert abs(f[d]["total_ios"] - want) <= 1, (d, f[d]["total_ios"])  # fio itself
        assert abs(s[d]["ios"] - f[d]["total_ios"]) <= 1, (d, s[d]["ios"], f[d]["total_ios"])


def test_an_unlimited_direction_takes_the_time_the_limited_one_leaves(tmp_path):
    # rate_iops=100,0: reads at 100 a second, writes unlimited; rwmixread=50 no longer
    # holds: fio issues a write whenever the read is not due
    body = "[a]\nrw=randrw\nbs=4k\nsize=1m\ntime_based\nruntime=1\nrate_iops=100,0\n"
    f = fio_null_unstalled(tmp_path, body, lambda j: abs(j["read"]["total_ios"] - 100) <= 1)
    (s,) = sim(tmp_path, body)["jobs"]
    assert abs(f["read"]["total_ios"] - 100) <= 1 and f["write"]["total_ios"] > 10_000
    assert abs(s["read"]["ios"] - 100) <= 1 and s["write"]["ios"] > 10_000


def test_a_direction_with_no_share_is_never_switched_to(tmp_path):
    # rwmixread=100: fio's rate_ddir switches only to a direction with a share of the mix
    body = "[a]\nrw=randrw\nrwmixread=100\nbs=4k\nsize=1m\ntime_based\nruntime=1\nrate_iops=100\n"
    (f,) = fio_null(tmp_path, body)["jobs"]
    (s,) = sim(tmp_path, body)["jobs"]
    assert f["write"]["total_ios"] == s["write"]["ios"] == 0
    assert abs(s["read"]["ios"] - f["read"]["total_ios"]) <= 1


def test_offload_submission_at_a_fixed_rate_ends_at_that_rate(tmp_path):
    """io_submit_mode=offload with an asynchronous engine and a rate (fio's example of a
    fixed submission rate, which fio 3.33 itself never ends): the reads go at the rate
    whatever the drive's completions, and the job ends when its size is read."""
    body = "[fixed]\nsize=1m\nrw=read\nioengine=libaio\niodepth=32\ndirect=1\nio_submit_mode=offload\nrate_iops=1000\n"
    r = run_fio(tmp_path, job(tmp_path, body), "--output-format", "json")
    assert r.exit_code == 0, r.output
    (j,) = json.loads(r.stdout)["jobs"]
    assert j["read"]["total_ios"] == 256 and j["read"]["io_bytes"] == 1 << 20
    assert j["read"]["iops"] == pytest.approx(1000, rel=0.005)
    assert j["read"]["runtime"] in (255, 256)

