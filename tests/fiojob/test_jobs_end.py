"""How jobs end beyond their own bounds, as fio ends them: `exitall` with `exit_what`
(an ending job stops others), steady state judged on latency with fio's criterion and
check interval, and the region of clones without a size."""

from __future__ import annotations

import pytest

from fiojobs import sim

SLOW = "rw=read\nbs=4k\nnumber_ios=100\nthinktime=10ms\n"  # ~1 s of virtual time
LONG = "rw=randread\nbs=4k\nsize=1g\ntime_based\nruntime=60\n"


def _secs(j):
    return j["end_s"] - j["start_s"]


def test_exitall_stops_the_group_when_a_job_ends(tmp_path):
    body = f"[global]\nexitall\n[short]\n{SLOW}[long]\n{LONG}"
    short, long = sim(tmp_path, body)["jobs"]
    assert _secs(short) == pytest.approx(0.99, abs=0.02)
    assert _secs(long) == pytest.approx(_secs(short), abs=0.01)
    # without exitall each job keeps to its own bound
    _, long = sim(tmp_path, body.replace("exitall\n", ""))["jobs"]
    assert _secs(long) == pytest.approx(60)


def test_exit_what_names_what_an_ending_job_stops(tmp_path):
    """slow and long in separate reporting groups, then a stonewalled job: `group` stops
    nothing else, `stonewall` stops the running jobs and the next wave runs, `all` stops
    the next wave too."""
    def run(what):
        body = (f"[global]\nexitall\n[slow]\nnew_group\nexit_what={what}\n{SLOW}[long]\nnew_group\n"
                f"{LONG}[after]\nstonewall\nrw=write\nbs=4k\nnumber_ios=10\n")
        return sim(tmp_path, body)["jobs"]
    _, long, after = run("group")
    assert _secs(long) == pytest.approx(60) and after["write"]["ios"] == 10
    _, long, after = run("stonewall")
    assert _secs(long) == pytest.approx(0.99, abs=0.02) and after["write"]["ios"] == 10
    _, long, after = run("all")
    assert _secs(long) == pytest.approx(0.99, abs=0.02) and after["write"]["ios"] == 0


def test_steady_state_on_latency_with_fios_rule(tmp_path):
    """Reads of an empty drive answer in a constant time: the mean latency per interval is
    flat, so ss=lat stops the job once the window is full; the check interval sets the
    values (2 s at 500 ms: 4 values); fio's criterion is strict (under the limit), so a 0 %
    limit never holds."""
    base = "[a]\nrw=randread\nbs=4k\niodepth=4\ntime_based\nruntime=8\n"
    (j,) = sim(tmp_path, base + "ss=lat:5%\nss_dur=3\n")["jobs"]
    assert j["ss_attained"] and _secs(j) == pytest.approx(3, abs=0.01)
    (j,) = sim(tmp_path, base + "steadystate=lat_slope:1%\nss_dur=2\nsteadystate_check_interval=500ms\n")["jobs"]
    assert j["ss_attained"] and _secs(j) == pytest.approx(2, abs=0.01)
    (j,) = sim(tmp_path, base + "ss=lat:0%\nss_dur=3\n")["jobs"]
    assert not j["ss_attained"] and _secs(j) == pytest.approx(8)
    (j,) = sim(tmp_path, base + "ss=lat:5%\n")["jobs"]  # no ss_dur: not judged, as in fio
    assert not j["ss_attained"] and _secs(j) == pytest.approx(8)


def test_clones_without_a_size_cover_the_drive_from_their_own_offset(tmp_path):
    """numjobs clones at offset + k * offset_increment, no size: each clone's region is the
    drive from its own offset (8 GB drive: clone 2 at 6 GiB has the last ~1.5 GB)."""
    body = "[a]\nrw=write\nbs=1m\nnumjobs=3\noffset_increment=3g\nio_size=1g\n"
    jobs = sim(tmp_path, body)["jobs"]
    assert [j["write"]["bytes"] for j in jobs] == [2**30] * 3
    from ssdlab.fiojob import FioJobError
    with pytest.raises(FioJobError, match="clone 2: offset .* past the end of the drive"):
        sim(tmp_path, body.replace("3g", "4g"))


def test_latency_target_searches_the_deepest_queue_within_it(tmp_path):
    """fio's latency target: from depth 1 the depth grows while a window's I/Os keep within
    the target (at `latency_percentile`), shrinks when they do not; once it settles, the
    figures restart and one last window at that depth ends the job. Reads of an empty drive
    (about 11 us at depth 1, 192 us at 128, where the drive's rate caps them)."""
    base = "[a]\nioengine=libaio\nrw=randread\nbs=4k\niodepth=128\nsize=1g\ntime_based\nruntime=300\nlatency_window=1s\n"
    (full,) = sim(tmp_path, base.replace("latency_window=1s\n", "runtime=1\n"))["jobs"]
    (j,) = sim(tmp_path, base + "latency_target=100\nlatency_percentile=99\n")["jobs"]
    lat = j["read"]["lat"]
    assert _secs(j) == pytest.approx(1, abs=0.01)  # the last window alone
    assert 80 < lat["mean_us"] and lat["p99_us"] <= 100  # deep enough to near the target
    (j,) = sim(tmp_path, base + "latency_target=1000\n")["jobs"]  # every depth keeps within it
    assert _secs(j) == pytest.approx(1, abs=0.01)
    assert j["read"]["ios"] == pytest.approx(full["read"]["ios"], rel=0.01)  # at iodepth
    (j,) = sim(tmp_path, base + "latency_target=5\n")["jobs"]  # not even depth 1: fio stops it
    assert j["read"]["ios"] == 1


def test_steady_state_of_a_reporting_group_is_the_groups(tmp_path):
    """With group_reporting fio judges the group's summed figures and stops all its jobs
    once they hold: a steady first job ends the group at 3 s, so a member still in its
    start delay never runs; without group_reporting each job is judged alone."""
    body = ("[global]\nrw=randread\nbs=4k\niodepth=4\ntime_based\nruntime=60\nss=iops:5%\nss_dur=3\n"
            "[a]\n[b]\nstartdelay=10\n")
    a, b = sim(tmp_path, "[global]\ngroup_reporting\n" + body)["jobs"]
    assert a["ss_attained"] and b["ss_attained"] and _secs(a) == pytest.approx(3, abs=0.01)
    assert b["read"]["ios"] == 0
    a, b = sim(tmp_path, body)["jobs"]
    assert _secs(a) == pytest.approx(3, abs=0.01) and _secs(b) == pytest.approx(3, abs=0.01)
    assert b["read"]["ios"] > 0
