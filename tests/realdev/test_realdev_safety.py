"""What the reliability audit broke on loop devices, and must hold: nothing is
written without consent or while something uses the device, and nothing measured is lost
to a signal. Each test makes its own loop devices (tests/loopdevs.py) and checks the bytes
it must not touch."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import clirun
import pytest
from refusals import one_line_error, sha

import dbpoll
from loopdevs import MIB, REASON, attach, loops, partitioned, sh  # noqa: F401  (loops: a fixture)
from loopdevs import wait_for_new_writes
from ssdlab import phase as P
from ssdlab.targets.guard import safety
from ssdlab.targets import open_target
from ssdlab.targets.fio.target import FioFailed

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.realdev
if REASON:
    pytestmark = [pytest.mark.realdev, pytest.mark.skip(reason=REASON)]


def cli(*args: str, timeout: float = 300, cwd: Path = ROOT, env: dict | None = None):
    return clirun.cli(*args, timeout=timeout, cwd=cwd, env=clirun.environ(**(env or {})))






# ---- item 1: a ':' in a file target's path -------------------------------------------------
def test_colon_in_a_file_path_writes_that_file_only(tmp_path):
    d = tmp_path / "ft"
    d.mkdir()
    co = d / "co"
    co.write_bytes(os.urandom(MIB))  # the user's data: fio used to read `co:lon.bin` as two files
    before = sha(co)
    work = tmp_path / "cwd"
    work.mkdir()
    # a fill: purge (a punched hole), then sequential writes through fio
    r = cli("run", "fill", "--drive", f"file:{d}/co:lon.bin:64M", "--db", str(tmp_path / "r.sqlite"),
            "--json", cwd=work)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["drives"][0]["status"] == "complete"
    assert sha(co) == before and sorted(os.listdir(d)) == ["co", "co:lon.bin"]
    assert os.listdir(work) == []  # no `lon.bin` next to the caller
    assert os.path.getsize(d / "co:lon.bin") == 64 * MIB


# ---- item 2: devices stacked on the device, other writers ----------------------------------
def test_device_under_a_mounted_loop_device_is_refused(loops, tmp_path):
    dev, _ = loops.make()
    top = loops.stack(dev)  # losetup on the device itself: not listed in sysfs holders/
    sh("mkfs.ext4", "-q", "-F", top)
    mnt = loops.mount(top)
    (mnt / "precious.txt").write_text("hello")
    sh("sync")
    for dd in (None, dev):
        with pytest.raises(safety.UnsafeTarget, match=f"mounted \\({top} on {mnt}\\)"):
            safety.check_block_write(dev, dd)
    r = cli("run", "fill", "--drive", dev, "--destroy-data", dev, "--db", str(tmp_path / "r.sqlite"))
    one_line_error(r, "mounted", top)
    r = cli("run", "fill", "--drive", dev, "--destroy-data", dev, "--plan")
    assert "# safety: a run would be REFUSED" in r.stdout and top in r.stdout
    sh("umount", str(loops.mounts.pop()))
    # unmounted, the loop device on top still uses it
    with pytest.raises(safety.UnsafeTarget, match=f"loop device {top} is set up on it"):
        safety.check_block_write(dev, dev)
    assert sh("fsck.ext4", "-n", top, check=False).returncode == 0  # the filesystem is intact
    loops.detach(top)
    safety.check_block_write(dev, dev)  # nothing on top any more: allowed with the flag


def test_device_open_for_writing_elsewhere_is_refused(loops):
    dev, _ = loops.make()
    code = ("import os,sys,time; fd=os.open(sys.argv[1], getattr(os, sys.argv[2])); "
            "print('open', flush=True); time.sleep(120)")
    for mode, refused in (("O_RDWR", True), ("O_WRONLY", True), ("O_RDONLY", False)):
        p = subprocess.Popen([sys.executable, "-c", code, dev, mode], stdout=subprocess.PIPE, text=True)
        try:
            assert p.stdout.readline().strip() == "open"
            if refused:
                with pytest.raises(safety.UnsafeTarget,
                                   match=f"open for writing by another process \\(pid {p.pid} "):
                    safety.check_block_write(dev, dev)
            else:  # a reader (a backup tool reading it, say) is no reason to refuse
                safety.check_block_write(dev, dev)
        finally:
            p.kill()
            p.wait()


def test_a_partition_of_a_disk_another_process_writes_is_refused(loops):
    """A VM or `dd` writing the whole disk writes its partitions too."""
    dev, _ = loops.make(32 * MIB, None, "--partscan")
    with partitioned(dev, "label: gpt\n,8M\n") as (part,):
        writer = subprocess.Popen([sys.executable, "-c", "import os,sys,time; fd=os.open(sys.argv[1], os.O_RDWR); "
                                   "print('open', flush=True); time.sleep(120)", dev], stdout=subprocess.PIPE, text=True)
        try:
            assert writer.stdout.readline().strip() == "open"
            with pytest.raises(safety.UnsafeTarget, match=f"open for writing by another process .pid {writer.pid} "):
                safety.check_block_write(part, part)
            writer.kill()
            writer.wait()
            safety.check_block_write(part, part)  # once it is closed
        finally:
            writer.kill()
            writer.wait()


def test_a_loop_device_whose_file_another_process_writes_is_refused(loops):
    """The file is the device's data: another ssdlab run testing it as a file target, or a
    VM using the image itself, writes the device."""
    dev, img = loops.make(32 * MIB)
    writer = subprocess.Popen([sys.executable, "-c", "import os,sys,time; fd=os.open(sys.argv[1], os.O_RDWR); "
                               "print('open', flush=True); time.sleep(120)", str(img)], stdout=subprocess.PIPE, text=True)
    try:
        assert writer.stdout.readline().strip() == "open"
        with pytest.raises(safety.UnsafeTarget, match=f"open for writing by another process .pid {writer.pid} "):
            safety.check_block_write(dev, dev)
    finally:
        writer.kill()
        writer.wait()
    safety.check_block_write(dev, dev)  # once it is closed


def test_a_partition_beside_a_mounted_one_is_written_as_on_any_disk(loops, tmp_path):
    """A loop device's partitions have its file too: the disk is no "loop device set up on
    the same file" of its own partition. One partition mounted leaves the other writable,
    as on a SATA or NVMe disk; the disk held by another run still refuses it."""
    dev, _ = loops.make(64 * MIB, None, "--partscan")
    with partitioned(dev, "label: gpt\n,24M\n,24M\n"), contextlib.ExitStack() as unmount:
        unmount.callback(loops.mounts.clear)
        unmount.callback(lambda: [sh("umount", str(m), check=False) for m in reversed(loops.mounts)])
        sh("mkfs.ext4", "-q", "-F", f"{dev}p1")
        loops.mount(f"{dev}p1")
        safety.check_block_write(f"{dev}p2", f"{dev}p2")
        with pytest.raises(safety.UnsafeTarget, match="mounted"):
            safety.check_block_write(dev, dev)
        for m in reversed(loops.mounts):
            sh("umount", str(m))
        loops.mounts.clear()
        loops.hold_exclusive(dev)
        with pytest.raises(safety.UnsafeTarget, match="in use|held exclusively"):
            safety.check_block_write(f"{dev}p2", f"{dev}p2")


# ---- item 3: consent, whatever the signature probe says --------------------------------------
def test_blank_or_unprobeable_devices_need_the_flag(loops, tmp_path):
    dev, backing = loops.make()
    with pytest.raises(safety.UnsafeTarget, match="no signature found.*--destroy-data=" + dev):
        safety.check_block_write(dev, None)
    sh("mkfs.ext4", "-q", "-F", dev)
    before = sha(backing)
    fake = tmp_path / "fakebin"
    fake.mkdir()
    for tool, code in (("wipefs", 1), ("blkid", 2)):  # failing probes, as on a dying disk
        f = fake / tool
        f.write_text(f"#!/bin/sh\necho '{tool}: {dev}: I/O error' >&2\nexit {code}\n")
        f.chmod(0o755)
    env = {"PATH": f"{fake}:{os.environ['PATH']}"}
    r = cli("run", "fill", "--drive", dev, "--plan", env=env)
    assert "# safety: a run would be REFUSED" in r.stdout and "contents are unknown" in r.stdout, r.stdout
    r = cli("run", "fill", "--drive", dev, "--db", str(tmp_path / "r.sqlite"), env=env)
    one_line_error(r, "contents are unknown", "--destroy-data=" + dev)
    assert sha(backing) == before
    r = cli("run", "fill", "--drive", dev, "--destroy-data", dev, "--plan", env=env)
    assert "# safety: writing is allowed" in r.stdout


def test_consent_through_another_users_link_is_no_consent(loops, tmp_path):
    """--destroy-data through a symlink another user planted (in a sticky directory, as in
    /tmp) consents to nothing, as --drive through one names no drive."""
    if not shutil.which("runuser"):
        pytest.skip("needs runuser (a second account)")
    dev, backing = loops.make(32 * MIB)
    before = sha(backing)
    sticky = Path(tempfile.mkdtemp(prefix="ssdlab-sticky-", dir="/tmp"))
    try:
        os.chmod(sticky, 0o1777)
        link = sticky / "disk"
        sh("runuser", "-u", "nobody", "--", "ln", "-s", dev, str(link))
        with pytest.raises(safety.UnsafeTarget, match=f"{link} is a symlink owned by uid"):
            safety.check_block_write(dev, str(link))
        r = cli("run", "fill", "--drive", dev, "--destroy-data", str(link), "--db", str(tmp_path / "r.sqlite"))
        one_line_error(r, f"{link} is a symlink owned by uid", "another user")
    finally:
        shutil.rmtree(sticky, ignore_errors=True)
    assert sha(backing) == before


# ---- item 5: read-only devices -------------------------------------------------------------
def test_read_only_device_is_refused_before_the_run(loops, tmp_path):
    dev, backing = loops.make(32 * MIB, None, "--read-only")
    with pytest.raises(safety.UnsafeTarget, match="read-only"):
        safety.check_block_write(dev, dev)
    r = cli("run", "fill", "--drive", dev, "--destroy-data", dev, "--plan")
    assert r.returncode == 0 and "REFUSED" in r.stdout and "read-only" in r.stdout
    db = tmp_path / "r.sqlite"
    r = cli("run", "fill", "--drive", dev, "--destroy-data", dev, "--db", str(db))
    one_line_error(r, "read-only")
    assert not db.exists()  # refused before the store was made
    # reading it is fine
    with open_target(dev) as t:
        assert t.run(P.seq_read("r", stop_bytes=4 * MIB)).totals["read_bytes"] == 4 * MIB
    r = cli("run", "fill", "--drive", dev, "--drive", dev, "--destroy-data", dev, "--plan")
    one_line_error(r, "the same drive")


# ---- item 8: signals ---------------------------------------------------------------------
def _phases_stored(db: Path) -> int:
    return dbpoll.count(db, "SELECT count(*) FROM phases")


def _start_consistency(dev: str, db: Path) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=str(ROOT / "python"))
    p = subprocess.Popen([sys.executable, "-m", "ssdlab.cli", "run", "consistency", "--drive", dev,
                          "--destroy-data", dev, "--seconds", "60", "--db", str(db)], env=env,
                         cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + 120
    while _phases_stored(db) < 2 and p.poll() is None and time.monotonic() < deadline:
        time.sleep(0.2)
    # into the random writes: the device took a write after the fill was stored (a fixed
    # 1.5 s could end before fio had started on a loaded machine)
    try:
        wait_for_new_writes(dev, p)
    except BaseException:
        p.kill()
        p.wait()
        raise
    return p


def test_repeated_ctrl_c_keeps_the_partial_phase(loops, tmp_path):
    dev, _ = loops.make()
    db = tmp_path / "r.sqlite"
    p = _start_consistency(dev, db)
    with clirun.reaped(p):
        for gap in (0.0, 0.05, 0.3, 0.01, 0.2, 0.5, 0.02):  # a user hammering Ctrl-C
            time.sleep(gap)
            p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=90)
    assert p.returncode == 130, err
    assert err == "ssdlab: run 1 interrupted; what was recorded is kept\n", err
    shown = json.loads(cli("results", "show", "1", "--db", str(db), "--json").stdout)
    assert shown["status"] == "interrupted" and shown["drives"][0]["status"] == "interrupted"
    ph = shown["drives"][0]["phases"]
    assert [x["name"] for x in ph] == ["purge", "fill", "random"]
    assert ph[-1]["status"] == "partial" and ph[-1]["totals"]["write_bytes"] > 0


def test_a_killed_run_reads_as_stale_and_leaves_nothing_behind(loops, tmp_path):
    dev, _ = loops.make()
    db = tmp_path / "r.sqlite"
    p = _start_consistency(dev, db)
    p.kill()
    p.wait()
    r = cli("results", "list", "--db", str(db), "--json")
    (run,) = json.loads(r.stdout)
    assert run["status"] == "stale" and run["pid"] == p.pid
    assert json.loads(cli("results", "show", "1", "--db", str(db), "--json").stdout)["status"] == "stale"
    # fio follows its parent (PR_SET_PDEATHSIG: SIGTERM; its jobs are threads, so none is
    # left writing on, as forked job processes were until their runtime ended); until it
    # has, the device is refused as open for writing by another process
    deadline = time.monotonic() + 60  # fio stops after its in-flight I/O: slow when loaded
    while _holders(dev) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert _holders(dev) == []
    # the device is free again, and the killed run's fio work directory is cleaned up
    r = cli("run", "trim", "--drive", dev, "--destroy-data", dev, "--seconds", "1", "--db", str(db))
    assert r.returncode == 0, r.stderr
    import tempfile

    assert not list(Path(tempfile.gettempdir()).glob(f"ssdlab-fio-{p.pid}-*"))


def _running(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_members_of_a_killed_fleet_stop_and_keep_what_they_recorded(loops, tmp_path):
    """SIGKILL of `run --fleet` (a CI timeout, the OOM killer) reaches each member as
    SIGTERM: it stores the phase cut short and ends, instead of writing its drive on for
    the rest of the test."""
    devs = [loops.make(32 * MIB)[0] for _ in range(2)]
    db = tmp_path / "r.sqlite"
    p = clirun.start("run", "consistency", "--fleet", *[x for d in devs for x in ("--drive", d)],
                     "--destroy-data", ",".join(devs), "--seconds", "600", "--db", str(db))
    pids: list[int] = []
    try:
        with clirun.reaped(p):
            pids = [int(p.stderr.readline().rsplit("pid ", 1)[1].rstrip(")\n")) for _ in devs]
            deadline = time.monotonic() + 120
            while _phases_stored(db) < 4 and p.poll() is None and time.monotonic() < deadline:
                time.sleep(0.2)
            for d in devs:  # both into their random writes
                wait_for_new_writes(d, p)
            p.kill()
        deadline = time.monotonic() + 60
        while any(map(_running, pids)) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not any(map(_running, pids))
    finally:
        for x in filter(_running, pids):
            os.kill(x, signal.SIGKILL)
    runs = json.loads(cli("results", "list", "--db", str(db), "--json").stdout)
    assert [r["status"] for r in runs] == ["interrupted", "interrupted"], runs


def test_fio_never_starts_when_ssdlab_died_before_its_death_signal_was_set(monkeypatch):
    """PR_SET_PDEATHSIG is set in the child after the fork: if ssdlab was killed in between,
    no signal would come, so the child must see its parent changed and exit, not exec fio."""
    from ssdlab.targets import child

    assert subprocess.run(["true"], preexec_fn=child.die_with_parent()).returncode == 0
    # a parent that is not this process: as if ssdlab had died and the child been re-parented
    monkeypatch.setattr(os, "getpid", lambda: 2**22 + 1)
    orphan = child.die_with_parent()
    monkeypatch.undo()
    assert subprocess.run(["true"], preexec_fn=orphan).returncode == 1


def _holders(dev: str) -> list[str]:
    """Commands of the processes that have `dev` open."""
    rdev = os.stat(dev).st_rdev
    out = []
    for pid in (x for x in os.listdir("/proc") if x.isdigit()):
        try:
            for fd in os.listdir(f"/proc/{pid}/fd"):
                st = os.stat(f"/proc/{pid}/fd/{fd}")
                if stat.S_ISBLK(st.st_mode) and st.st_rdev == rdev:
                    out.append(Path(f"/proc/{pid}/comm").read_text().strip())
                    break
        except OSError:
            continue
    return out


# ---- item 9: fio's final report torn, exit 0 -------------------------------------------------
TRUNCATING_FIO = """#!/bin/sh
# real fio, whose final report is cut ({how}) and whose exit status is 0
for job; do :; done  # the job file is fio's last argument
{slow}
out=$(fio "$@")
printf '%s' "$out" | {cut}
exit 0
"""
# 64 MiB at 24 MB/s: status reports at 1 and 2 s, the final one at 2.7 s, so the first status
# report (the only one kept) is well short of the end whatever the machine's speed
RATE_LIMITED = "sed -i 's/^\\[global\\]$/[global]\\nrate=24m/' \"$job\""
FIRST_REPORT_ONLY = "awk '{print} /^}$/ {exit}'"


@pytest.mark.parametrize("how, slow, cut", [
    ("torn mid-object", "", "head -c -300"),
    ("missing: only the first status report", RATE_LIMITED, FIRST_REPORT_ONLY),
])
def test_a_torn_final_report_is_an_error(tmp_path, monkeypatch, how, slow, cut):
    fake = tmp_path / "fio"
    fake.write_text(TRUNCATING_FIO.format(how=how, slow=slow, cut=cut))
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("SSDLAB_FIO", str(fake))
    monkeypatch.setenv("SSDLAB_FIO_ENGINE", "libaio")
    with open_target(f"file:{tmp_path}/t.bin:64M") as t:
        with pytest.raises(FioFailed, match="incomplete|moved .* of its"):
            t.run(P.seq_write("w", stop_bytes=64 * MIB, block_size=4096, queue_depth=1))


# ---- one file under several names: loop devices over the same image, and the image itself ----
def test_a_loop_device_whose_file_another_loop_device_uses_is_refused(loops, tmp_path):
    dev, img = loops.make()
    alias = attach(str(img)).stdout.strip()  # the same file, again
    loops.devs.insert(0, alias)
    safety.check_block_write(dev, dev)  # an alias nobody uses is no reason to refuse
    sh("mkfs.ext4", "-q", "-F", alias)
    mnt = loops.mount(alias)
    with pytest.raises(safety.UnsafeTarget, match=f"{alias} is set up on the same file and is mounted"):
        safety.check_block_write(dev, dev)
    r = cli("run", "fill", "--drive", dev, "--destroy-data", dev, "--plan")
    assert "# safety: a run would be REFUSED" in r.stdout and alias in r.stdout, r.stdout
    r = cli("run", "fill", "--drive", dev, "--destroy-data", dev, "--db", str(tmp_path / "r.sqlite"))
    one_line_error(r, alias, "same file")
    sh("umount", str(mnt))
    loops.mounts.remove(mnt)
    loops.hold_exclusive(dev)  # dev under test (its O_EXCL claim): its alias is not written meanwhile
    with pytest.raises(safety.UnsafeTarget, match=f"{dev} is set up on the same file and is held exclusively"):
        safety.check_block_write(alias, alias)


def test_the_image_of_a_loop_device_is_not_a_file_target(loops, tmp_path):
    dev, img = loops.make()
    before = sha(img)
    hard = tmp_path / "other-name.img"
    os.link(img, hard)  # the same inode by another name
    for f in (img, hard):
        r = cli("run", "fill", "--drive", f"file:{f}:1M", "--destroy-data", str(f), "--db", str(tmp_path / "r.sqlite"))
        one_line_error(r, f"loop device {dev} is set up on it")
    assert sha(img) == before


def test_an_active_swap_file_is_not_a_file_target(tmp_path):
    """Refused before the run is created, as an active swap device is (the kernel would
    fail the purge with ETXTBSY, and the run with it)."""
    sw = tmp_path / "swap.img"
    with open(sw, "wb") as fh:
        fh.write(bytes(4 * MIB))
    sw.chmod(0o600)
    sh("mkswap", str(sw))
    if sh("swapon", str(sw), check=False).returncode != 0:
        pytest.skip(f"swapon refused a file on {tmp_path}'s filesystem")
    try:
        before = sha(sw)
        db = tmp_path / "r.sqlite"
        r = cli("run", "fill", "--drive", f"file:{sw}:4M", "--destroy-data", str(sw), "--db", str(db))
        one_line_error(r, "active swap", "swapoff")
        assert sha(sw) == before
        assert not db.exists()  # refused before the store was made
    finally:
        sh("swapoff", str(sw), check=False)


def test_a_loop_devices_plan_shows_what_to_type_and_the_refusal_says_it(loops, tmp_path, monkeypatch):
    """A loop device has no serial: the plan shows its backing file as such, and the
    --destroy-data that lets a run write it (the device written, not the file it is set up
    on); naming the file is refused with exactly what to type, before anything is stored."""
    dev, img = loops.make(64 * MIB)
    db = tmp_path / "r.sqlite"
    r = cli("run", "fill", "--drive", dev, "--plan", "--db", str(db))
    assert r.returncode == 0, r.stderr
    assert f"backing file {img}" in r.stdout and f"serial {img}" not in r.stdout
    assert f"# to let a run write it, pass --destroy-data={dev}\n" in r.stdout
    assert f"if you mean to erase it, pass --destroy-data={dev}\n" in r.stdout
    # with the consent given, the plan says writing is allowed and asks for nothing more
    r = cli("run", "fill", "--drive", dev, "--plan", f"--destroy-data={dev}", "--db", str(db))
    assert r.returncode == 0, r.stderr
    assert "# safety: writing is allowed\n" in r.stdout and "to let a run write it" not in r.stdout
    r = cli("run", "fill", "--drive", dev, f"--destroy-data={img}", "--db", str(db))
    assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr
    assert (f"--destroy-data={img} is the file {dev} is set up on, not the device written: "
            f"pass --destroy-data={dev} to erase it") in r.stderr
    assert "serial" not in r.stderr and not db.exists()
    other, _ = loops.make(64 * MIB)
    with pytest.raises(safety.UnsafeTarget, match=f"names another device; pass --destroy-data={dev} "
                       "to erase this one"):
        safety.check_block_write(dev, other)
    r = cli("run", "fill", "--drive", dev, f"--destroy-data={dev}", "--plan", "--db", str(db))
    assert "# safety: writing is allowed" in r.stdout, r.stdout
    monkeypatch.setattr(safety, "serial_of", lambda name: "S3Z9NB0K")  # a drive with a serial
    with pytest.raises(safety.UnsafeTarget, match=f"pass --destroy-data={dev} \\(or its serial: "
                       "--destroy-data=S3Z9NB0K\\) to erase this one"):
        safety.check_block_write(dev, other)
    safety.check_block_write(dev, "S3Z9NB0K")
