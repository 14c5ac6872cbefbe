"""A block device's path is followed once: the device the safety checks, the consent, the
identity, the lock and fio see is the one the path named when the drive was opened. A
link swapped afterwards, or a path that reads as another device from another mount
namespace (/proc/PID/root/...), cannot make the device checked and the device written
differ (loop devices, tests/loopdevs.py)."""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import clirun
import pytest
from refusals import one_line_error

from loopdevs import MIB, REASON, loops, sh  # noqa: F401  (loops: a fixture)
from ssdlab.phase import Phase
from ssdlab.targets import open_target
from ssdlab.targets.fio.transport import LocalBlock
from ssdlab.targets.guard import safety

pytestmark = pytest.mark.realdev
if REASON:
    pytestmark = [pytest.mark.realdev, pytest.mark.skip(reason=REASON)]

WRITE = Phase(kind="io", read_pct=0, pattern="seq", block_size=64 << 10, stop_bytes=MIB)


def head(dev: str) -> str:
    """The first MiB of the device (what WRITE writes)."""
    with open(dev, "rb") as f:
        return hashlib.sha256(f.read(MIB)).hexdigest()


def fill(dev: str) -> None:
    with open(dev, "r+b") as f:
        f.write(os.urandom(MIB))


def point(link: Path, dev: str) -> None:
    """`link` made (or swapped, atomically) to lead to `dev`."""
    tmp = link.with_name(link.name + ".new")
    os.symlink(dev, tmp)
    os.replace(tmp, link)


def test_a_link_swapped_after_the_drive_was_opened_moves_neither_consent_nor_write(loops, tmp_path):
    a, _ = loops.make(32 * MIB)
    b, _ = loops.make(32 * MIB)
    for d in (a, b):
        fill(d)
    link = tmp_path / "drive"
    point(link, a)
    spec = f"/dev/..{link}"  # a /dev/... path whose link the test controls

    # consent to the device the link names now is no consent to the one opened
    t = open_target(spec, destroy_data=b)
    try:
        point(link, b)
        with pytest.raises(safety.UnsafeTarget, match="names another device"):
            t.preflight([WRITE])
    finally:
        t.close()
    # consent to the device opened: the write goes there, not where the link now leads
    point(link, a)
    before_a, before_b = head(a), head(b)
    t = open_target(spec, destroy_data=a)
    try:
        point(link, b)
        assert t.dev == a and t.info["name"] == os.path.basename(a)
        t.preflight([WRITE])
        t.run(WRITE)
    finally:
        t.close()
    assert head(b) == before_b
    assert head(a) != before_a


@pytest.fixture
def namespace_view(loops):
    """(a, b, pid): loop devices a and b, and a process in a mount namespace of its own
    where a's node is b (b's node bind-mounted over it): /proc/PID/root/dev/a reads as
    /dev/a to a text walk, and is b to the kernel."""
    if not shutil.which("unshare"):
        pytest.skip("needs unshare (util-linux)")
    a, _ = loops.make(32 * MIB)
    b, _ = loops.make(32 * MIB)
    p = subprocess.Popen(["unshare", "-m", "--propagation", "private", "sh", "-c",
                          f"mount --bind {b} {a} && echo ready && exec sleep 120"],
                         stdout=subprocess.PIPE, text=True)
    try:
        if p.stdout is None or p.stdout.readline().strip() != "ready":
            pytest.skip("cannot make a mount namespace here")
        yield a, b, p.pid
    finally:
        p.kill()
        p.wait()


def test_a_path_through_another_mount_namespace_is_one_device_throughout(namespace_view, tmp_path):
    a, b, pid = namespace_view
    for d in (a, b):
        fill(d)
    path = f"/dev/../proc/{pid}/root{a}"
    dev = LocalBlock(path, plan=True)
    # identity, the safety verdict, the consent and the node fio is given: all b
    assert dev.info["name"] == safety.resolve_block(path).name == os.path.basename(b)
    assert dev.dev == b
    with pytest.raises(safety.UnsafeTarget, match=f"pass --destroy-data={b}"):
        safety.check_block_write(path, None)
    r = clirun.cli("run", "fill", "--drive", path, "--plan", "--db", str(tmp_path / "r.sqlite"))
    assert r.returncode == 0, r.stderr
    named = {w.rstrip(":;,)") for w in r.stdout.split() if w.startswith("/dev/loop")}
    named |= {w.split("=", 1)[1].rstrip(":;,)") for w in r.stdout.split() if w.startswith("--destroy-data=/dev/loop")}
    assert named == {b}, r.stdout
    # consent to b writes b, and only b
    before_a, before_b = head(a), head(b)
    t = open_target(path, destroy_data=b)
    try:
        t.preflight([WRITE])
        t.run(WRITE)
    finally:
        t.close()
    assert head(a) == before_a
    assert head(b) != before_b


def test_a_path_through_proc_self_root_is_the_device_itself(loops, tmp_path):
    a, _ = loops.make(32 * MIB)
    path = f"/dev/../proc/self/root{a}"
    dev = LocalBlock(path, plan=True)
    assert dev.dev == a and dev.info["name"] == os.path.basename(a)
    assert safety.names_device(path, dev.block) and safety.names_device(a, dev.block)
    r = clirun.cli("run", "fill", "--drive", path, "--destroy-data", a, "--plan", "--db", str(tmp_path / "r.sqlite"))
    assert r.returncode == 0, r.stderr
    assert f"# device {a}:" in r.stdout and "a run would be REFUSED" not in r.stdout, r.stdout


def test_a_drive_through_another_users_link_is_refused(loops, tmp_path):
    """The drive's own path follows the rule its consent does: no link another user owns."""
    if not shutil.which("runuser"):
        pytest.skip("needs runuser (a second account)")
    a, _ = loops.make(32 * MIB)
    sticky = Path(tempfile.mkdtemp(prefix="ssdlab-sticky-", dir="/tmp"))
    try:
        os.chmod(sticky, 0o1777)
        link = sticky / "disk"
        sh("runuser", "-u", "nobody", "--", "ln", "-s", a, str(link))
        r = clirun.cli("run", "fill", "--drive", f"/dev/..{link}", "--destroy-data", a,
                       "--db", str(tmp_path / "r.sqlite"))
        one_line_error(r, f"{link} is a symlink owned by uid", "another user")
    finally:
        shutil.rmtree(sticky, ignore_errors=True)


def test_an_agent_opens_only_the_listed_device_its_link_led_to(loops, monkeypatch):
    """A drive host's list is checked on the path the client gives; the device opened is
    then checked again, so a link swapped between the two never opens an unlisted one."""
    from ssdlab.targets.remote import agent
    from ssdlab.targets.remote.allowlist import AllowList, parse_drives

    a, _ = loops.make(32 * MIB)
    b, _ = loops.make(32 * MIB)
    link = Path(f"/dev/ssdlab-test-{os.getpid()}-{os.urandom(4).hex()}")  # /dev: as by-id links are
    point(link, a)
    opened = agent.FioTarget

    def swapped_then_opened(*args, **kw):
        point(link, b)
        return opened(*args, **kw)

    monkeypatch.setattr(agent, "FioTarget", swapped_then_opened)
    r, w = os.pipe()
    out_r, out_w = os.pipe()
    try:
        host = agent.Agent(r, out_w, AllowList([("--drives", parse_drives(a))]))
        with pytest.raises(safety.UnsafeTarget, match="may not test it"):
            host.answer("open", {"op": "open", "spec": str(link)})
        assert host.target is None
    finally:
        for fd in (r, w, out_r, out_w):
            os.close(fd)
        for p in (link, link.with_name(link.name + ".new")):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(p)
