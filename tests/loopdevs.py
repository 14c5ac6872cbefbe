"""Loop devices on sparse files for the real-device tests (root, losetup and fio needed).
Each test makes its own small devices and always detaches them (and unmounts what it
mounted), whatever happens."""

from __future__ import annotations

import contextlib
import fcntl
import os
import stat
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

MIB = 2**20
SIZE = 256 * MIB


def _why_not() -> str | None:
    if os.geteuid() != 0:
        return "needs root (loop devices)"
    for tool in ("losetup", "fio", "blkdiscard", "wipefs"):
        if not shutil.which(tool):
            return f"{tool} not installed (apt-get install fio util-linux)"
    if not os.path.exists("/dev/loop-control"):
        return "no /dev/loop-control (loop devices unavailable)"
    return None


REASON = _why_not()


def sh(*cmd: str, check: bool = True, **kw) -> subprocess.CompletedProcess:
    return subprocess.run(list(cmd), capture_output=True, text=True, check=check, **kw)


def attach(*args: str) -> subprocess.CompletedProcess:
    """`losetup --find --show ARGS`, one at a time across the test workers: two losetups that
    pick the same free device race for it, and the loser holds that device (by then another
    test's) open for writing while it retries, which that test's safety check rightly refuses."""
    fd = os.open(os.path.join(os.environ.get("TMPDIR", "/tmp"), "ssdlab-tests-losetup.lock"),
                 os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        return sh("losetup", "--find", "--show", *args, check=False)
    finally:
        os.close(fd)


@contextlib.contextmanager
def partitioned(dev: str, table: str) -> Iterator[list[str]]:
    """`dev` (a loop device attached with --partscan) given the sfdisk `table`: its
    partitions' nodes while the block runs (made here where no udev makes them, and removed
    after)."""
    sh("sfdisk", "-q", dev, input=table)
    sh("partx", "-u", dev, check=False)
    parts, made = [], []
    try:
        for n in range(1, table.count("\n,") + 1):
            part = f"{dev}p{n}"
            if not os.path.exists(part):
                maj, mi = Path(f"/sys/class/block/{os.path.basename(part)}/dev").read_text().split(":")
                os.mknod(part, 0o600 | stat.S_IFBLK, os.makedev(int(maj), int(mi)))
                made.append(part)
            parts.append(part)
        yield parts
    finally:
        for part in made:
            os.unlink(part)


def allocated(path: Path) -> int:
    return os.stat(path).st_blocks * 512


def sectors_written(dev: str) -> int:
    """The kernel's count of 512-byte sectors written to block device `dev` (completed)."""
    name = os.path.basename(os.path.realpath(dev))
    return int(Path(f"/sys/block/{name}/stat").read_text().split()[6])


def wait_for_new_writes(dev: str, proc: subprocess.Popen, timeout: float = 120) -> None:
    """Until `dev` completes a write after this call (while `proc` runs): a run's next
    phase has really started writing, however slowly the machine starts fio."""
    base = sectors_written(dev)
    deadline = time.monotonic() + timeout
    while sectors_written(dev) == base and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert sectors_written(dev) > base, f"no write reached {dev} within {timeout:g} s (exit {proc.poll()})"


class Loops:
    """Factory of loop devices on sparse files; cleans up mounts and devices."""

    def __init__(self, tmp: Path):
        self.tmp = tmp
        self.devs: list[str] = []
        self.mounts: list[Path] = []
        self.holders: list[subprocess.Popen] = []

    def make(self, size: int = SIZE, name: str | None = None, *opts: str) -> tuple[str, Path]:
        f = self.tmp / (name or f"loop{len(self.devs)}.img")
        with open(f, "wb") as fh:
            fh.truncate(size)
        r = attach(*opts, str(f))
        if r.returncode != 0:
            pytest.fail(f"losetup failed: {r.stderr.strip()}")
        dev = r.stdout.strip()
        self.devs.append(dev)
        return dev, f

    def stack(self, dev: str, *opts: str) -> str:
        """A loop device set up on `dev` itself (losetup on a block device)."""
        r = attach(*opts, dev)
        if r.returncode != 0:
            pytest.fail(f"losetup on {dev} failed: {r.stderr.strip()}")
        top = r.stdout.strip()
        self.devs.insert(0, top)  # detached first
        return top

    def mount(self, dev: str) -> Path:
        mnt = self.tmp / f"mnt{len(self.mounts)}"
        mnt.mkdir()
        sh("mount", dev, str(mnt))
        self.mounts.append(mnt)
        return mnt

    def hold_exclusive(self, dev: str) -> subprocess.Popen:
        """Another program holding the device open with O_EXCL (as mount, mdadm, LVM do)."""
        p = subprocess.Popen([sys.executable, "-c",
                              "import os,sys,time; fd=os.open(sys.argv[1], os.O_RDONLY|os.O_EXCL); "
                              "print('held', flush=True); time.sleep(120)", dev],
                             stdout=subprocess.PIPE, text=True)
        assert p.stdout.readline().strip() == "held"
        self.holders.append(p)
        return p

    def detach(self, dev: str, timeout: float = 30.0) -> None:
        """`losetup -d` and wait until the kernel has let go: while anyone (udev probing after
        a change event, a closing fsck) still has the device open, the detach is deferred to
        the last close and the loop device still reads as set up."""
        sh("losetup", "-d", dev)
        self.devs.remove(dev)
        backing = Path("/sys/class/block", Path(dev).name, "loop", "backing_file")
        deadline = time.monotonic() + timeout
        while backing.exists():
            if time.monotonic() > deadline:
                pytest.fail(f"{dev} still set up {timeout:.0f} s after losetup -d")
            time.sleep(0.05)

    def cleanup(self) -> None:
        for p in self.holders:
            p.kill()
            p.wait()
        for m in reversed(self.mounts):
            sh("umount", str(m), check=False)
        for d in self.devs:
            for _ in range(10):
                if sh("losetup", "-d", d, check=False).returncode == 0:
                    break
                time.sleep(0.2)


@pytest.fixture
def loops(tmp_path):
    lp = Loops(tmp_path)
    try:
        yield lp
    finally:
        lp.cleanup()


