"""`ssdlab run fio JOBFILE --drive sim:...` end to end: the job compiled and run in the
simulator, stored like every other run; fio's text and JSON layouts (read by fio-plot, a fio
JSON reader), fio's log files; the drive state; a job with no size on a large drive runs in
memory that does not grow with its I/Os and stops on SIGTERM / SIGINT keeping what it
recorded."""

from __future__ import annotations

import json
import math
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

_sim = pytest.importorskip("ssdlab._sim")

from clirun import reaped  # noqa: E402
from fiojobs import SMALL, refused  # noqa: E402
from ssdlab import profiles  # noqa: E402
from ssdlab.cli import app  # noqa: E402
from ssdlab.phase import purge, seq_write  # noqa: E402
from ssdlab.store import Store  # noqa: E402
from ssdlab.targets.sim import table_bytes  # noqa: E402

SETS = [x for s in SMALL for x in ("--set", s)]
runner = CliRunner()


def job(tmp_path, body: str, name: str = "job.fio") -> Path:
    f = tmp_path / name
    f.write_text(body)
    return f


def run_fio(tmp_path, jobfile, *extra):
    return runner.invoke(app, ["run", "fio", str(jobfile), "--drive", "sim:tlc-256", *SETS,
                               "--db", str(tmp_path / "r.sqlite"), *extra])


def test_sequential_write_job_is_the_simulators_sequential_write(tmp_path):
    f = job(tmp_path, "[global]\nioengine=libaio\ndirect=1\nfilename=/dev/nvme0n1\n\n"
                      "[seq]\nrw=write\nbs=128k\niodepth=32\nsize=512m\n")
    r = run_fio(tmp_path, f, "--json")
    assert r.exit_code == 0, r.output
    assert "accepted with no effect on a simulated drive: ioengine=libaio, direct, filename" in r.stderr
    m = json.loads(r.stdout)["drives"][0]["metrics"]
    assert m["iodepth"] == 32 and m["write_ios"] == 4096 and m["read_ios"] == 0
    d = _sim.Drive(profiles.load_text("tlc-256"), overrides=SMALL)
    cap = int(d.info()["user_bytes"])
    d.run(purge().resolve(cap))
    ph = d.run(seq_write("w", stop_bytes=512 * 2**20, queue_depth=32).resolve(cap))
    # fio's bandwidth is over its runtime in whole ms, rounded up
    ms = math.ceil(ph["totals"]["duration_s"] * 1000)
    assert m["write_mbps"] == pytest.approx(512 * 2**20 / (ms / 1000) / 1e6, rel=1e-4)
    s = Store(str(tmp_path / "r.sqlite"))
    run = s.run(s.latest_run_id())
    assert run["test"] == "fio" and run["status"] == "complete" and "rw=write" in run["args"]["job"]["text"]


def test_fio_text_layout(tmp_path):
    body = "[r]\nrw=randread\nbs=4k\nsize=1g\nio_size=16m\niodepth=4\n[w]\nrw=randwrite\nbs=4k\nsize=16m\n"
    r = run_fio(tmp_path, job(tmp_path, body))
    assert r.exit_code == 0, r.output
    out = r.stdout
    assert "r: (groupid=0, jobs=1): err= 0" in out and "w: (groupid=0, jobs=1)" in out
    assert "  read: IOPS=" in out and "  write: IOPS=" in out and re.search(r"clat percentiles \((n|u|m)sec\):", out)
    assert "Run status group 0 (all jobs):" in out and "   READ: bw=" in out and "  WRITE: bw=" in out
    assert "reads touched blocks never written" in out  # the read job ran on an empty drive


def test_fio_json_is_read_by_fio_plot(tmp_path):
    """fio-plot (a fio JSON reader from the registry) takes the simulated JSON unchanged."""
    jsonparsing = pytest.importorskip("fio_plot.fiolib.jsonparsing")
    from fio_plot.fiolib import jsonimport

    body = ("[global]\nrw=randread\nbs=4k\niodepth=16\nnumjobs=2\nsize=256m\nio_size=32m\n"
            "group_reporting\n[job]\n")
    r = run_fio(tmp_path, job(tmp_path, body), "--output-format", "json")
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)  # stdout is fio's JSON document only
    out = tmp_path / "plots"
    out.mkdir()
    (out / "randread-16-2.json").write_text(json.dumps(doc))
    settings = {"rw": "randread", "iodepth": [16], "numjobs": [2], "input_directory": [str(out)],
                "filter": ["read", "write"], "include_hosts": None, "exclude_hosts": None,
                "compare_graph": False}
    ds = jsonimport.import_json_dataset(settings, jsonimport.list_json_files(settings))
    jsonparsing.parse_json_data(settings, ds)
    (row,) = ds[0]["data"]
    (j,) = doc["jobs"]
    assert row["iops"] == pytest.approx(j["read"]["iops"]) and row["iops"] > 0
    assert row["bw"] == j["read"]["bw"] and row["lat"] == pytest.approx(j["read"]["lat_ns"]["mean"])
    assert j["read"]["total_ios"] == 2 * 8192 and j["jobs"] == 2  # numjobs merged by group_reporting
    assert j["read"]["clat_ns"]["percentile"]["99.000000"] >= j["read"]["clat_ns"]["percentile"]["50.000000"]


def test_log_files_in_fios_format(tmp_path):
    logs = tmp_path / "logs"
    logs.mkdir()
    body = ("[a]\nrw=write\nbs=128k\nsize=2g\nwrite_bw_log=a\nwrite_iops_log=a\n"
            "write_lat_log=a\nlog_avg_msec=200\n")
    r = run_fio(tmp_path, job(tmp_path, body), "--log-dir", str(logs))
    assert r.exit_code == 0, r.output
    names = sorted(p.name for p in logs.iterdir())
    assert names == ["a_bw.1.log", "a_clat.1.log", "a_iops.1.log", "a_lat.1.log", "a_slat.1.log"]
    rows = [[int(x) for x in ln.split(", ")] for ln in (logs / "a_bw.1.log").read_text().splitlines()]
    assert len(rows) >= 2 and all(len(x) == 5 and x[2] == 1 for x in rows)
    assert [x[0] for x in rows[:3]] == [200, 400, 600][:len(rows[:3])]
    # the same logs again: refused to overwrite, the existing files untouched
    before = (logs / "a_bw.1.log").read_text()
    r = run_fio(tmp_path, job(tmp_path, body), "--log-dir", str(logs))
    assert (logs / "a_bw.1.log").read_text() == before


def test_a_log_directory_no_file_can_be_made_in_is_refused_before_the_run(tmp_path):
    # procfs: a directory even root makes no file in (its mode bits do not stop root)
    r = run_fio(tmp_path, job(tmp_path, "[a]\nrw=write\nbs=128k\nsize=1g\nwrite_bw_log=a\n"), "--log-dir", "/proc")
    refused(tmp_path, r, "--log-dir /proc", "no file can be made in /proc")


@pytest.mark.parametrize("state,unwritten", [("empty", 2048), ("full", 0), ("precondition", 0)])
def test_drive_state(tmp_path, state, unwritten):
    r = run_fio(tmp_path, job(tmp_path, "[a]\nrw=randread\nbs=4k\nsize=8m\n"), "--state", state, "--json")
    assert r.exit_code == 0, r.output
    m = json.loads(r.stdout)["drives"][0]["metrics"]
    assert m["unwritten_read_ios"] == unwritten and m["read_ios"] == 2048
    s = Store(str(tmp_path / "r.sqlite"))
    ph = s.phases(s.run(s.latest_run_id())["drives"][0]["id"], with_data=False)
    assert [p["name"] for p in ph if p["kind"] == "io"] == {"empty": [], "full": ["fill-1"],
                                                             "precondition": ["fill-1", "fill-2"]}[state]


def test_several_jobs_numjobs_rates_are_run_not_refused(tmp_path):
    body = ("[global]\nbs=4k\nsize=64m\n[a]\nrw=randread\nnumjobs=4\nrate_iops=1000\ntime_based\n"
            "runtime=2\n[b]\nrw=write\nthinktime=1ms\nio_size=1m\n")
    r = run_fio(tmp_path, job(tmp_path, body), "--output-format", "json")
    assert r.exit_code == 0, r.output
    jobs = json.loads(r.stdout)["jobs"]
    assert [j["jobname"] for j in jobs] == ["a"] * 4 + ["b"]
    for j in jobs[:4]:
        assert j["read"]["total_ios"] == pytest.approx(2000, abs=2)
    assert jobs[4]["write"]["total_ios"] == 256


def _status_kb(pid: int, key: str) -> int:
    """A line of /proc/PID/status in KiB: VmData (memory allocated), VmRSS (resident)."""
    for ln in Path(f"/proc/{pid}/status").read_text().splitlines():
        if ln.startswith(key + ":"):
            return int(ln.split()[1])
    return 0


@pytest.mark.parametrize("sig,code", [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_a_job_with_no_size_runs_in_bounded_memory_and_stops_on_a_signal(tmp_path, sig, code):
    """randwrite with no size on sn520-128: the whole 128 GB, 31 M I/Os. Memory stays flat
    while it runs (the I/Os are generated as issued); a signal stops it, the run is stored
    as interrupted with the I/O it did. The drive starts full: the mapping tables take
    memory as the drive is written, up to their size, so a full drive has them whole.
    Flat is judged by the memory allocated (VmData): how much of it is resident is the
    kernel's to decide (in a busy test suite the resident size once rose by 50 MB in those
    3 s, to 313 MB: the tables, 251 MB, and the interpreter; alone it is flat from the
    fill's end)."""
    f = job(tmp_path, "[a]\nrw=randwrite\nbs=4k\niodepth=32\n")
    db = tmp_path / "r.sqlite"
    exe = Path(sys.executable).parent / "ssdlab"
    p = subprocess.Popen([str(exe), "run", "fio", str(f), "--drive", "sim:sn520-128", "--db", str(db),
                          "--state", "full", "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    with reaped(p):
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and not _fiojob_started(db):
            time.sleep(0.2)
        assert _fiojob_started(db), "the job never started"
        # the job's own CPU time, not the clock, measures how far it got: on a loaded machine
        # a second of the clock is a fraction of one of the job's
        _run_for(p.pid, 1.0)
        data1, rss1 = _status_kb(p.pid, "VmData"), _status_kb(p.pid, "VmRSS")
        _run_for(p.pid, 3.0)
        data2, rss2 = _status_kb(p.pid, "VmData"), _status_kb(p.pid, "VmRSS")
        assert p.poll() is None, "the whole drive was written already: the test needs a longer job"
        p.send_signal(sig)
        out, err = p.communicate(timeout=120)
    assert p.returncode == code, err
    assert data2 - data1 < 32 * 1024, (data1, data2, rss1, rss2)  # flat: nothing allocated per I/O
    assert rss2 < (table_bytes(profiles.load_text("sn520-128")) + (128 << 20)) / 1024  # the tables and the interpreter
    assert json.loads(out)["drives"][0]["status"] == "interrupted"
    s = Store(db, create=False)
    run = s.run(s.latest_run_id())
    assert run["status"] == "interrupted"
    (ph,) = [x for x in s.phases(run["drives"][0]["id"], with_data=False) if x["kind"] == "fiojob"]
    assert ph["status"] == "partial" and ph["totals"]["write_ios"] > 100_000


def _cpu_s(pid: int) -> float:
    """A process's user and system CPU seconds (/proc/PID/stat)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _run_for(pid: int, cpu_s: float, timeout: float = 120.0) -> None:
    """Wait until process `pid` has used `cpu_s` more seconds of CPU (or `timeout` passed)."""
    until, deadline = _cpu_s(pid) + cpu_s, time.monotonic() + timeout
    while time.monotonic() < deadline and _cpu_s(pid) < until:
        time.sleep(0.05)


def _fiojob_started(db: Path) -> bool:
    """The drive's fill is stored: the job runs from then on."""
    import sqlite3

    if not db.exists():
        return False
    try:
        c = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=1)
        try:
            return c.execute("SELECT count(*) FROM phases WHERE name LIKE 'fill%'").fetchone()[0] > 0
        finally:
            c.close()
    except sqlite3.Error:
        return False
