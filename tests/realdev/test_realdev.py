"""Real block devices: loop devices on sparse files (root, losetup and fio needed).

Each test makes its own small loop devices and always detaches them (and unmounts what it
mounted), whatever happens. Runs are seconds long on 256 MiB devices."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from clirun import cli as _cli
from clirun import reaped

from loopdevs import MIB, REASON, SIZE, allocated, loops, sh  # noqa: F401  (loops: a fixture)
from loopdevs import wait_for_new_writes
from ssdlab import phase as P
from ssdlab.targets import Interrupted, open_target
from ssdlab.targets.guard import safety
from ssdlab.targets import open_target

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.realdev
if REASON:
    pytestmark = [pytest.mark.realdev, pytest.mark.skip(reason=REASON)]


def test_fill_and_consistency_through_the_target(loops):
    dev, backing = loops.make()
    samples = []
    with open_target(dev, destroy_data=dev) as t:
        ident = t.identify()
        assert ident.kind == "block" and ident.capacity == SIZE
        assert ident.extra["name"].startswith("loop") and ident.extra["discard"]
        purge = t.run(P.purge())
        assert purge.purge_method == "blkdiscard"  # type: ignore[attr-defined]
        assert "blkdiscard" in t.identify().extra["purges"]
        fill = t.run(P.seq_write("fill", stop_bytes=SIZE, segment_bytes=32 * MIB), samples.append)
        tot = fill.totals
        assert tot["write_bytes"] == SIZE and tot["read_bytes"] == 0
        assert allocated(backing) >= SIZE * 0.95  # every block of the loop device was written
        seg = fill.segments
        assert len(seg["gb"]) == 8 and seg["gb"][-1] == pytest.approx(SIZE / 1e9)
        assert (seg["mbps"] > 0).all()
        assert len(fill.series["t_s"]) >= 1 and fill.series["write_mbps"].sum() > 0
        lat = fill.latency
        assert lat["p50_us"] <= lat["p99_us"] <= lat["p99_99_us"] and lat["counts"].sum() == SIZE / 131072
        cons = t.run(P.rand_io("random", 0, stop_seconds=3))
        s = cons.series
        # three whole seconds, and a last partial interval when fio ran a few ms past its runtime
        assert s["t_s"][:3].tolist() == [1.0, 2.0, 3.0] and len(s["t_s"]) <= 4 and (s["iops"][:3] > 0).all()
        assert cons.totals["duration_s"] == pytest.approx(3.0, abs=0.2)
        assert cons.totals["iops"] > 100
        assert samples, "live samples from fio's status stream"
        assert {"t_s", "iops", "mbps", "write_mbps"} <= set(samples[0])


def test_trim_punches_holes_in_the_backing_file(loops):
    dev, backing = loops.make()
    with open_target(dev, destroy_data=dev) as t:
        t.run(P.seq_write("fill", stop_bytes=SIZE))
        full = allocated(backing)
        assert full >= SIZE * 0.95
        r = t.run(P.trim(offset=0, length=SIZE // 2))
        assert r.totals["trim_bytes"] == SIZE // 2
        half = allocated(backing)
        assert half == pytest.approx(SIZE / 2, rel=0.05)
        t.run(P.trim(frac_offset=0.5))
        assert allocated(backing) < SIZE * 0.02


def test_read_only_phase_needs_no_flag_and_writes_nothing(loops):
    dev, _ = loops.make()
    sh("mkfs.ext4", "-q", "-F", dev)
    with open_target(dev) as t:
        r = t.run(P.seq_read("read", stop_bytes=16 * MIB))
        assert r.totals["read_bytes"] == 16 * MIB and r.totals["write_bytes"] == 0
        with pytest.raises(safety.UnsafeTarget, match="ext4"):
            t.run(P.seq_write("w", stop_bytes=MIB))
    assert "ext4" in sh("blkid", "-p", "-o", "export", dev).stdout


def test_mounted_ext4_refused_even_with_the_flag(loops):
    dev, _ = loops.make()
    sh("mkfs.ext4", "-q", "-F", dev)
    loops.mount(dev)
    for dd in (None, dev):
        with pytest.raises(safety.UnsafeTarget, match="mounted"):
            safety.check_block_write(dev, dd)
        with open_target(dev, destroy_data=dd) as t:
            with pytest.raises(safety.UnsafeTarget, match="unmount it first"):
                t.run(P.seq_write("w", stop_bytes=MIB))
    # unmounted: the filesystem still needs the flag, and the flag is then enough
    sh("umount", str(loops.mounts.pop()))
    with pytest.raises(safety.UnsafeTarget, match="--destroy-data=" + dev):
        safety.check_block_write(dev, None)
    with open_target(dev, destroy_data=dev) as t:
        assert t.run(P.seq_write("w", stop_bytes=4 * MIB)).totals["write_bytes"] == 4 * MIB


def test_partition_table_refused_without_the_flag(loops):
    dev, _ = loops.make()
    sh("sfdisk", "-q", dev, input="label: gpt\n,64M\n", check=False)
    assert "gpt" in sh("blkid", "-p", "-o", "export", dev, check=False).stdout.lower()
    with open_target(dev) as t:
        with pytest.raises(safety.UnsafeTarget, match="gpt"):
            t.run(P.purge())
    other, _ = loops.make()
    with pytest.raises(safety.UnsafeTarget, match="names another device"):
        safety.check_block_write(dev, other)
    # blank is no consent either: the flag must name the device
    with pytest.raises(safety.UnsafeTarget, match="no signature found.*names another device"):
        safety.check_block_write(other, dev)
    safety.check_block_write(dev, f"{other},{dev}")  # several drives in one run
    safety.check_block_write(other, f"{other},{dev}")
    with open_target(dev, destroy_data=dev) as t:
        assert t.run(P.purge()).purge_method == "blkdiscard"  # type: ignore[attr-defined]
        t.run(P.seq_write("w", stop_bytes=4 * MIB))


def test_device_in_use_refused_even_with_the_flag(loops):
    dev, _ = loops.make()
    loops.hold_exclusive(dev)
    for dd in (None, dev):
        with pytest.raises(safety.UnsafeTarget, match="in use"):
            safety.check_block_write(dev, dd)
    holder = loops.holders.pop()
    holder.kill()
    holder.wait()  # reaped: its descriptors are closed (a fixed sleep raced the exit)
    safety.check_block_write(dev, dev)  # free again: allowed with the flag


def test_one_run_at_a_time_per_device(loops, tmp_path):
    dev, _ = loops.make()
    sh("mkfs.ext4", "-q", "-F", dev)
    mnt = tmp_path / "m"
    mnt.mkdir()
    with open_target(dev, destroy_data=dev) as t:
        # write past the filesystem's primary superblock: the ext4 stays mountable
        t.run(P.seq_write("w", offset=128 * MIB, length=MIB, stop_bytes=MIB))
        with pytest.raises(safety.DeviceLocked, match="this run already uses it"):
            open_target(dev)
        # while we own it, the kernel refuses a mount (we hold the device exclusively)
        r = sh("mount", dev, str(mnt), check=False)
        if r.returncode == 0:
            loops.mounts.append(mnt)
        assert r.returncode != 0 and "busy" in r.stderr.lower(), r.stderr
    with open_target(dev):  # released
        pass
    loops.mount(dev)  # and mountable again


def test_ctrl_c_stops_fio_and_keeps_the_partial_result(loops):
    dev, _ = loops.make()
    seen = []

    def on_sample(row):
        seen.append(row)
        if len(seen) == 2:
            raise KeyboardInterrupt

    with open_target(dev, destroy_data=dev) as t:
        t0 = time.monotonic()
        with pytest.raises(Interrupted) as ei:
            t.run(P.rand_io("random", 0, stop_seconds=30), on_sample)
        assert time.monotonic() - t0 < 15
        part = ei.value.partial
        assert part is not None and 1.0 < part.totals["duration_s"] < 10
        assert len(part.series["t_s"]) >= 1 and part.totals["write_bytes"] > 0
    assert "fio" not in sh("ps", "-o", "comm=", "--ppid", str(os.getpid()), check=False).stdout


def test_file_target_stays_inside_its_file(tmp_path):
    d = tmp_path / "fs"
    d.mkdir()
    f = d / "target.bin"
    with open_target(f"file:{f}:64M") as t:
        assert t.identify().kind == "file"
        r = t.run(P.seq_write("fill", stop_bytes=64 * MIB))
        assert r.totals["write_bytes"] == 64 * MIB
        assert allocated(f) >= 60 * MIB
        t.run(P.trim(offset=0, length=32 * MIB))
        assert allocated(f) == pytest.approx(32 * MIB, rel=0.1)
        t.run(P.rand_io("r", 0, stop_seconds=1))
        t.run(P.purge())
        assert allocated(f) < MIB
    assert sorted(os.listdir(d)) == ["target.bin"]
    assert os.path.getsize(f) == 64 * MIB
    # somebody else's file needs the flag
    other = d / "notes.txt"
    other.write_text("keep me")
    with open_target(f"file:{other}:1M") as t:
        with pytest.raises(safety.UnsafeTarget, match="--destroy-data"):
            t.run(P.seq_write("w", stop_bytes=MIB))
    assert other.read_text() == "keep me"




def _cli_ready() -> str | None:
    r = _cli("--help", timeout=60)
    return None if r.returncode == 0 else f"ssdlab CLI not importable: {r.stderr.strip()[-200:]}"


def test_fill_and_consistency_through_the_cli(loops, tmp_path):
    why = _cli_ready()
    if why:
        pytest.skip(why)
    dev, _ = loops.make()
    db = tmp_path / "results.db"
    # blank, but no consent given: refused, nothing stored
    r = _cli("run", "fill", "--drive", dev, "--db", str(db), "--json")
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "--destroy-data=" + dev in r.stderr
    r = _cli("run", "fill", "--drive", dev, "--db", str(db), "--json", "--destroy-data", dev)
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["drives"][0]["status"] == "complete"
    r = _cli("run", "consistency", "--drive", dev, "--seconds", "3", "--db", str(db), "--json",
             "--destroy-data", dev)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["drives"][0]["status"] == "complete"
    # a filesystem on it: exit status 2 with a one-line reason, and --destroy-data accepted
    sh("mkfs.ext4", "-q", "-F", dev)
    r = _cli("run", "fill", "--drive", dev, "--db", str(db), "--json")
    assert r.returncode == 2 and "--destroy-data" in r.stderr, r.stderr
    r = _cli("run", "fill", "--drive", dev, "--db", str(db), "--destroy-data", dev, "--json")
    assert r.returncode == 0, r.stderr
    r = _cli("run", "fill", "--drive", dev, "--plan")
    assert r.returncode == 0, r.stderr
    # stored like a simulated run: identity, phases with totals (the purge method among them)
    shown = json.loads(_cli("results", "show", "1", "--db", str(db), "--json").stdout)
    d = shown["drives"][0]
    assert d["identity"]["kind"] == "block" and d["identity"]["capacity"] == SIZE
    assert shown["engine_version"].startswith("fio-")
    names = [p["name"] for p in d["phases"]]
    assert names[:2] == ["purge", "fill"]
    assert d["phases"][0]["totals"]["purge_method_code"] == 4  # blkdiscard
    assert d["phases"][1]["totals"]["write_bytes"] == SIZE


def test_ctrl_c_through_the_cli_keeps_an_interrupted_run(loops, tmp_path):
    why = _cli_ready()
    if why:
        pytest.skip(why)
    dev, _ = loops.make()
    db = tmp_path / "results.db"
    returncode, out, err = _signal_consistency_run(dev, db, signal.SIGINT)
    assert returncode == 130, err
    shown = json.loads(_cli("results", "show", "1", "--db", str(db), "--json").stdout)
    assert shown["status"] == "interrupted"
    ph = shown["drives"][0]["phases"]
    assert ph[-1]["status"] == "partial" and ph[-1]["totals"]["write_bytes"] > 0
    assert ph[-1]["totals"]["duration_s"] < 30


def _sha(path: Path) -> str:
    import hashlib

    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def test_refused_device_stores_no_run_and_the_plan_says_why(loops, tmp_path):
    why = _cli_ready()
    if why:
        pytest.skip(why)
    dev, _ = loops.make()
    sh("mkfs.ext4", "-q", "-F", dev)
    db = tmp_path / "results.db"
    r = _cli("run", "consistency", "--drive", dev, "--seconds", "3", "--db", str(db), "--json")
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.count("\n") == 1 and "--destroy-data=" + dev in r.stderr, r.stderr
    # refused before the run, or even the store, was made: no `failed` run
    assert not db.exists()
    # --plan --fio-jobs: the target's own plan (safety verdict, commands, fio jobs), nothing executed
    r = _cli("run", "consistency", "--drive", dev, "--seconds", "3", "--plan", "--fio-jobs")
    assert r.returncode == 0, r.stderr
    assert "# safety: a run would be REFUSED: refusing " + dev in r.stdout
    assert f"$ blkdiscard --force {dev}" in r.stdout and "rw=randwrite" in r.stdout
    assert "[fill]" in r.stdout and "$ fio " in r.stdout
    assert "ext4" in sh("blkid", "-p", "-o", "export", dev).stdout  # untouched


def test_working_set_without_precondition_only_reads(loops, tmp_path):
    """An already filled device that carries data: working-set --no-precondition runs
    without --destroy-data and leaves every byte as it was."""
    why = _cli_ready()
    if why:
        pytest.skip(why)
    dev, backing = loops.make()
    with open_target(dev, destroy_data=dev) as t:  # fill it, as a previous run would have
        t.run(P.seq_write("fill", stop_bytes=SIZE))
    sh("mkfs.ext4", "-q", "-F", "-E", "nodiscard", dev)  # and put data on it
    before = _sha(backing)
    db = tmp_path / "results.db"
    r = _cli("run", "working-set", "--drive", dev, "--no-precondition", "--seconds", "1",
             "--plan", "--fio-jobs")
    assert r.returncode == 0 and "# safety: read-only phases, no destruction flag needed" in r.stdout
    assert "blkdiscard" not in r.stdout and "rw=randread" in r.stdout and "rw=write" not in r.stdout
    r = _cli("run", "working-set", "--drive", dev, "--no-precondition", "--seconds", "1",
             "--db", str(db), "--json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert set(doc) == {"run_id", "test", "drives"} and doc["test"] == "working-set"
    (d,) = doc["drives"]
    assert set(d) == {"drive", "metrics", "status"} and d["drive"] == dev
    assert d["status"] == "complete"
    iops = d["metrics"]["iops_by_gb"]
    assert list(iops) == ["0.27"] and iops["0.27"] > 100
    assert d["metrics"]["lat_p99_us_by_gb"]["0.27"] > 0
    assert _sha(backing) == before  # not one byte written
    shown = json.loads(_cli("results", "show", str(doc["run_id"]), "--db", str(db), "--json").stdout)
    phases = shown["drives"][0]["phases"]
    assert [p["name"] for p in phases] == ["ws_0.27", "qd1_reads"]
    assert all(p["totals"]["write_bytes"] == 0 for p in phases)
    # with its purge and fill the same test writes: refused, nothing stored
    r = _cli("run", "working-set", "--drive", dev, "--seconds", "1", "--db", str(db), "--json")
    assert r.returncode == 2 and "--destroy-data" in r.stderr
    assert len(json.loads(_cli("results", "list", "--db", str(db), "--json").stdout)) == 1
    assert _sha(backing) == before


def test_sigterm_through_the_cli_keeps_an_interrupted_run(loops, tmp_path):
    why = _cli_ready()
    if why:
        pytest.skip(why)
    dev, _ = loops.make()
    db = tmp_path / "results.db"
    returncode, out, err = _signal_consistency_run(dev, db, signal.SIGTERM, "--json")
    assert returncode == 143, err
    assert json.loads(out)["drives"][0]["status"] == "interrupted"
    shown = json.loads(_cli("results", "show", "1", "--db", str(db), "--json").stdout)
    assert shown["status"] == "interrupted"
    ph = shown["drives"][0]["phases"]
    assert [x["name"] for x in ph] == ["purge", "fill", "random"]
    assert ph[-1]["status"] == "partial" and ph[-1]["totals"]["write_bytes"] > 0
    assert ph[-1]["totals"]["duration_s"] < 30


def _stored_phases(db) -> int:
    import sqlite3

    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=1) as c:
            return c.execute("SELECT count(*) FROM phases").fetchone()[0]
    except sqlite3.Error:  # not created yet, or busy
        return 0


def _signal_consistency_run(dev: str, db, sig: int, *extra: str) -> tuple[int, str, str]:
    """Start `ssdlab run consistency` on `dev`, send `sig` a few seconds into the random
    writes, and return (exit status, stdout, stderr)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT / "python"))
    p = subprocess.Popen([sys.executable, "-m", "ssdlab.cli", "run", "consistency", "--drive", dev,
                          "--seconds", "60", "--db", str(db), "--destroy-data", dev, *extra],
                         env=env, cwd=ROOT,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         # Ctrl-C as in a terminal, even when the suite itself runs in the
                         # background (where SIGINT is ignored and children inherit that).
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    with reaped(p):
        # Signal in the random writes: once purge and fill are stored and the device has
        # taken a write since (fixed delays missed them on a loaded machine).
        deadline = time.monotonic() + 120
        while _stored_phases(db) < 2 and p.poll() is None and time.monotonic() < deadline:
            time.sleep(0.2)
        wait_for_new_writes(dev, p)
        p.send_signal(sig)
        out, err = p.communicate(timeout=60)
    return p.returncode, out, err


def test_a_file_target_a_read_only_test_cannot_create_is_refused_before_the_run(tmp_path):
    """working-set --no-precondition on a file that is not there yet makes it before the run
    is created: where it cannot (a read-only filesystem), that is one line and exit 2, not
    a `failed` run."""
    ro = tmp_path / "ro"
    ro.mkdir()
    sh("mount", "-t", "tmpfs", "-o", "ro,size=1m", "tmpfs", str(ro))
    try:
        db = tmp_path / "r.sqlite"
        r = _cli("run", "working-set", "--drive", f"file:{ro}/t.bin:8M", "--no-precondition",
                 "--seconds", "1", "--db", str(db))
        assert r.returncode == 2, r.stderr
        assert r.stderr.count("\n") == 1 and "Read-only file system" in r.stderr, r.stderr
        assert not db.exists()  # refused before the store was made
    finally:
        sh("umount", str(ro), check=False)


def test_the_stored_identity_names_the_purge_the_run_used(tmp_path):
    """docs/real-drives.md: the purge method's name is in the drive identity's `purges`. The
    identity was stored before the first phase ran, so it always read []."""
    f = tmp_path / "drive.bin"
    db = tmp_path / "results.db"
    r = _cli("run", "fill", "--drive", f"file:{f}:16M", "--destroy-data", str(f), "--db", str(db), "--json")
    assert r.returncode == 0, r.stderr
    shown = json.loads(_cli("results", "show", "-1", "--db", str(db), "--json").stdout)
    d = shown["drives"][0]
    assert d["identity"]["extra"]["purges"] == ["punch-hole"]
    assert d["phases"][0]["totals"]["purge_method_code"] == 5  # punch-hole
