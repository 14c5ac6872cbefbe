"""fio's end_fsync, fsync_on_close and sync_file_range as fio 3.33 issues them, in virtual
time. end_fsync and fsync_on_close: a flush of the drive once a pass's I/Os are in, in the
pass's time and in none of fio's sync figures; fsync_on_close also as fio closes the files
(before another pass, in its time; before the verify, in neither's; at the job's end after a
verify). sync_file_range=FLAGS:N: before the I/O after every Nth write, counted as fio counts
it (sync latencies, depths, and the writes' short_ios, where fio 3.33's array layout puts
it), a flush only where the engine makes it an fsync (posixaio). Counts against fio's null
engine; what fio does on a file (where the syscalls show) is in the module's comments."""

from __future__ import annotations

import json

import pytest
from fiojobs import fio_null, job, refused, run_fio, sim

pytest.importorskip("ssdlab._sim")

WRITE = "[a]\nrw=write\nbs=4k\nsize=4m\n"


def _time(j: dict) -> float:
    return j["end_s"] - j["start_s"]


def _json(tmp_path, body: str) -> dict:
    r = run_fio(tmp_path, job(tmp_path, body), "--output-format", "json")
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)["jobs"][0]


@pytest.mark.parametrize("option", ["end_fsync=1", "fsync_on_close=1"])
def test_a_flush_at_the_end_of_the_pass_in_its_time_and_no_sync_figure(tmp_path, option):
    # strace of fio 3.33 on a file: 16 pwrite64, then one fsync, for either option
    plain, flushed = sim(tmp_path, WRITE)["jobs"][0], sim(tmp_path, WRITE + option + "\n")["jobs"][0]
    assert flushed["write"]["ios"] == plain["write"]["ios"] == 1024
    # the drive's write buffer drained: at least the host's round trip, at most a buffer's worth
    assert 1e-6 < _time(flushed) - _time(plain) < 5e-3
    assert flushed["write"]["runtime_ns"] - plain["write"]["runtime_ns"] == pytest.approx(
        (_time(flushed) - _time(plain)) * 1e9, abs=2)
    assert flushed["sync"]["ios"] == 0  # fio runs it TD_FSYNCING: no count, no latency


def test_no_flush_for_a_job_that_does_not_write(tmp_path):
    body = "[a]\nrw=read\nbs=4k\nsize=4m\n"
    assert sim(tmp_path, body + "end_fsync=1\n")["jobs"][0]["end_s"] == sim(tmp_path, body)["jobs"][0]["end_s"]


def test_a_time_based_job_flushes_after_its_runtime(tmp_path):
    body = "[a]\nrw=write\nbs=4k\nsize=4m\ntime_based\nruntime=20ms\n"
    plain, flushed = sim(tmp_path, body)["jobs"][0], sim(tmp_path, body + "end_fsync=1\n")["jobs"][0]
    assert _time(plain) == pytest.approx(0.02) and _time(flushed) > _time(plain)


def test_fsync_on_close_flushes_again_as_fio_closes_the_files(tmp_path):
    # strace: end_fsync loops=2: W16 F W16 F; fsync_on_close loops=2: W16 F F W16 F (the
    # close's fsync at the second pass's start, in its time)
    two = WRITE + "loops=2\n"
    end, close = sim(tmp_path, two + "end_fsync=1\n")["jobs"][0], sim(tmp_path, two + "fsync_on_close=1\n")["jobs"][0]
    assert close["write"]["runtime_ns"] > end["write"]["runtime_ns"]
    # verify: W16 F F R16 F; the close before the verify in neither's time
    v = WRITE + "verify=crc32c\n"
    plain, closed = sim(tmp_path, v)["jobs"][0], sim(tmp_path, v + "fsync_on_close=1\n")["jobs"][0]
    assert closed["read"]["runtime_ns"] == plain["read"]["runtime_ns"]
    assert closed["write"]["runtime_ns"] > plain["write"]["runtime_ns"]


@pytest.mark.parametrize("body", [
    "[a]\nrw=randwrite\nbs=4k\nsize=1m\nsync_file_range=write:4\n",  # fio: 63, short_ios 0,63,0
    "[a]\nrw=randwrite\nbs=4k\nsize=1m\niodepth=4\nsync_file_range=wait_before,write,wait_after:4\n",  # 126
    "[a]\nrw=randwrite\nbs=4k\nsize=1m\nfsync=4\nsync_file_range=write:2\n",  # 63 fsyncs, 64 ranges
    "[a]\nrw=randwrite\nbs=4k\nsize=1m\nsync_file_range=write\n",  # N 1: 255
    "[a]\nrw=randwrite\nbs=4k\nsize=1m\nsync_file_range=write:x\n",  # atoi: 0, none
    "[a]\nrw=randwrite\nbs=4k\nsize=1m\nfdatasync=4\n",  # fio counts fdatasyncs in the reads' short_ios
    "[a]\nrw=randwrite\nbs=4k\nsize=1m\niodepth=4\nfsync=4\nfsync_on_close=1\n",  # 149.609375 %
    "[a]\nrw=randwrite\nbs=4k\nsize=1m\nend_fsync=1\n",  # depth 1 at iodepth 1: 100 %
])
def test_syncs_are_counted_as_fio_counts_them(tmp_path, body):
    fj, sj = fio_null(tmp_path, body)["jobs"][0], _json(tmp_path, "[global]\nioengine=null\n" + body)
    assert sj["sync"]["total_ios"] == fj["sync"]["total_ios"]
    assert sj["sync"]["lat_ns"]["N"] == fj["sync"]["lat_ns"]["N"]
    for d in ("read", "write", "trim"):
        assert sj[d]["short_ios"] == fj[d]["short_ios"], d
    assert sj["iodepth_level"] == fj["iodepth_level"]
    if "iodepth=" in body:  # at iodepth 1 fio's null engine counts no submission nor reap at all
        assert (sj["iodepth_submit"], sj["iodepth_complete"]) == (fj["iodepth_submit"], fj["iodepth_complete"])


def test_a_sync_file_range_reaches_the_drive_only_as_posixaios_fsync(tmp_path):
    body = "[a]\nrw=randwrite\nbs=4k\nsize=4m\niodepth=4\n"
    ranges = "sync_file_range=write:4\n"
    for engine in ("psync", "libaio", "io_uring"):  # sync_file_range(2): no flush, no page cache
        plain = sim(tmp_path, f"{body}ioengine={engine}\n")["jobs"][0]
        j = sim(tmp_path, f"{body}ioengine={engine}\n{ranges}")["jobs"][0]
        assert j["sync"]["ios"] > 0 and j["sync_ranges"] == j["sync"]["ios"]
        assert j["sync"]["max_us"] == 0 and _time(j) == pytest.approx(_time(plain), rel=1e-6), engine
    flushes = sim(tmp_path, f"{body}ioengine=posixaio\n{ranges}")["jobs"][0]  # aio_fsync(O_SYNC)
    assert flushes["sync"]["max_us"] > 0


@pytest.mark.parametrize("value", ["foo:4", ":4", "WRITE:4", "write,,wait_after"])
def test_a_sync_file_range_fio_refuses_is_refused_in_one_line(tmp_path, value):
    refused(tmp_path, run_fio(tmp_path, job(tmp_path, f"[a]\nrw=write\nsize=1m\nsync_file_range={value}\n")),
            f"sync_file_range={value}", "wait_before, write, wait_after")


SG_READ = "[a]\nioengine=sg\nrw=read\nbs=4k\nsize=256k\niodepth=4\n"


@pytest.mark.parametrize("where", ["filename=/dev/sg0\n", "filename=/dev/sg0\nsync=1\n", "filename=/dev/sda\n",
                                   "filename=/dev/sg0\nrw=trim\n"])
@pytest.mark.parametrize("option", ["end_fsync=1", "fsync_on_close=1"])
def test_sg_flushes_at_the_end_of_a_job_that_does_not_write(tmp_path, where, option):
    # fio 3.33's sg sets override_sync (engines/sg.c fio_sgio_init), so should_fsync holds
    # for any job: do_io's end sync is a SYNCHRONIZE CACHE after reads or trims too, in the
    # job's time and in no sync figure. fio on scsi_debug's disk, 64 reads: one
    # SYNCHRONIZE CACHE, sync.total_ios 0, in either mode of sg
    plain, flushed = sim(tmp_path, SG_READ + where)["jobs"][0], sim(tmp_path, SG_READ + where + option + "\n")["jobs"][0]
    assert _time(flushed) > _time(plain) and flushed["sync"]["ios"] == 0


@pytest.mark.parametrize("rw", ["write", "read"])
def test_fsync_on_close_fails_on_an_sg_character_device_and_flushes_on_a_block_device(tmp_path, rw):
    # fio's fsync(2) as it closes the files (put_file) fails on an sg character device (no
    # fsync there: EINVAL, which close_files ignores): no flush, no error; on an sd block
    # device it is a flush. fio on scsi_debug's disk, loops=2, SYNCHRONIZE CACHEs: /dev/sg0
    # 2 with fsync_on_close as with end_fsync (each pass's end sync); /dev/sda 3 (and the
    # close before the second pass)
    two = f"[a]\nioengine=sg\nrw={rw}\nbs=4k\nsize=256k\niodepth=4\nloops=2\n"
    for where, more in (("filename=/dev/sg0\n", False), ("filename=/dev/sg0\nsync=1\n", False),
                        ("filename=/dev/sda\n", True)):
        end = sim(tmp_path, two + where + "end_fsync=1\n")["jobs"][0]
        close = sim(tmp_path, two + where + "fsync_on_close=1\n")["jobs"][0]
        assert (_time(close) > _time(end)) == more, where


def test_fsync_on_close_on_an_sg_character_device_fails_the_job_when_ios_are_in_flight(tmp_path):
    # a pass whose offsets end before its bytes (rw=read:4k: every other block) closes its
    # file there (fio's set_io_u_file); with I/Os in flight, the last of them to complete
    # closes it (put_io_u), where the fsync(2)'s EINVAL becomes the job's error ("file
    # close"); its end sync is still issued, and fio then stops (thread_main: no further
    # pass). fio 3.33 on scsi_debug's disk: error 22, 32 reads, one SYNCHRONIZE CACHE
    holes = "[a]\nioengine=sg\nfilename=/dev/sg0\nrw=read:4k\nbs=4k\nsize=256k\n"
    r = run_fio(tmp_path, job(tmp_path, holes + "iodepth=4\nfsync_on_close=1\nloops=2\n"), "--output-format", "json")
    assert r.exit_code == 0, r.output
    j = json.loads(r.stdout)["jobs"][0]
    assert j["error"] == 22 and j["read"]["total_ios"] == 32
    text = run_fio(tmp_path, job(tmp_path, holes + "iodepth=4\nfsync_on_close=1\n")).stdout
    # fio 3.33: "err=%2d (%s)" with its td_verror text (file:line, func, error)
    assert "err=22 (file:io_u.c:821, func=file close, error=Invalid argument): pid=" in text
    plain = sim(tmp_path, holes + "iodepth=4\n")["jobs"][0]
    assert _time(sim(tmp_path, holes + "iodepth=4\nfsync_on_close=1\n")["jobs"][0]) > _time(plain)  # the end sync
    # none in flight (iodepth 1, or sync=1: each I/O in the call), a block device (a
    # flush), end_fsync alone (no close's fsync): no error
    for extra in ("iodepth=1\nfsync_on_close=1\n", "iodepth=4\nsync=1\nfsync_on_close=1\n",
                  "iodepth=4\nend_fsync=1\n"):
        assert _json(tmp_path, holes + extra)["error"] == 0, extra
    assert _json(tmp_path, holes.replace("sg0", "sda") + "iodepth=4\nfsync_on_close=1\n")["error"] == 0
