"""end_fsync and fsync_on_close on fio's sg engine, against real fio on a SCSI disk
(scsi_debug's, in the VM of conftest.py), its SYNCHRONIZE CACHEs counted in the kernel's log.
sg sets fio's override_sync: a job that does not write flushes at the end of each pass too.
fsync_on_close's fsync(2) as fio closes the files fails on an sg character device (fio
ignores it: no flush, no error) and is a flush on the sd block device; but where the file
closes with I/Os in flight (a pass's offsets ending before its bytes), the last of them to
complete closes it and the failure is the job's error (22, "file close"), which stops it
after that pass, its end sync still sent (the guest runs the jobs one after another in one
fio run: the others run on, and fio's exit status counts the jobs that erred). ssdlab runs each job
on a simulated drive: its flushes there are checked by their time (tests/fiojob/
test_end_sync.py), its figures here beside fio's."""

from __future__ import annotations

import pytest
import simfio

pytestmark = [pytest.mark.realdev, pytest.mark.timeout(1800), pytest.mark.xdist_group("nvme_vm")]

# the SYNCHRONIZE CACHEs fio 3.33 sends for each job of the guest's step (64 I/Os a pass)
FLUSHES = {"read": 0, "read_end": 1, "read_close": 1, "read_end_sync": 1, "trim_end": 1, "read_close_loops": 2,
           "write_close_loops": 2, "write_close_loops_sync": 2, "sd_read_end": 1, "sd_read_close_loops": 3,
           "sd_write_close_loops": 3, "holes_close": 1, "holes_close_loops": 1, "holes_close_qd1": 1,
           "holes_close_sync": 1, "holes_end": 1}
ERRORS = {"holes_close": 22, "holes_close_loops": 22}  # fio's job error (EINVAL)


def test_sg_end_flushes_as_real_fio_on_a_scsi_disk(nvme_vm_run, tmp_path):
    s = nvme_vm_run.step("sg_flushes")
    assert s["write_cache"] == "write back", s  # else the sd block device's fsync sends no flush
    run = s["run"]
    assert run["rc"] == len(ERRORS) and run["json"], run["stderr"]  # fio's exit status: the jobs that erred
    assert run["flushes"] == FLUSHES
    by_name = {j["jobname"]: j for j in run["json"]["jobs"]}
    assert list(by_name) == [name for name, _, _ in s["jobs"]]
    for name, where, options in s["jobs"]:
        fio = by_name[name]
        dev = "/dev/sg0" if where == "sg" else "/dev/sda"
        sim = simfio.run_json(tmp_path, f"[{name}]\nioengine=sg\nfilename={dev}\nbs=4k\nsize=256k\n{options}")["jobs"][0]
        assert sim["error"] == fio["error"] == ERRORS.get(name, 0), name
        for d in ("read", "write", "trim", "sync"):
            assert sim[d]["total_ios"] == fio[d]["total_ios"], (name, d)
