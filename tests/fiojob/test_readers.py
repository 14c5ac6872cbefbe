"""fio's readers read ssdlab's output as they read fio's: fio-plot's histogram (-H), its
2D and 3D bar charts (-l, -L) and its log graphs (-g); fio's own fio_jsonplus_clat2csv
(json+ latency bins to CSV), fio-histo-log-pctiles.py (histogram logs to percentiles over
time) and fiologparser.py (bandwidth and IOPS logs summed or averaged per interval). Each is
run on the same jobs under fio's null engine and on a simulated drive. ssdlab's JSON has a
per-job "jobs" (the jobs a reporting unit merges) that fio's has not: these readers find
the job list at the top level and read what they know of each job, so it is no obstacle."""

from __future__ import annotations

import csv
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from fiojobs import SMALL

EXE = Path(sys.executable).parent
SETS = [x for s in SMALL for x in ("--set", s)]
PCTILES = Path(__file__).parent / "data" / "fio-tools" / "fio-histo-log-pctiles.py"
LOGPARSER = Path(__file__).parent / "data" / "fio-tools" / "fiologparser.py"


def _pair(where: Path, name: str, body: str, fmt: str = "json") -> None:
    """`body` run by ssdlab (where/s) and by fio's null engine (where/f), each directory
    holding the JSON as `name` and the job's log files."""
    if shutil.which("fio") is None:
        pytest.skip("fio not installed (make sysdeps)")
    for side in ("s", "f"):
        (where / side).mkdir(parents=True, exist_ok=True)
    job = where / "job.fio"
    job.write_text(body)
    r = subprocess.run([str(EXE / "ssdlab"), "run", "fio", str(job), "--drive", "sim:tlc-256", *SETS,
                        "--db", str(where / "r.sqlite"), "--output-format", fmt, "--log-dir", str(where / "s")],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    (where / "s" / name).write_text(r.stdout)
    (where / "f" / "null.fio").write_text("[global]\nioengine=null\nfilename=ssdlab-null\n" + body)
    r = subprocess.run(["fio", f"--output-format={fmt}", "null.fio"], capture_output=True, text=True,
                       cwd=where / "f", timeout=300)
    assert r.returncode == 0, r.stderr
    (where / "f" / name).write_text(r.stdout[r.stdout.index("{"):])


def _bar_job(depth: int, jobs: int) -> str:
    return (f"[randread-iodepth-{depth}-numjobs-{jobs}]\nrw=randread\nbs=4k\niodepth={depth}\n"
            f"numjobs={jobs}\nsize=64m\nio_size=8m\ngroup_reporting\n")


@pytest.fixture(scope="module")
def charts(tmp_path_factory) -> Path:
    """fio-plot's inputs: randread at depths 1 and 4 with 1 and 2 jobs (fio-plot finds the
    JSON by rw, iodepth and numjobs), and a 1 s job logging every 100 ms."""
    d = tmp_path_factory.mktemp("charts")
    for depth in (1, 4):
        for jobs in (1, 2):
            _pair(d / f"{depth}-{jobs}", f"randread-{depth}-{jobs}.json", _bar_job(depth, jobs))
    logs = "randread-iodepth-4-numjobs-1"
    _pair(d / "logs", "randread-4-1.json",
          f"[{logs}]\nrw=randread\nbs=4k\niodepth=4\nnumjobs=1\nsize=64m\ntime_based\nruntime=1\n"
          f"rate_iops=2000\nlog_avg_msec=100\nwrite_lat_log={logs}\nwrite_bw_log={logs}\nwrite_iops_log={logs}\n")
    for side in ("s", "f"):  # the bar charts read one directory of every depth and job count
        for depth in (1, 4):
            for jobs in (1, 2):
                src = d / f"{depth}-{jobs}" / side / f"randread-{depth}-{jobs}.json"
                (d / side).mkdir(exist_ok=True)
                shutil.copy(src, d / side / src.name)
    return d


# one worker draws every chart: the module fixture runs fio and ssdlab once
@pytest.mark.xdist_group("fio-plot")
@pytest.mark.parametrize("mode,args,where", [
    ("-H", ["-d", "4", "-n", "1"], ""),
    ("-l", ["-d", "1", "4", "-n", "1"], ""),
    ("-L", ["-d", "1", "4", "-n", "1", "2", "-t", "iops"], ""),
    ("-g", ["-d", "4", "-n", "1", "-t", "lat", "iops", "bw"], "logs"),
])
def test_fio_plot_charts_ssdlab_as_it_charts_fio(charts, mode, args, where):
    """fio-plot's histogram needs fio's latency buckets (ssdlab's were empty: fio-plot
    failed with a shape mismatch); its log graphs need entries in every log."""
    for side in ("s", "f"):
        d = charts / where / side
        out = d / f"chart{mode}.png"
        r = subprocess.run([str(EXE / "fio-plot"), "-i", str(d), "-T", "t", "-r", "randread", mode, *args,
                            "-o", str(out)], capture_output=True, text=True, timeout=300, cwd=d)
        assert r.returncode == 0 and out.stat().st_size > 1000, (side, r.stdout[-500:], r.stderr[-500:])


def test_fio_jsonplus_clat2csv_reads_ssdlabs_bins(tmp_path):
    """fio's json+ to CSV tool: a row per latency bin, its cumulative count reaching every
    I/O (ssdlab's json+ was refused, its JSON had no bins: a header-only CSV)."""
    tool = shutil.which("fio_jsonplus_clat2csv")
    if tool is None:
        pytest.skip("fio_jsonplus_clat2csv not installed (the fio package)")
    _pair(tmp_path, "plus.json", "[a]\nrw=randrw\nbs=4k\niodepth=4\nsize=16m\n", "json+")
    for side in ("s", "f"):
        d = tmp_path / side
        r = subprocess.run([tool, "plus.json", "out.csv"], capture_output=True, text=True, cwd=d, timeout=120)
        assert r.returncode == 0, r.stderr
        rows = list(csv.reader((d / "out_job0.csv").open(), skipinitialspace=True))
        job = json.loads((d / "plus.json").read_text())["jobs"][0]
        assert ("jobs" in job) == (side == "s")  # ssdlab's own key, read past
        for name in ("read", "write"):
            col = rows[0].index(f"{name}_clat_ns_cumulative")
            reached = max(int(r[col]) for r in rows[1:] if r[col])
            assert len(rows) > 2 and reached == job[name]["total_ios"] > 0, (side, name)


def test_fio_histo_log_pctiles_reads_ssdlabs_histogram_logs(tmp_path):
    """fio's histogram log reader: percentiles per second from `write_hist_log` (ssdlab
    wrote none); the samples per second match fio's (the same rate)."""
    _pair(tmp_path, "a.json", "[a]\nrw=randrw\nbs=4k\niodepth=4\nsize=64m\ntime_based\nruntime=2\n"
                              "rate_iops=2000\nwrite_hist_log=a\nlog_hist_msec=500\n")
    samples = {}
    for side in ("s", "f"):
        d = tmp_path / side
        r = subprocess.run([sys.executable, str(PCTILES), "a_clat_hist.1.log"], capture_output=True, text=True,
                           cwd=d, timeout=120)
        assert r.returncode == 0, r.stdout + r.stderr
        rows = [ln.split(",") for ln in r.stdout.splitlines() if ln.strip()[:1].isdigit()]
        assert len(rows) >= 2, r.stdout
        samples[side] = [int(x[1]) for x in rows]
        assert all(float(x[2]) <= float(x[3]) <= float(x[6]) for x in rows)  # min <= median <= max
    # the rate's 4 000 I/Os a second, in the windows each side logged
    assert sum(samples["s"]) == pytest.approx(sum(samples["f"]), rel=0.05)


@pytest.mark.parametrize("mode", ["-s", "-a"])
def test_fiologparser_reads_ssdlabs_bandwidth_and_iops_logs(tmp_path, mode):
    """fio's log parser sums (-s) or averages (-a) the bandwidth and IOPS logs per second:
    ssdlab's give the rate's figures."""
    _pair(tmp_path, "a.json", "[a]\nrw=randread\nbs=4k\nsize=64m\ntime_based\nruntime=2\nrate_iops=2000\n"
                              "log_avg_msec=100\nwrite_bw_log=a\nwrite_iops_log=a\n")
    out = {}
    for side in ("s", "f"):
        r = subprocess.run([sys.executable, str(LOGPARSER), mode, "a_bw.1.log", "a_iops.1.log"],
                           capture_output=True, text=True, cwd=tmp_path / side, timeout=120)
        assert r.returncode == 0, r.stderr
        rows = [[float(x) for x in ln.split(",")[:2]] for ln in r.stdout.splitlines() if ln.strip()]
        # fio, on a loaded machine, may flush one more window a few ms past the 2 s
        # (a row at 2003 ms): ssdlab's rows are the seconds' own, fio's up to 2 s compared
        out[side] = [v for t, v in rows if t <= 2000 or side == "s"]
        assert len(out[side]) == 2, r.stdout  # a row per second of the 2 s job
    # each second the rate's 2000 IOPS and 8000 KiB/s, summed or averaged
    rate = {"-s": 2000 + 8000, "-a": (2000 + 8000) / 2}[mode]
    assert out["s"] == pytest.approx([rate, rate], rel=0.02)
    # fio's own logs give the same figures on a quiet host only: on a busy one fio falls
    # behind its rate and catches up in bursts, which its 100 ms windows log at their own
    # rate (beside four busy loops: 12 683 and 81 404 for the 10 000 of a second). What is
    # compared with fio is what its reader makes of both: a row for each second.
