"""`ssdlab run fio JOBFILE --drive sim:...` (issue 17): a user's fio job, captured with fio's
null engine, replays closed-loop at its iodepth on the simulated drive: a sequential write
job gives exactly what the simulator's own sequential-write phase gives; fio-style output;
jobs a closed loop cannot reproduce are refused with one line, exit 2."""

from __future__ import annotations

import json
import shutil

import pytest
from typer.testing import CliRunner

_sim = pytest.importorskip("ssdlab._sim")
if shutil.which("fio") is None:
    pytest.skip("fio not installed", allow_module_level=True)

from ssdlab import profiles  # noqa: E402
from ssdlab.cli import app  # noqa: E402
from ssdlab.phase import purge, seq_write  # noqa: E402
from ssdlab.store import Store  # noqa: E402

SMALL = ["user_capacity_gb=8", "nand.blocks_per_plane=46", "slc.dynamic_max_gb=1"]
SETS = [x for s in SMALL for x in ("--set", s)]
runner = CliRunner()


def job(tmp_path, body: str, name: str = "job.fio"):
    f = tmp_path / name
    f.write_text(body)
    return f


def run_fio(tmp_path, jobfile, *extra, json_out=True):
    args = ["run", "fio", str(jobfile), "--drive", "sim:tlc-256", *SETS,
            "--db", str(tmp_path / "r.sqlite"), *extra]
    return runner.invoke(app, args + (["--json"] if json_out else []))


def test_sequential_write_job_is_the_simulators_sequential_write(tmp_path):
    f = job(tmp_path, "[global]\nioengine=libaio\ndirect=1\nfilename=/dev/nvme0n1\n\n"
                      "[seq]\nrw=write\nbs=128k\niodepth=32\nsize=512m\n")
    r = run_fio(tmp_path, f)
    assert r.exit_code == 0, r.output
    m = json.loads(r.stdout)["drives"][0]["metrics"]
    assert m["iodepth"] == 32 and m["write_ios"] == 4096 and m["read_ios"] == 0
    d = _sim.Drive(profiles.load_text("tlc-256"), overrides=SMALL)
    cap = int(d.info()["user_bytes"])
    d.run(purge().resolve(cap))
    ph = d.run(seq_write("w", stop_bytes=512 * 2**20, queue_depth=32).resolve(cap))
    assert m["write_mbps"] == pytest.approx(ph["totals"]["mbps"], rel=1e-9)
    assert m["write_lat_p99_us"] == pytest.approx(ph["latency"]["p99_us"], rel=1e-9)


def test_random_job_fio_style_output_and_queue_depth(tmp_path):
    body = "[r]\nrw=randread\nbs=4k\nsize=1g\nio_size=16m\nrandseed=3\niodepth={}\n"
    r1 = run_fio(tmp_path, job(tmp_path, body.format(1), "qd1.fio"))
    r32 = run_fio(tmp_path, job(tmp_path, body.format(32), "qd32.fio"))
    m1, m32 = (json.loads(r.stdout)["drives"][0]["metrics"] for r in (r1, r32))
    assert m1["read_ios"] == m32["read_ios"] == 4096
    assert m32["read_iops"] > 3 * m1["read_iops"]  # the depth is the job's
    r = run_fio(tmp_path, job(tmp_path, body.format(4), "qd4.fio"), json_out=False)
    assert r.exit_code == 0, r.output
    assert "r: (drive sim:tlc-256, iodepth=4" in r.stdout
    assert "  read: IOPS=" in r.stdout and "lat percentiles (usec): 50.00th=[" in r.stdout
    assert "  write:" not in r.stdout
    s = Store(str(tmp_path / "r.sqlite"))
    run = s.run(s.latest_run_id())
    assert run["test"] == "fio" and "rw=randread" in run["args"]["job"]["text"]


@pytest.mark.parametrize("body,words", [
    ("[a]\nrw=read\nsize=1m\n[b]\nrw=write\nsize=1m\n", "2 jobs"),
    ("[a]\nrw=read\nsize=1m\nnumjobs=4\n", "numjobs=4"),
    ("[a]\nrw=read\nsize=1m\ntime_based\nruntime=10\n", "time_based"),
    ("[a]\nrw=read\nsize=1m\nthinktime=100\n", "think time"),
    ("[a]\nrw=read\nsize=100g\n", "more than the drive"),
    ("[a]\nrw=bogus\nsize=1m\n", "fio cannot read this job file"),
])
def test_jobs_a_closed_loop_cannot_replay_are_refused(tmp_path, body, words):
    r = run_fio(tmp_path, job(tmp_path, body))
    assert r.exit_code == 2 and words in r.stderr, r.output
    assert len(r.stderr.strip().splitlines()) == 1


def test_run_fio_needs_a_job_and_a_simulated_drive(tmp_path):
    r = runner.invoke(app, ["run", "fio", "--drive", "sim:tlc-256", "--db", str(tmp_path / "r")])
    assert r.exit_code == 2 and "give the job file" in r.stderr
    f = job(tmp_path, "[a]\nrw=read\nsize=1m\n")
    r = runner.invoke(app, ["run", "fill", str(f), "--drive", "sim:tlc-256", "--db", str(tmp_path / "r")])
    assert r.exit_code == 2 and "only for `ssdlab run fio JOBFILE`" in r.stderr
    r = runner.invoke(app, ["run", "fio", str(f), "--drive", "file:/tmp/x.img:1G", "--db", str(tmp_path / "r")])
    assert r.exit_code == 2 and "real drive" in r.stderr
