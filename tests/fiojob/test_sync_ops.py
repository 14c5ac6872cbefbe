"""Trims and syncs as fio 3.33's engines issue them, in virtual time: libaio and io_uring do
a trim in the call that issues it (alongside the job's I/Os in flight) and the job issues
nothing until it returns (io_uring_cmd's queued, as fio 3.36 queues them); posixaio does it
once the job's I/Os in flight have completed; the null engine queues it as any I/O, in its
batches (iodepth_batch_submit at a time, reaped whole before the next). fsync=N / fdatasync=N: a sync (a flush of the drive)
before the I/O after every Nth write, in the call on libaio, sg and the synchronous engines,
queued on the others (io_uring_cmd's as fio 3.38 queues them: 3.33's cannot issue one);
counted as fio counts them (its depths, its JSON's sync).
(tests/realdev/test_fio_trim_parity.py: against fio on a loop device; tests/nvme/test_sg_syncs.py:
sg's against fio's on a SCSI disk; test_end_sync.py: end_fsync, fsync_on_close, sync_file_range.)"""

from __future__ import annotations

import json

import pytest
from fiojobs import fio_null, job, refused, run_fio, sim

pytest.importorskip("ssdlab._sim")


def _job(tmp_path, engine: str, rw: str, extra: str = "") -> dict:
    body = f"[a]\nioengine={engine}\nrw={rw}\nbs=16k\nsize=16m\niodepth=8\n{extra}"
    return sim(tmp_path, body)["jobs"][0]


def _levels(j: dict) -> list[float]:
    level = j["depths"]["level"]
    return [x / sum(level) for x in level]


@pytest.mark.parametrize("engine", ["libaio", "io_uring", "posixaio"])
def test_a_trim_only_job_runs_at_depth_1_on_an_engine_that_trims_in_the_call(tmp_path, engine):
    j = _job(tmp_path, engine, "randtrim")
    assert j["trim"]["ios"] == 1024 and _levels(j)[0] == 1.0
    # one trim at a time: the job's time is its trims' latencies end to end
    lat = j["trim"]["lat"]
    assert (j["end_s"] - j["start_s"]) * 1e9 == pytest.approx(lat["ios"] * lat["mean_ns"], rel=0.01)


def test_the_null_engine_queues_its_trims_in_its_batches(tmp_path):
    # fio: 100 % at 1 (one I/O a batch, fio's default), 100 % at 8 with iodepth_batch=8
    assert _levels(_job(tmp_path, "null", "randtrim"))[0] == 1.0
    assert _levels(_job(tmp_path, "null", "randtrim", "iodepth_batch=8\n"))[3] == 1.0


@pytest.mark.parametrize("rw", ["trimwrite", "randtrimwrite"])
def test_libaio_trims_join_the_writes_in_flight_posixaio_waits_for_them(tmp_path, rw):
    aio, posix = _job(tmp_path, "libaio", rw), _job(tmp_path, "posixaio", rw)
    for j in (aio, posix):
        assert (j["trim"]["ios"], j["write"]["ios"]) == (1024, 1024)
    # how many writes a libaio trim joins is the drive's (its trims' time against its
    # writes'): fio on a loop device, where trims are slower, 99.3 % at 8
    assert _levels(aio)[0] < 0.01
    assert _levels(posix)[0] == 1.0  # fio: 100 % at 1
    # neither queues a trim behind others: the job takes longer than with queued trims
    queued = _job(tmp_path, "null", rw, "iodepth_batch=8\n")
    assert min(aio["end_s"], posix["end_s"]) > queued["end_s"]


def test_a_synchronous_trim_holds_only_its_own_job(tmp_path):
    body = ("[global]\nioengine=libaio\nbs=4k\niodepth=8\nsize=16m\n"
            "[t]\nrw=randtrim\ntime_based\nruntime=20ms\n"
            "[r]\nrw=randread\noffset=32m\ntime_based\nruntime=20ms\n")
    t, r = sim(tmp_path, body)["jobs"]
    assert _levels(t)[0] == 1.0 and _levels(r)[3] > 0.99


def _json(tmp_path, body: str) -> dict:
    r = run_fio(tmp_path, job(tmp_path, body), "--output-format", "json")
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)["jobs"][0]


@pytest.mark.parametrize("body", [
    "[a]\nrw=randwrite\nbs=4k\nsize=1m\nfsync=4\n",  # 63 fsyncs: none after the last write
    "[a]\nrw=write\nbs=4k\nsize=1m\nfdatasync=3\n",  # fio's JSON counts no fdatasync
    "[a]\nrw=trimwrite\nbs=4k\nsize=1m\nfsync=4\n",  # none: fio makes each I/O a trim or a write
    "[a]\nrw=read\nbs=4k\nsize=1m\nfsync=4\n",  # none: a job that does not write
])
def test_syncs_as_fio_counts_them(tmp_path, body):
    fj, sj = fio_null(tmp_path, body)["jobs"][0], _json(tmp_path, "[global]\nioengine=null\n" + body)
    assert sj["sync"]["total_ios"] == fj["sync"]["total_ios"]
    assert sj["sync"]["lat_ns"]["N"] == fj["sync"]["lat_ns"]["N"]
    assert sj["iodepth_level"] == fj["iodepth_level"]  # fio counts its syncs there: over 100 %
    assert set(sj["sync"]["lat_ns"]) == set(fj["sync"]["lat_ns"])


@pytest.mark.parametrize("body", [
    # fio: 2046 syncs, 149.951172 % at depth 1: the null engine takes one I/O at a time, and
    # the job takes the I/O after a sync point (a sync) before the write is reaped, then
    # another sync before the first is: two per point
    "[a]\nrw=randwrite\nbs=4k\nsize=16m\niodepth=8\nfsync=4\n",
    "[a]\nrw=write\nbs=4k\nsize=1m\niodepth=2\nfsync=1\n",  # 256: two writes, two syncs
    "[a]\nrw=randwrite\nbs=4k\nsize=1m\niodepth=8\nfsync=3\niodepth_batch=2\n",  # 254
    "[a]\nrw=randwrite\nbs=4k\nsize=1m\niodepth=8\nfsync=4\niodepth_batch=4\n",  # 253
    "[a]\nrw=randwrite\nbs=4k\nsize=1m\niodepth=8\nfsync=3\niodepth_batch=8\n",  # 201, partial batches
    "[a]\nrw=randwrite\nbs=4k\nsize=1m\niodepth=8\niodepth_batch=3\n",  # the last batch: no depth
])
def test_the_null_engines_batches_and_syncs_as_fio_counts_them(tmp_path, body):
    fj, sj = fio_null(tmp_path, body)["jobs"][0], _json(tmp_path, "[global]\nioengine=null\n" + body)
    assert (sj["write"]["total_ios"], sj["sync"]["total_ios"]) == (fj["write"]["total_ios"], fj["sync"]["total_ios"])
    for key in ("iodepth_level", "iodepth_submit", "iodepth_complete"):
        assert sj[key] == fj[key], key


def test_the_null_engine_above_iodepth_1_says_what_its_queue_is(tmp_path):
    r = run_fio(tmp_path, job(tmp_path, "[a]\nioengine=null\nrw=randwrite\nsize=1m\niodepth=8\n"))
    assert r.exit_code == 0, r.output
    assert "fio's null engine takes 1 I/O at a time" in r.stderr
    noted = [ln for ln in r.stderr.splitlines() if "accepted with no effect" in ln]
    assert not any("ioengine=null" in ln for ln in noted)  # it has one: not noted as without


def test_a_libaio_sync_is_one_flush_per_n_writes_in_the_call(tmp_path):
    j = sim(tmp_path, "[a]\nioengine=libaio\nrw=randwrite\nbs=4k\nsize=16m\niodepth=8\nfsync=4\n")["jobs"][0]
    assert j["write"]["ios"] == 4096 and j["sync"]["ios"] == 1023  # fio on a loop device: 1023
    level = j["depths"]["level"]
    assert sum(level) == 4096 + 1023 and level[0] < sum(level) / 2  # beside the writes in flight
    # an engine that queues its syncs issues them again until one completes (fio's
    # last_was_sync): more than one per 4 writes
    q = sim(tmp_path, "[a]\nioengine=io_uring\nrw=randwrite\nbs=4k\nsize=16m\niodepth=8\nfsync=4\n")["jobs"][0]
    assert q["sync"]["ios"] > 1023


def test_fsync_and_fdatasync_together_are_refused(tmp_path):
    refused(tmp_path, run_fio(tmp_path, job(tmp_path, "[a]\nrw=write\nsize=1m\nfsync=4\nfdatasync=2\n")),
            "fsync and fdatasync both given")


URING_CMD = "[a]\nioengine=io_uring_cmd\ncmd_type=nvme\nrw=randwrite\nbs=4k\nsize=1m\niodepth=8\n"
NEWER_FIO = "fio 3.33's sends NVMe reads and writes only"


def _uring_cmd(tmp_path, extra: str) -> tuple[dict, str]:
    r = run_fio(tmp_path, job(tmp_path, URING_CMD + extra), "--output-format", "json")
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)["jobs"][0], r.stderr


@pytest.mark.parametrize("extra", ["fsync=4\n", "fdatasync=4\n", "end_fsync=1\n", "rw=randrw\nfsync=1\n"])
def test_io_uring_cmd_queues_its_syncs_as_newer_fio_with_a_note(tmp_path, extra):
    # fio 3.33's io_uring_cmd preps an NVMe read or write only (engines/nvme.c: ENOTSUP for
    # any other direction) and the job ends silently where the first sync is due; fio 3.38
    # sends a Flush, queued as any I/O, as io_uring queues its fsyncs
    j, err = _uring_cmd(tmp_path, extra)
    assert "syncs (fio 3.38 and later: Flush) queued" in err and NEWER_FIO in err, err
    assert j["read"]["total_ios"] + j["write"]["total_ios"] == 256  # every I/O, not the 3.33 stop
    if "fsync=4" in extra:
        assert j["sync"]["total_ios"] > 64  # queued: issued again until one completes


@pytest.mark.parametrize("rw", ["trim", "randtrim", "trimwrite", "randtrimwrite"])
def test_io_uring_cmd_queues_its_trims_as_newer_fio_with_a_note(tmp_path, rw):
    # fio 3.36 sends a trim as Dataset Management, queued: a trim-only job runs at its
    # iodepth, not at depth 1 as the trims done in the call (libaio's, io_uring's)
    j, err = _uring_cmd(tmp_path, f"rw={rw}\n")
    assert "trims (fio 3.36 and later: Dataset Management) queued" in err and NEWER_FIO in err, err
    assert (j["trim"]["total_ios"], j["write"]["total_ios"]) == (256, 0 if rw.endswith("trim") else 256)
    if rw.endswith("trim"):
        assert j["iodepth_level"]["8"] > 90 or j["iodepth_level"][">=64"] > 90, j["iodepth_level"]


@pytest.mark.parametrize("extra", ["fsync=0\n", "rw=randread\nfsync=4\nend_fsync=1\nfsync_on_close=1\n"])
def test_io_uring_cmd_without_a_trim_or_sync_has_no_note(tmp_path, extra):
    # fsync=0 is none; a job that does not write issues none (fio's should_fsync)
    j, err = _uring_cmd(tmp_path, extra)
    assert "Flush" not in err and j["sync"]["total_ios"] == 0
    assert j["read"]["total_ios"] + j["write"]["total_ios"] == 256


SG = "[a]\nioengine=sg\nrw=randwrite\nbs=4k\nsize=16m\n"


@pytest.mark.parametrize("extra", ["fsync=4\n", "fdatasync=4\n", "sync_file_range=write:4\n"])
def test_sg_syncs_in_the_call_one_flush_per_n_writes(tmp_path, extra):
    # fio 3.33's sg (engines/sg.c fio_sgio_queue): any sync is a SYNCHRONIZE CACHE done in
    # the call (do_sync: the command written, replies read back until its own), so the job
    # issues nothing until it returns: one per 4 writes at iodepth 4, where an engine that
    # queues its syncs issues one per write once it is behind (io_uring: 4092)
    j = sim(tmp_path, f"{SG}iodepth=4\n{extra}")["jobs"][0]
    assert j["write"]["ios"] == 4096 and j["sync"]["ios"] == 1023
    assert sum(j["depths"]["submit"]) == 4096  # a sync done in the call is no submission


def test_sg_takes_the_completions_that_come_in_during_its_sync(tmp_path):
    # fio's sg reads the replies of the job's I/Os in flight while it waits for its sync's
    # (fio_sgio_rw_doio), each completed there (io_u_sync_complete): at its own time and as
    # no reap; libaio's are reaped once its fsync returns, their latency running on to then
    sg = sim(tmp_path, f"{SG}iodepth=8\nfsync=4\n")["jobs"][0]
    aio = sim(tmp_path, f"{SG.replace('sg', 'libaio')}iodepth=8\nfsync=4\n")["jobs"][0]
    assert sg["write"]["lat"]["mean_ns"] < aio["write"]["lat"]["mean_ns"] / 2
    assert sum(sg["depths"]["complete"]) < sum(aio["depths"]["complete"]) / 2
    # the last I/O taken is then the sync (fio's last_was_sync), and stays so while the job
    # refills its empty queue without a reap: the sync due at the 4th write after it is
    # skipped, the next issued at the 8th (libaio: 1023, one per 4)
    assert aio["sync"]["ios"] == 1023 and 4096 // 8 <= sg["sync"]["ios"] < 1023


@pytest.mark.parametrize("where", ["filename=/dev/sda\n", "filename=/dev/sg0\nsync=1\n"])
def test_sg_on_a_block_device_or_with_sync_does_each_io_in_the_call(tmp_path, where):
    # fio 3.33's sg on an sd block device (SG_IO's ioctl), or with sync=1 on an sg character
    # device, completes each I/O in the call (FIO_Q_COMPLETED): a synchronous engine. fio on
    # scsi_debug's disk, iodepth=8 fsync=4, 256 writes: 63 syncs, all at depth 1 (124.61 %)
    j = _json(tmp_path, f"[a]\nioengine=sg\nrw=randwrite\nbs=4k\nsize=1m\niodepth=8\nfsync=4\n{where}")
    assert (j["write"]["total_ios"], j["sync"]["total_ios"]) == (256, 63)
    assert j["iodepth_level"]["1"] == pytest.approx(124.61, abs=0.01)
    assert j["write"]["slat_ns"]["N"] == 0  # fio records no submission latency: none is queued


def test_sg_with_direct_on_an_sg_character_device_is_refused_as_fio_refuses_it(tmp_path):
    # fio 3.33: "destination does not support O_DIRECT", exit status 1
    for extra in ("", "sync=1\n"):
        body = f"[a]\nioengine=sg\nfilename=/dev/sg0\ndirect=1\nrw=randwrite\nbs=4k\nsize=1m\n{extra}"
        refused(tmp_path, run_fio(tmp_path, job(tmp_path, body)), "direct=1", "sg")
    ok = run_fio(tmp_path, job(tmp_path, "[a]\nioengine=sg\nfilename=/dev/sda\ndirect=1\nrw=randwrite\nbs=4k\nsize=1m\n"))
    assert ok.exit_code == 0, ok.output  # a block device: fio opens it with O_DIRECT


@pytest.mark.parametrize("body", ["fsync=4\n", "fsync=3\niodepth_batch=8\n", "sync_file_range=write:4\nend_fsync=1\n"])
def test_cpp_null_syncs_as_the_null_engine_with_no_submission_counted(tmp_path, body):
    # fio 3.33's cpp_null (engines/null.c built as C++ with -DFIO_EXTERNAL_ENGINE, loaded
    # from LD_LIBRARY_PATH): the null engine's queue, syncs, depths and reaps (there with
    # gtod_reduce=1: 256 writes, 126 syncs, 149.21875 % at depth 1), but its commit marks no
    # submission (#ifndef FIO_EXTERNAL_ENGINE): iodepth_submit all 0 %
    body = f"[a]\nrw=randwrite\nbs=4k\nsize=1m\niodepth=8\ngtod_reduce=1\n{body}"
    fj = fio_null(tmp_path, body)["jobs"][0]
    cj = _json(tmp_path, "[global]\nioengine=cpp_null\n" + body)
    assert (cj["write"]["total_ios"], cj["sync"]["total_ios"]) == (fj["write"]["total_ios"], fj["sync"]["total_ios"])
    for key in ("iodepth_level", "iodepth_complete"):
        assert cj[key] == fj[key], key
    assert not any(cj["iodepth_submit"].values()) and any(fj["iodepth_submit"].values())
