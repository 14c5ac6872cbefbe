"""`ssdlab serve`: a simulated drive over NBD in real time, used through fio's nbd engine
(`--drive nbd:SOCKET`) and through a kernel block device (nbdfuse + a loop device).

The fill check is the ground truth of the fio path: on a served drive whose SLC cache and
post-cache speed are known, the fio-path analysis must find what the same test finds in
virtual time. The drive is the SN520 128 GB shrunk to 2 GB with one channel (one die);
the fill test's to 1.5 GB (its cache 0.85 GB, then 0.65 GB after it: a served fill of
~17 s), programming TLC in half the profile's time (post-cache
~70-80 MB/s, not ~40: the same two phases) and SLC at 280 us (~115 MB/s, not ~200): a cache
phase far below what fio can generate here with fresh random buffers (~300 MB/s on this
shared 2-core machine) and long enough that a half-second stall of a starved fio or server
is not three segments in a row (32 segments of 47 MB), so the curve is the drive's, not
the machine's.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess

import numpy as np
import pytest
from loopdevs import attach
from nbdserve import TINY, cli, nbdkit_export, needs_nbd, served, why_not
from nbdserve import wait_for as _wait_for
from ssdlab.served import stats

SMALL = ["user_capacity_gb=2", "nand.channels=1", "nand.blocks_per_plane=88",
         "slc.dynamic_max_gb=0.5", "slc.dynamic_share=1.0"]


FILL_SMALL = [*SMALL, "user_capacity_gb=1.5", "nand.blocks_per_plane=66", "nand.native.prog_us=890",
              "nand.slc.prog_us=280"]


def metrics_of(doc: dict) -> dict:
    return doc["drives"][0]["metrics"]


def _fill_phase(st, run_id: int) -> dict:
    return [p for p in st.phases(st.run(run_id)["drives"][0]["id"]) if p["name"] == "fill"][0]


def _fill_segments(st, run_id: int) -> list[tuple[float, float, float]]:
    """(GB, MB/s, s) of each segment of a stored fill: what an assertion shows when the
    served curve and the virtual one disagree."""
    seg = _fill_phase(st, run_id)["segments"]
    return [(round(g, 3), round(m, 1), round(t, 2)) for g, m, t in zip(seg["gb"], seg["mbps"], seg["t_s"])]


@needs_nbd
@pytest.mark.serial  # a real-time curve: in the full parallel suite it twice lost its cache drop
def test_fill_through_fio_finds_what_virtual_time_finds(tmp_path):
    db = tmp_path / "r.sqlite"
    sets = [x for s in FILL_SMALL for x in ("--set", s)]
    virtual = metrics_of(json.loads(cli("run", "fill", "--drive", "sim:sn520-128", *sets, "--db", str(db),
                                        "--json").stdout))
    assert virtual["slc_cache_gb"] and virtual["slc_cache_gb"] > 0.3  # the profile has a cache to find
    with served(tmp_path, FILL_SMALL, db) as (sock, end):
        # no --destroy-data: the socket serves a simulated drive
        real = metrics_of(json.loads(cli("run", "fill", "--drive", f"nbd:{sock}", "--db", str(db),
                                         "--json").stdout))
        summary = end()
    from ssdlab.store import Store

    st = Store(db, create=False)
    curves = {r["drives"][0]: _fill_segments(st, r["id"]) for r in st.runs() if r["test"] == "fill"}
    assert real["slc_cache_gb"] == pytest.approx(virtual["slc_cache_gb"], rel=0.10), curves
    assert real["post_cache_mbps"] == pytest.approx(virtual["post_cache_mbps"], rel=0.15), curves
    m = summary["metrics"]
    # the purge reached the simulator as trims; the fill wrote the whole drive once
    cap = float(dict(x.split("=") for x in FILL_SMALL)["user_capacity_gb"]) * 1e9  # the last one set
    assert m["trims"] > 0 and m["trim_bytes"] >= 0.95 * cap
    assert m["host_write_bytes"] >= 0.995 * cap and m["waf"] >= 1.0
    assert m["lag_requests"] >= m["writes"] > 0 and 0 <= m["late"] <= m["lag_requests"]
    # the drive's counters over time are stored under the serve run
    run = st.run(summary["run_id"])
    assert run["test"] == "serve" and run["status"] == "complete"
    ph = st.phases(run["drives"][0]["id"])[0]
    assert ph["name"] == "serve"
    series = ph["data"]["time"] if "data" in ph else ph["series"]
    assert len(series["t_s"]) >= 10
    assert np.nanmax(series["slc_used_bytes"]) > 0.3e9 and np.nansum(series["host_write_bytes"]) >= 0.995 * cap
    assert "lag_p99_us" in series and "late" in series
    # and beside fio's own series of the fill, for the report (the drive's WAF, SLC, blocks)
    fill_run = [r for r in st.runs() if r["test"] == "fill" and r["drives"][0].startswith("nbd:")][0]
    fill = _fill_phase(st, fill_run["id"])
    fs = fill["data"]["time"] if "data" in fill else fill["series"]
    assert len(fs["slc_used_bytes"]) == len(fs["t_s"]) and np.nanmax(fs["slc_used_bytes"]) > 0.3e9
    assert np.nanmin(fs["free_blocks"]) < np.nanmax(fs["free_blocks"])
    assert fill["totals"]["waf"] >= 1.0


@needs_nbd
def test_reads_return_what_was_written(tmp_path):
    with served(tmp_path, TINY, tmp_path / "r.sqlite") as (sock, end):
        uri = f"nbd+unix:///?socket={sock}"
        r = subprocess.run(["fio", "--name=v", "--ioengine=nbd", f"--uri={uri}", "--rw=randwrite",
                            "--bs=4k", "--iodepth=8", "--size=32m", "--verify=crc32c",
                            "--verify_fatal=1", "--verify_state_save=0", "--thread"],
                           capture_output=True, text=True, timeout=300, cwd=tmp_path)
        assert r.returncode == 0 and "verify" not in r.stderr.lower(), r.stdout[-1500:] + r.stderr[-1500:]
        m = end()["metrics"]
    assert m["reads"] >= 8192 and m["writes"] >= 8192  # every block written, then read back


@needs_nbd
def test_a_trace_replays_on_a_served_drive(tmp_path):
    """The trace path of the fio target over the NBD transport: fio's iolog replay names
    the export by its URI; every I/O of the trace reaches the simulated drive."""
    trace = tmp_path / "t.csv"
    trace.write_text("time_s,op,offset_bytes,length_bytes\n0.0,W,0,4096\n0.001,R,0,4096\n"
                     "0.002,W,8192,65536\n0.003,R,8192,4096\n")
    with served(tmp_path, TINY, tmp_path / "s.sqlite") as (sock, end):
        r = cli("run", "trace", "--trace", str(trace), "--drive", f"nbd:{sock}",
                "--db", str(tmp_path / "r.sqlite"), "--json")
        m = metrics_of(json.loads(r.stdout))
        served_m = end()["metrics"]
    assert m["empty_ios"] == 4 and m["empty_write_bytes"] == 69632 and m["empty_read_bytes"] == 8192
    assert served_m["writes"] >= 2 and served_m["reads"] >= 2 and served_m["host_write_bytes"] >= 69632


def _why_no_blockdev() -> str | None:
    if os.geteuid() != 0:
        return "needs root (loop devices, mount)"
    for tool in ("nbdfuse", "losetup", "mkfs.ext4", "fstrim"):
        if not shutil.which(tool):
            return f"{tool} not installed (tools/sysdeps.sh test installs it)"
    for dev in ("/dev/fuse", "/dev/loop-control"):
        if not os.path.exists(dev):
            return f"no {dev}"
    return why_not()


@pytest.mark.skipif(_why_no_blockdev() is not None, reason=str(_why_no_blockdev()))
def test_filesystem_on_a_served_drive_and_its_trims(tmp_path):
    """ext4 on a loop device over nbdfuse's file: mkfs, mount, write, read back, fstrim;
    the simulator sees the filesystem's trims (its mapped data shrinks)."""
    fuse, mnt = tmp_path / "fuse", tmp_path / "mnt"
    fuse.mkdir()
    mnt.mkdir()
    with served(tmp_path, SMALL, tmp_path / "r.sqlite") as (sock, end):
        nf = subprocess.Popen(["nbdfuse", str(fuse), "--unix", str(sock)], stderr=subprocess.PIPE)
        loop = None
        mounted = False
        try:
            _wait_for(lambda: (fuse / "nbd").exists(), "nbdfuse's file")
            loop = attach(str(fuse / "nbd")).stdout.strip()
            assert loop, "losetup found no free loop device"
            subprocess.run(["mkfs.ext4", "-q", "-F", "-E", "nodiscard", loop], check=True, capture_output=True)
            subprocess.run(["mount", loop, str(mnt)], check=True)
            mounted = True
            payload = os.urandom(64 << 20)
            with open(mnt / "f", "wb") as f:
                f.write(payload)
                f.flush()
                os.fsync(f.fileno())
            subprocess.run(["sh", "-c", "echo 3 > /proc/sys/vm/drop_caches"], check=False)
            assert hashlib.sha256((mnt / "f").read_bytes()).digest() == hashlib.sha256(payload).digest()
            (mnt / "f").unlink()
            subprocess.run(["sync"], check=True)
            out = subprocess.run(["fstrim", "-v", str(mnt)], check=True, capture_output=True, text=True).stdout
            assert "trimmed" in out
        finally:
            if mounted:
                subprocess.run(["umount", str(mnt)], check=False)
            if loop:
                subprocess.run(["losetup", "-d", loop], check=False)
            subprocess.run(["umount", str(fuse)], check=False, capture_output=True)
            try:
                nf.wait(timeout=10)
            except subprocess.TimeoutExpired:
                nf.kill()
        m = end()["metrics"]
    # mkfs ran with nodiscard: every trim came from fstrim, over the free space
    assert m["trims"] > 0 and m["trim_bytes"] >= 1.5e9
    assert m["host_write_bytes"] >= 64 << 20 and m["flushes"] > 0


def test_stats_lines_become_series_and_totals():
    base = {"now_s": 1.0, "free_blocks": 10, "slc_used_bytes": 0, "slc_capacity_bytes": 5,
            "mapped_bytes": 0, "waf": None, "cmt_hit_rate": None}
    zero = {k: 0 for k in stats.DELTAS}
    rows = [
        {**base, **zero, "t_s": 1.0, "writes": 100, "write_bytes": 409600, "host_write_bytes": 409600,
         "nand_write_bytes": 819200, "i_requests": 100, "i_late": 5, "i_lag_mean_us": 10.0,
         "i_lag_p99_us": 64, "i_lag_max_us": 80.0, "i_late_lag_mean_us": 20.0, "i_late_lag_max_us": 80.0},
        {**base, **zero, "t_s": 2.0, "writes": 100, "write_bytes": 409600, "host_write_bytes": 409600,
         "nand_write_bytes": 819200, "trims": 1, "trim_bytes": 4096, "i_requests": 1, "i_late": 0,
         "i_lag_mean_us": 1.0, "i_lag_p99_us": 1, "i_lag_max_us": 1.0, "i_late_lag_mean_us": 0.0,
         "i_late_lag_max_us": 0.0, "final": True, "requests": 101, "late": 5, "lag_mean_us": 9.9,
         "lag_p99_us": 64, "lag_max_us": 80.0, "late_lag_mean_us": 20.0, "late_lag_max_us": 80.0},
    ]
    s = stats.series(rows)
    assert list(s["writes"]) == [100, 0] and list(s["trims"]) == [0, 1]
    assert s["waf"][0] == 2.0 and np.isnan(s["waf"][1])  # no host writes in the 2nd interval
    assert list(s["iops"]) == [100, 0] and list(s["late"]) == [5, 0]
    t = stats.totals(rows)
    assert t["lag_requests"] == 101 and t["late"] == 5 and t["late_pct"] == pytest.approx(100 * 5 / 101)
    assert t["iops"] == 50 and t["trims"] == 1
    # a killed plugin leaves no final line: the lag still adds up from the intervals
    t2 = stats.totals(rows[:1])
    assert t2["lag_requests"] == 100 and t2["late"] == 5


@pytest.mark.parametrize("args, words", [
    (["serve", "sim:nope"], ["unknown profile 'nope'"]),
    (["serve", "/dev/sda"], ["only a simulated drive can be served"]),
    (["serve", "sim:sn520-128", "--socket", "/tmp/x.sock", "--tcp", "1.2.3.4:5"], ["--socket or --tcp"]),
    (["serve", "sim:sn520-128", "--tcp", "localhost"], ["--tcp localhost", "HOST:PORT"]),
    (["serve", "sim:sn520-128", "--tcp", "127.0.0.1:99999"], ["port 99999 is out of range", "1 to 65535"]),
    (["serve", "sim:sn520-128", "--set", "nand.channels=0"], ["nand.channels"]),
    (["serve", "sim:sn520-128", "--seconds", "0"], ["--seconds 0"]),
    (["serve", "sim:sn520-128", "--socket", "/nonexistent/dir/x.sock"], ["does not exist"]),
    (["run", "fill", "--drive", "nbd:/nonexistent.sock"], ["no socket", "ssdlab serve"]),
])
def test_bad_input_is_one_line_exit_2(tmp_path, args, words):
    r = cli(*args, "--db", str(tmp_path / "r.sqlite"), check=False, timeout=60)
    assert r.returncode == 2, (r.stdout, r.stderr)
    err = r.stderr.strip()
    assert len(err.splitlines()) == 1 and all(w in err for w in words), err
    assert not (tmp_path / "r.sqlite").exists() or "serve" not in args[0]


@needs_nbd
def test_an_export_not_served_by_ssdlab_needs_destroy_data(tmp_path):
    sock = tmp_path / "other.sock"
    with nbdkit_export(sock, "memory", "64M"):
        r = cli("run", "fill", "--drive", f"nbd:{sock}", "--db", str(tmp_path / "r.sqlite"), check=False)
        assert r.returncode == 2 and "--destroy-data nbd:" in r.stderr, r.stderr
        ok = cli("run", "fill", "--drive", f"nbd:{sock}", "--destroy-data", f"nbd:{sock}",
                 "--db", str(tmp_path / "r.sqlite"), "--json")
        assert metrics_of(json.loads(ok.stdout))["avg_mbps"] > 0
