"""Phase -> fio job text, drive specs, the plan, and the missing-fio error. No I/O (fio,
when installed, only parses the generated jobs)."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest
from clirun import cli, environ

from ssdlab import phase as P
from ssdlab.targets.fio import jobs as fio_job
from ssdlab.targets import open_target
from ssdlab.targets.fio.target import FioTarget, writes
from ssdlab.targets.spec import parse_drive, parse_size

CAP = 256 * 2**20


def opts(text: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for line in text.splitlines():
        if "=" in line and not line.startswith(";"):
            k, _, v = line.partition("=")
            out[k.strip()] = v.strip()
    return out


def job(phase: P.Phase, **kw) -> dict[str, str]:
    return opts(fio_job.job_text(phase.resolve(CAP), "/dev/loop9", log_prefix="/tmp/x/p", **kw))


def test_fill_job():
    o = job(P.seq_write("fill", stop_bytes=CAP))
    assert o["rw"] == "write" and o["bs"] == str(128 * 1024) and o["iodepth"] == "32"
    assert o["ioengine"] == "io_uring" and o["direct"] == "1"
    assert o["refill_buffers"] == "1" and o["randrepeat"] == "0" and o["norandommap"] == "1"
    assert o["offset"] == "0" and o["size"] == str(CAP) and o["io_size"] == str(CAP)
    assert "time_based" not in o and "runtime" not in o
    assert o["log_avg_msec"] == "1000"
    for k in ("write_iops_log", "write_bw_log", "write_lat_log", "write_hist_log"):
        assert o[k] == "/tmp/x/p"
    assert int(o["log_hist_msec"]) < 1000  # the finer log for the per-GB series
    assert o["filename"] == "/dev/loop9"
    assert "allow_file_create" not in o


def test_random_write_for_seconds_is_time_based():
    o = job(P.rand_io("rw", 0, stop_seconds=2000))
    assert o["rw"] == "randwrite" and o["bs"] == "4096"
    assert o["runtime"] == "2000000ms" and o["time_based"] == "1"
    assert "io_size" not in o


@pytest.mark.parametrize("seconds, sample_s, window_ms", [
    (2000, 1.0, 100),  # the consistency test's 2000 s: 100 ms windows, as every methodology phase
    (3600, 1.0, 100),
    (86_400, 1.0, 500),  # a day: fewer windows, each interval holding a whole one
    (86_400, 10.0, 2400),  # 36 000 of them
    (86_400, 0.05, 50),  # never longer than a sample interval (as before)
])
def test_a_long_timed_phase_keeps_fewer_histogram_windows(seconds, sample_s, window_ms):
    # fio keeps every window's histogram (15 KB) of each job to its end: 100 ms windows
    # over a day would be 13 GB of fio's memory per job
    o = job(P.rand_io("rw", 0, stop_seconds=seconds, sample_interval_s=sample_s))
    assert int(o["log_hist_msec"]) == window_ms


def test_bytes_and_seconds_whichever_first():
    o = job(P.rand_io("rw", 0, stop_seconds=5, stop_bytes=10**9))
    assert o["runtime"] == "5000ms" and "time_based" not in o and int(o["io_size"]) >= 10**9


@pytest.mark.parametrize("read_pct,pattern,rw", [(100, "seq", "read"), (100, "rand", "randread"),
                                                 (70, "rand", "randrw"), (30, "seq", "rw")])
def test_read_mixes(read_pct, pattern, rw):
    ph = P.Phase(kind="io", read_pct=read_pct, pattern=pattern, stop_seconds=1)
    o = job(ph)
    assert o["rw"] == rw
    if 0 < read_pct < 100:
        assert o["rwmixread"] == str(read_pct)
    else:
        assert "rwmixread" not in o


def test_range_and_fractions():
    o = job(P.seq_write("f", stop_bytes=CAP // 2, frac_offset=0.25, frac_length=0.5))
    assert o["offset"] == str(CAP // 4) and o["size"] == str(CAP // 4)


def test_sequential_jobs_split_the_range():
    o = job(P.seq_write("f", stop_bytes=CAP, jobs=4))
    part = CAP // 4
    assert o["numjobs"] == "4" and o["size"] == str(part) and o["offset_increment"] == str(part)
    assert o["io_size"] == str(part)


def test_random_jobs_share_the_range():
    o = job(P.rand_io("r", 100, jobs=16, stop_seconds=3))
    assert o["numjobs"] == "16" and o["size"] == str(CAP) and "offset_increment" not in o


def test_data_patterns():
    assert job(P.seq_write("f", stop_bytes=CAP, data="zeros"))["zero_buffers"] == "1"
    o = job(P.seq_write("f", stop_bytes=CAP, data="compressible", compress_pct=50))
    assert o["buffer_compress_percentage"] == "50" and o["refill_buffers"] == "1"


def test_file_jobs_never_create_or_extend():
    o = opts(fio_job.job_text(P.seq_write("f", stop_bytes=CAP).resolve(CAP), "/tmp/t.bin",
                              is_file=True))
    assert o["allow_file_create"] == "0" and o["fallocate"] == "none" and o["file_append"] == "0"


def test_sample_interval_sets_log_period():
    o = job(P.Phase(kind="io", stop_seconds=3, sample_interval_s=0.5))
    assert o["log_avg_msec"] == "500"


def test_non_io_phase_rejected():
    with pytest.raises(ValueError, match="io phases"):
        fio_job.job_text(P.idle(3).resolve(CAP), "/dev/x")


def test_command_line():
    c = fio_job.command("/w/p1.fio", "fio")
    assert c[0] == "fio" and "--output-format=json+" in c and "--status-interval=1" in c
    assert c[-1] == "/w/p1.fio"


@pytest.mark.skipif(not shutil.which("fio"), reason="fio not installed (apt-get install fio)")
@pytest.mark.parametrize("ph", [P.seq_write("fill", stop_bytes=CAP), P.rand_io("c", 0, stop_seconds=9),
                                P.rand_io("m", 70, jobs=4, stop_seconds=1),
                                P.seq_read("r", jobs=2, stop_bytes=CAP, data="compressible",
                                           compress_pct=30)])
def test_fio_accepts_generated_jobs(tmp_path, ph):
    text = fio_job.job_text(ph.resolve(CAP), str(tmp_path / "f"), engine="libaio",
                            log_prefix=str(tmp_path / "p"))
    (tmp_path / "j.fio").write_text(text)
    r = subprocess.run(["fio", "--parse-only", str(tmp_path / "j.fio")], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr + r.stdout


def test_a_batch_job_runs_each_phase_as_its_own_stonewalled_job_with_its_own_logs(tmp_path):
    steps = [(P.rand_io("r01/w4k", 0, stop_seconds=1).resolve(CAP), "/tmp/x/p4"),
             (P.rand_io("r01/m8k", 65, block_size=8192, jobs=2, data="zeros", stop_seconds=1).resolve(CAP), "/tmp/x/p5")]
    text = fio_job.batch_text(steps, "/dev/loop9")
    head, *jobs = text.split("\n\n")
    g = opts(head)
    assert g["filename"] == "/dev/loop9" and g["thread"] == "1" and g["group_reporting"] == "1"
    assert "write_iops_log" not in g and "rw" not in g and "refill_buffers" not in g  # not shared
    assert [j.splitlines()[:2] for j in jobs] == [["[r01_w4k]", "stonewall"], ["[r01_m8k]", "stonewall"]]
    for (spec, prefix), j in zip(steps, jobs):
        o = opts(j)
        alone = opts(fio_job.job_text(spec, "/dev/loop9", log_prefix=prefix))
        assert {**g, **o} == alone  # the job a lone phase runs (behind its stonewall)
    if shutil.which("fio"):
        (tmp_path / "b.fio").write_text(text.replace("/tmp/x", str(tmp_path)).replace("/dev/loop9", str(tmp_path / "f")))
        r = subprocess.run(["fio", "--parse-only", str(tmp_path / "b.fio")], capture_output=True, text=True)
        assert r.returncode == 0, r.stderr + r.stdout


@pytest.mark.skipif(not shutil.which("fio"), reason="fio not installed (apt-get install fio)")
def test_engine_probe():
    fio_job._probe_engine.cache_clear()
    assert fio_job.pick_engine() in ("io_uring", "libaio", "psync")


def test_the_engine_probe_leaves_no_fio_behind_when_ssdlab_is_killed(tmp_path):
    """The probe's fio gets SIGTERM when the ssdlab process that started it is killed, as a
    run's fio does: none is left behind, orphaned (a fake fio that hangs, here)."""
    import sys
    import time

    fake, pid_file = tmp_path / "fio", tmp_path / "pid"
    fake.write_text(f"#!/bin/sh\necho $$ > {pid_file}\nexec sleep 60\n")
    fake.chmod(0o755)
    probe = subprocess.Popen([sys.executable, "-c", "from ssdlab.targets.fio.jobs import _probe_engine; "
                              f"_probe_engine({str(fake)!r})"],
                             env={**os.environ, "TMPDIR": str(tmp_path)})  # the killed probe's directory stays here
    deadline = time.monotonic() + 30
    while not (pid_file.exists() and pid_file.read_text().strip()) and time.monotonic() < deadline:
        time.sleep(0.05)
    probe.kill()
    probe.wait()
    pid = int(pid_file.read_text())
    deadline = time.monotonic() + 10
    while os.path.exists(f"/proc/{pid}") and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not os.path.exists(f"/proc/{pid}"), "the probe's fio outlived ssdlab"


def test_fio_version_is_asked_once_per_binary_as_it_is_on_disk(tmp_path):
    """Several tests in one process ask fio's version once; a fio replaced meanwhile (another
    file, another modification time) is asked again."""
    calls = tmp_path / "calls"
    fake = tmp_path / "fio"

    def put(version: str, mtime: int) -> None:
        fake.write_text(f"#!/bin/sh\necho x >> {calls}\necho {version}\n")
        fake.chmod(0o755)
        os.utime(fake, (mtime, mtime))

    put("fio-3.1", 1_000_000)
    assert [fio_job.fio_version(str(fake)) for _ in range(3)] == ["fio-3.1"] * 3
    assert calls.read_text().count("x") == 1
    put("fio-3.2", 2_000_000)
    assert fio_job.fio_version(str(fake)) == "fio-3.2" and calls.read_text().count("x") == 2
    assert fio_job.fio_version(str(tmp_path / "no-fio")) == ""


def test_engine_forced(monkeypatch):
    monkeypatch.setenv("SSDLAB_FIO_ENGINE", "libaio")
    assert fio_job.pick_engine() == "libaio"


def test_fio_missing_names_the_install_command(monkeypatch, tmp_path):
    monkeypatch.delenv("SSDLAB_FIO", raising=False)
    monkeypatch.setattr(fio_job.shutil, "which", lambda name: None)
    with pytest.raises(fio_job.FioMissing, match="apt-get install fio"):
        fio_job.fio_binary()
    with pytest.raises(ValueError, match="apt-get install fio"):
        open_target(f"file:{tmp_path}/t.bin:64M")


def test_a_named_fio_that_is_not_there_or_too_old_is_refused(monkeypatch, tmp_path):
    """SSDLAB_FIO naming no program, or a fio older than 3.0 (whose JSON has no lat_ns: its
    latencies would read 0), is refused before anything is stored, in one line."""
    monkeypatch.setenv("SSDLAB_FIO", str(tmp_path / "nofio"))
    with pytest.raises(fio_job.FioMissing, match="SSDLAB_FIO=.*nofio: no such program"):
        open_target(f"file:{tmp_path}/t.bin:64M")
    old = tmp_path / "fio"
    old.write_text("#!/bin/sh\necho fio-2.21\n")
    old.chmod(0o755)
    monkeypatch.setenv("SSDLAB_FIO", str(old))
    with pytest.raises(fio_job.FioMissing, match="fio is fio-2.21, older than fio-3.0"):
        open_target(f"file:{tmp_path}/t.bin:64M")
    db = tmp_path / "r.sqlite"
    r = cli("run", "quick", "--drive", f"file:{tmp_path}/t.bin:64M", "--destroy-data", f"file:{tmp_path}/t.bin:64M",
            "--db", str(db), env=environ(SSDLAB_FIO=str(old)))
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "older than fio-3.0" in r.stderr, r.stderr
    assert not db.exists() and not (tmp_path / "t.bin").exists()


@pytest.mark.parametrize("s,n", [("8G", 8 * 2**30), ("512M", 512 * 2**20), ("1GB", 10**9),
                                 ("1048576", 2**20), ("2GiB", 2 * 2**30)])
def test_parse_size(s, n):
    assert parse_size(s) == n


@pytest.mark.parametrize("bad", ["", "12Q", "-1G", "1k"])
def test_parse_size_rejects(bad):
    with pytest.raises(ValueError):
        parse_size(bad)


def test_parse_spec():
    d = parse_drive("/dev/sdb")
    assert (d.kind, d.path, d.size) == ("device", "/dev/sdb", None)
    d = parse_drive("file:/a:b/c.bin:1G")
    assert (d.kind, d.path, d.size) == ("file", "/a:b/c.bin", 2**30)
    with pytest.raises(ValueError, match="file:PATH:SIZE"):
        parse_drive("file:/x")


def test_file_in_missing_directory(tmp_path):
    with pytest.raises(ValueError, match="does not exist"):
        open_target(f"file:{tmp_path}/no/t.bin:1G", plan=True)


@pytest.mark.skipif(not shutil.which("fio"), reason="fio not installed (apt-get install fio)")
def test_file_larger_than_free_space_refused(tmp_path):
    free = os.statvfs(tmp_path).f_bavail * os.statvfs(tmp_path).f_frsize
    with open_target(f"file:{tmp_path}/huge.bin:{free * 4}") as t:
        with pytest.raises(ValueError, match="free; choose a smaller SIZE"):
            t.run(P.seq_write("w", stop_bytes=1 << 20))
    assert not (tmp_path / "huge.bin").exists()


def test_writes():
    assert writes(P.purge()) and writes(P.trim()) and writes(P.seq_write("f", stop_bytes=1 << 20))
    assert not writes(P.idle(1)) and not writes(P.seq_read("r", stop_bytes=1 << 20))
    assert writes(P.rand_io("m", 70, stop_seconds=1))


def test_plan_executes_nothing(tmp_path, capsys):
    path = tmp_path / "t.bin"
    phases = [P.purge(), P.seq_write("fill", stop_bytes=64 * 2**20), P.idle(2),
              P.trim(), P.rand_io("rw", 0, stop_seconds=5)]
    t = open_target(f"file:{path}:64M", plan=True)
    text = t.plan(phases)
    assert not path.exists()
    assert "fallocate --punch-hole" in text and "fio --output-format=json+" in text
    assert "rw=write" in text and "rw=randwrite" in text and "sleep 2" in text
    assert "safety: writing is allowed" in text
    r = t.run(phases[1])
    assert "rw=write" in capsys.readouterr().out and r.totals == {"planned": 1.0}
    assert not path.exists()


def test_plan_reports_a_refusal(tmp_path):
    path = tmp_path / "precious.txt"
    path.write_text("not ours")
    text = FioTarget(parse_drive(f"file:{path}:64M"), plan=True).plan([P.seq_write("f", stop_bytes=1 << 20)])
    assert "REFUSED" in text and "--destroy-data" in text
    ro = FioTarget(parse_drive(f"file:{path}:64M"), plan=True).plan([P.seq_read("r", stop_bytes=1 << 20)])
    assert "read-only" in ro
    assert path.read_text() == "not ours"


@pytest.mark.skipif(not shutil.which("fio"), reason="fio not installed (apt-get install fio)")
def test_fio_failure_is_one_clear_error(tmp_path, monkeypatch):
    monkeypatch.setenv("SSDLAB_FIO_ENGINE", "no_such_engine")
    with open_target(f"file:{tmp_path}/t.bin:1M") as t:
        with pytest.raises(RuntimeError, match="fio failed on file:.*no_such_engine"):
            t.run(P.seq_write("w", stop_bytes=1 << 20))


@pytest.mark.skipif(not shutil.which("fio"), reason="fio not installed (apt-get install fio)")
def test_small_file_target_end_to_end(tmp_path):
    """A file target runs without root: fill, random writes, read, trim, purge, idle."""
    f = tmp_path / "t.bin"
    rows = []
    with open_target(f"file:{f}:16M") as t:
        r = t.run(P.seq_write("fill", stop_bytes=16 * 2**20, segment_bytes=4 * 2**20), rows.append)
        assert r.totals["write_bytes"] == 16 * 2**20 and len(r.segments["gb"]) == 4
        r = t.run(P.rand_io("mix", 50, stop_seconds=1.5))
        assert r.totals["read_ios"] > 0 and r.totals["write_ios"] > 0
        # a whole second, then the rest of the run (fio overruns its runtime on a busy machine)
        assert len(r.series["t_s"]) == 2 and 1.4 <= r.series["t_s"][-1] < 2.0
        assert r.latency["p50_us"] <= r.latency["p99_us"]
        assert t.run(P.trim()).totals["trim_bytes"] == 16 * 2**20
        assert t.run(P.purge()).purge_method == "punch-hole"
        assert len(t.run(P.idle(0.3)).series["t_s"]) == 1
        assert t.engine_version.startswith("fio-")
    assert os.listdir(tmp_path) == ["t.bin"]
