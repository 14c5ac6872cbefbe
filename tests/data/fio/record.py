"""Re-record the fio outputs the parsing tests use (needs fio; writes only under /tmp and
this directory). Run: python tests/data/fio/record.py"""

import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).parent


def run(name, job, args=("--output-format=json+", "--status-interval=1", "--eta=never"), interrupt_after=None):
    with tempfile.TemporaryDirectory(prefix="ssdlab-rec-") as d:
        f = Path(d) / "data.bin"
        with open(f, "wb") as fh:
            fh.truncate(64 * 2**20)
        prefix = Path(d) / "p"
        jp = Path(d) / "job.fio"
        jp.write_text(job.format(file=f, prefix=prefix))
        p = subprocess.Popen(["fio", *args, str(jp)], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        if interrupt_after:
            time.sleep(interrupt_after)
            p.send_signal(signal.SIGINT)
        out, err = p.communicate()
        out_dir = HERE / name
        shutil.rmtree(out_dir, ignore_errors=True)
        out_dir.mkdir()
        (out_dir / "stdout.txt").write_bytes(out)
        (out_dir / "stderr.txt").write_bytes(err)
        (out_dir / "job.fio").write_text(job)
        for log in Path(d).glob("p_*.log"):
            if "_slat." in log.name or "_clat." in log.name:
                continue  # not used by ssdlab
            shutil.copy(log, out_dir / log.name)
        print(name, p.returncode, len(out))


LOGS = """write_iops_log={prefix}
write_bw_log={prefix}
write_lat_log={prefix}
log_avg_msec=1000
write_hist_log={prefix}
log_hist_msec=100
log_hist_coarseness=3
"""
COMMON = """[global]
ioengine={engine}
direct=1
filename={{file}}
refill_buffers=1
randrepeat=0
norandommap=1
group_reporting=1
lat_percentiles=1
percentile_list=50:90:99:99.9:99.99
""" + LOGS

if __name__ == "__main__":
    if not shutil.which("fio"):
        sys.exit("fio is not installed: apt-get install fio")
    base = COMMON.format(engine="io_uring", prefix="{prefix}")
    # two jobs of random writes, 2.5 s: several status objects, per-job logs, a partial last second
    run("randwrite_2jobs", base + "[w]\nrw=randwrite\nbs=4k\niodepth=16\nnumjobs=2\nsize=64m\nruntime=2500ms\ntime_based=1\n")
    # mixed read/write: percentiles merged across directions
    run("randrw70", base + "[m]\nrw=randrw\nrwmixread=70\nbs=4k\niodepth=8\nsize=64m\nruntime=2s\ntime_based=1\n")
    # a sequential fill shorter than one log interval: empty iops/bw logs
    run("short_fill", base + "[f]\nrw=write\nbs=128k\niodepth=32\nsize=64m\nio_size=64m\n")
    # warnings printed on stdout before the JSON (synchronous engine with iodepth > 1)
    run("warnings", COMMON.format(engine="psync", prefix="{prefix}")
        + "[s]\nrw=randread\nbs=4k\niodepth=4\nsize=64m\nruntime=1s\ntime_based=1\n")
    # stopped by SIGINT (what Ctrl-C does) after 1.6 s of a 10 s run
    run("interrupted", base + "[i]\nrw=randwrite\nbs=4k\niodepth=16\nsize=64m\nruntime=10s\ntime_based=1\n",
        interrupt_after=1.6)
