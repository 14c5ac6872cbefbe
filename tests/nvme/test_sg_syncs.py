"""fsync=N and fdatasync=N on fio's sg engine, against real fio on a SCSI disk (scsi_debug's,
through /dev/sgN, in the VM of conftest.py): each sync a SYNCHRONIZE CACHE done in the
issuing call, which takes the writes in flight that complete while it waits, so the sync is
the last I/O taken and one due before the next reap is skipped; with sync=1 each I/O is
done in the call. ssdlab runs the same job
file on a simulated drive. scsi_debug's sync takes 1/20 s and its writes 0.1 ms, so every
write in flight is taken; the simulated drive's flush is quicker: at iodepth 8 only the
mechanism is compared (some syncs skipped), not the count."""

from __future__ import annotations

import pytest
import simfio

pytestmark = [pytest.mark.realdev, pytest.mark.timeout(1800), pytest.mark.xdist_group("nvme_vm")]
WRITES = 64  # size=256k, bs=4k


def _ssdlab(tmp_path, jobs: str) -> dict:
    return {j["jobname"]: j for j in simfio.run_json(tmp_path, jobs, "sg.fio")["jobs"]}


def _fio(step: dict) -> dict:
    run = step["fio"]
    assert run["rc"] == 0 and run["json"], run["stderr"]
    return {j["jobname"]: j for j in run["json"]["jobs"]}


def test_sg_syncs_as_real_fio_on_a_scsi_disk(nvme_vm_run, tmp_path):
    s = nvme_vm_run.step("sg_syncs")
    assert s["model"] == "scsi_debug", s
    fio, sim = _fio(s), _ssdlab(tmp_path, s["jobs"])
    for name in ("qd4", "qd8", "qd4_fdatasync", "qd8_sync"):
        assert fio[name]["write"]["total_ios"] == sim[name]["write"]["total_ios"] == WRITES, name
    # iodepth 4: one sync per 4 writes, none skipped (the queue fills, and its reap comes,
    # before the next is due), the last write followed by none; an fdatasync counted in
    # the reads' short_ios, none in sync.total_ios
    every_4 = WRITES // 4 - 1
    assert fio["qd4"]["sync"]["total_ios"] == sim["qd4"]["sync"]["total_ios"] == every_4
    dsync = [(j["read"]["short_ios"], j["sync"]["total_ios"]) for j in (fio["qd4_fdatasync"], sim["qd4_fdatasync"])]
    assert dsync == [(every_4, 0)] * 2
    # iodepth 8: the sync due 4 writes after one is skipped (no reap between), the next
    # issued: about one per 8 writes; one per 4 would be every_4
    for j in (fio["qd8"], sim["qd8"]):
        assert WRITES // 8 - 1 <= j["sync"]["total_ios"] <= every_4 * 3 // 4, j["sync"]
    # sync=1: each I/O in the call (fio's synchronous mode of sg), so one sync per 4 writes
    # at depth 1 whatever the iodepth: 64 writes and 15 syncs, 79 I/Os at depth 1
    for j in (fio["qd8_sync"], sim["qd8_sync"]):
        assert j["sync"]["total_ios"] == every_4, j["sync"]
        assert j["iodepth_level"]["1"] == pytest.approx(100 * (WRITES + every_4) / WRITES, abs=0.01)
