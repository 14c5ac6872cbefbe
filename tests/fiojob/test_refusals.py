"""A job file on a simulated drive is read by ssdlab, never run by fio: options outside the
allow-list are refused with one line naming the option and why (exit 2, nothing stored,
nothing executed or written); engine options that change nothing on a simulated drive are
accepted with one note; fio's booleans, `name=` in [global], includes and variables read as
fio reads them."""

from __future__ import annotations

import os

import pytest
from fiojobs import job, refused, run_fio

from ssdlab.fiojob import FioJobError
from ssdlab.fiojob.compile import compile_job

CAP = 8 * 2**30


def test_exec_prerun_is_refused_and_never_runs(tmp_path):
    marker = tmp_path / "ran"
    script = tmp_path / "x.sh"  # a command with no space: the null-engine capture ran it
    script.write_text(f"#!/bin/sh\ntouch {marker}\n")
    script.chmod(0o755)
    f = job(tmp_path, f"[a]\nrw=read\nsize=1m\nexec_prerun={script}\n")
    r = run_fio(tmp_path, f)
    refused(tmp_path, r, "exec_prerun", "never executes")
    assert not marker.exists()
    f = job(tmp_path, f"[global]\nexec_postrun={script}\n[a]\nrw=read\nsize=1m\n", "post.fio")
    refused(tmp_path, run_fio(tmp_path, f), "exec_postrun")
    assert not marker.exists()


@pytest.mark.parametrize("mem", ["mmap:{}", "mmapshared:{}", "mmaphuge:{}", "mmapshared"])
def test_mmap_buffers_are_refused_and_the_file_is_untouched(tmp_path, mem):
    victim = tmp_path / "victim.bin"
    victim.write_bytes(b"precious" * 4096)
    before = os.stat(victim)
    f = job(tmp_path, f"[a]\nrw=write\nbs=4k\nsize=1m\nmem={mem.format(victim)}\n")
    refused(tmp_path, run_fio(tmp_path, f), "mem=", "maps a file")
    assert victim.read_bytes() == b"precious" * 4096
    after = os.stat(victim)
    assert (after.st_size, after.st_mtime_ns) == (before.st_size, before.st_mtime_ns)


@pytest.mark.parametrize("body,words", [
    ("[a]\nrw=read\nsize=1m\nioengine=libhdfs\n", ("ioengine=libhdfs", "network engine")),
    ("[a]\nrw=read\nsize=1m\nioengine=libiscsi\n", ("ioengine=libiscsi", "network engine")),
    ("[a]\nrw=read\nsize=1m\nioengine=net\n", ("ioengine=net", "network")),
    ("[a]\nrw=read\nsize=1m\nioengine=exec\nprogram=/bin/true\n", ("ioengine=exec", "runs a program")),
    ("[a]\nrw=read\nsize=1m\nioengine=external:/tmp/x.so\n", ("ioengine=external", "runs a program")),
    ("[a]\nrw=read\nsize=1m\nioengine=filecreate\n", ("ioengine=filecreate", "filesystem engine")),
    ("[a]\nrw=read\nsize=1m\nwrite_iolog=/tmp/x\n", ("write_iolog", "writes a file")),
    ("[a]\nrw=read\nsize=1m\nread_iolog=/tmp/x\n", ("read_iolog", "run trace")),
    ("[a]\nrw=read\nsize=1m\noutput=/tmp/x\n", ("output", "writes a file")),
    ("[a]\nrw=read\nsize=1m\nno_such_option=3\n", ("no_such_option", "fio has no such option")),
    ("[a]\nrw=read\nsize=1m\niodpeth=8\n", ("iodpeth", "fio has no such option", "did you mean iodepth?")),
    ("[a]\nrw=read\nsize=1m\nthinkcycles=10\n", ("thinkcycles", "not an I/O-pattern option")),
    ("[a]\nrw=read\nsize=1m\ntrigger_cmd=reboot\n", ("trigger_cmd", "runs a command")),
    ("[a]\nrw=bogus\nsize=1m\n", ("rw=bogus", "not a fio rw kind")),
    ("[a]\nrw=read\nsize=100g\n", ("past the end of the drive",)),
    ("[a]\nrw=read\nsize=1m\ntime_based=maybe\n", ("time_based=maybe", "not a boolean")),
    ("[a]\nrw=read\nsize=1m\nbs=520\n", ("block size 520", "512+8", "4096-byte blocks")),
    ("[a]\nrw=read\nsize=1m\nbs=4160,4096\n", ("4096", "extended-LBA", "multiple of 4160")),
    ("[a]\nrw=read\nsize=1m\nbs=1000\n", ("block size 1000", "multiple of 512")),
    ("[a]\nrw=read\nsize=1m\nbs=0\n", ("bs=0", "block size of 0", "bs=4k")),
    ("[a]\nrw=write\nsize=1m\nbs=4k,0\n", ("bs=4k,0", "block size of 0", "bs=4k")),
    ("[a]\nrw=read\nsize=1m\nblocksize=0k\n", ("bs=0k", "block size of 0")),
    # fio refuses these; a bad percentile failed the run after it ran and was stored
    ("[a]\nrw=write\nsize=1m\nverify=foo\n", ("verify=foo", "not a fio verify kind", "crc32c")),
    ("[a]\nrw=write\nsize=1m\nverify=MD5\n", ("verify=MD5", "not a fio verify kind", "md5")),
    ("[a]\nrw=read\nsize=1m\npercentile_list=50:101\n", ("percentile_list=50:101", "101", "0 to 100")),
    ("[a]\nrw=read\nsize=1m\npercentile_list=50:abc\n", ("percentile_list=50:abc", "abc", "0 to 100")),
    ("[a]\nrw=read\nsize=1m\nlog_compression=512\n", ("log_compression=512", "1024 to 536870912")),
    ("[a]\nrw=read\nsize=1m\nlog_compression=1g\n", ("log_compression=1g", "1024 to 536870912")),
    ("[a]\nrw=write\nsize=1m\nwrite_mode=zone_append\n", ("write_mode=zone_append", "zonemode=zbd")),
    ("[a]\nrw=write\nsize=64m\nzonemode=zbd\nzonesize=1m\nbs=2m\n", ("zonemode=zbd", "larger than a zone")),
    ("[a]\nrw=trim\nsize=64m\nzonemode=zbd\nzonesize=1m\nbs=64k\n", ("trim block size", "zone size")),
    ("[a]\nrw=write\nsize=64m\nzonemode=zbd\nzonesize=1m\njob_max_open_zones=2\n",
     ("job_max_open_zones", "max_open_zones")),
    ("[a]\nrw=write\nzonemode=zbd\nzonesize=1m\noffset=1536k\nsize=1m\n", ("no whole zone",)),
    ("[a]\nrw=write\nsize=4z\n", ("size=4z", "zonesize=")),
    ("[a]\nrw=write\nsize=1m\nwrite_mode=write/50:zeroes/40\n", ("write_mode=", "90 %, not 100")),
    ("[a]\nrw=write\nsize=1m\nwrite_mode=write/1:zeroes/:uncor/\n", ("write_mode=", "99 %", "give every share")),
    ("[a]\nrw=write\nsize=1m\nwrite_mode=zeroes/50:trim/50\n", ("write_mode=", "write, zeroes, uncor, verify")),
    # fio's examples/nfs.fio: the engine's own option comes first, the engine is the cause
    ("[global]\nnfs_url=nfs://127.0.0.1/nfs\nioengine=nfs\n[a]\nrw=write\nsize=1m\n",
     ("job.fio:3: ioengine=nfs", "network engine")),
    ("[global]\nnfs_url=nfs://127.0.0.1/nfs\n[a]\nrw=write\nsize=1m\nioengine=nfs\n",
     ("job.fio:6: ioengine=nfs", "network engine")),
])
def test_refusals_name_the_cause(tmp_path, body, words):
    refused(tmp_path, run_fio(tmp_path, job(tmp_path, body)), *words)


def test_refusal_names_the_cause_not_fios_last_line(tmp_path):
    # a [global] section fio reports as "job global dropped" in its last line
    f = job(tmp_path, "[global]\nname=g\nexec_prerun=true\n[a]\nrw=read\nsize=1m\n")
    r = run_fio(tmp_path, f)
    refused(tmp_path, r, "exec_prerun")
    assert "dropped" not in r.stderr


def test_engine_options_noted(tmp_path):
    f = job(tmp_path, "[global]\nioengine=io_uring\nhipri\nfixedbufs\nregisterfiles\nsqthread_poll=1\n"
                      "direct=1\nfilename=/dev/nvme0n1\ncmdprio_percentage=10\nverify=crc32c\n"
                      "verify_pattern=0xff\ngroup_reporting\nreadfua=1\nwritefua=1\ndisk_util=0\n"
                      "[a]\nrw=randread\nbs=4k\nsize=1m\n")
    c = compile_job(f, CAP)
    assert len(c.notes) == 1
    for w in ("ioengine=io_uring", "hipri", "fixedbufs", "registerfiles", "sqthread_poll", "direct",
              "filename", "cmdprio_percentage", "verify_pattern", "readfua", "writefua", "disk_util"):
        assert w in c.notes[0]
    assert "verify," not in c.notes[0]  # verify is simulated: a writing job reads back what it wrote


def test_libblkio_is_a_block_engine(tmp_path):
    # libblkio's drivers (io_uring, NVMe, virtio-blk) reach a local block device
    f = job(tmp_path, "[global]\nioengine=libblkio\nlibblkio_driver=io_uring\nlibblkio_path=/dev/nvme0n1\n"
                      "[a]\nrw=randread\nbs=4k\nsize=1m\n")
    c = compile_job(f, CAP)
    assert len(c.notes) == 1
    assert all(w in c.notes[0] for w in ("ioengine=libblkio", "libblkio_driver", "libblkio_path"))


@pytest.mark.parametrize("v,tb", [("0", False), ("1", True), ("true", True), ("false", False),
                                  ("yes", True), ("no", False), ("on", True), ("off", False), ("", True)])
def test_fio_booleans(tmp_path, v, tb):
    line = "time_based" if v == "" else f"time_based={v}"
    c = compile_job(job(tmp_path, f"[a]\nrw=read\nsize=1m\nruntime=2\n{line}\n"), CAP)
    assert c.jobs[0].time_based is tb


def test_name_in_global_is_not_a_job(tmp_path):
    c = compile_job(job(tmp_path, "[global]\nname=everything\nrw=read\nsize=1m\n[one]\n[two]\nrw=write\n"), CAP)
    assert [(j.name, j.read, j.write) for j in c.jobs] == [("one", True, False), ("two", False, True)]


def test_include_and_variables(tmp_path):
    job(tmp_path, "ioengine=libaio\nbs=${SSDLAB_TEST_BS}\niodepth=$ncpus\n", "inc.fio")
    c = compile_job(job(tmp_path, "[global]\ninclude inc.fio\n[a]\nrw=read\nsize=1m\n"), CAP,
                    env={"SSDLAB_TEST_BS": "16k"})
    assert c.jobs[0].bs[0] == [[16384, 100.0]] and c.jobs[0].iodepth == (os.cpu_count() or 1)
    with pytest.raises(FioJobError, match=r"\$\{NOT_SET_ANYWHERE\}: ssdlab expands only the variables you name"):
        compile_job(job(tmp_path, "[a]\nbs=${NOT_SET_ANYWHERE}\n", "v.fio"), CAP)
    with pytest.raises(FioJobError, match="include loop"):
        compile_job(job(tmp_path, "[a]\ninclude loop.fio\n", "loop.fio"), CAP)


def test_exec_in_an_included_file_is_refused(tmp_path):
    marker = tmp_path / "ran"
    job(tmp_path, f"exec_prerun=touch {marker}\n", "inc.fio")
    with pytest.raises(FioJobError, match="exec_prerun"):
        compile_job(job(tmp_path, "[a]\nrw=read\nsize=1m\ninclude inc.fio\n"), CAP)
    assert not marker.exists()
