"""`python -m ssdlab.serve.nvme_vm`: bad input is one line and exit 2 before anything
boots; the namespaces become one NVMe controller's, in order, with their LBA size."""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
import time
from pathlib import Path
import sys

import pytest

from ssdlab.serve import nvme_vm


@pytest.mark.parametrize("args, words", [
    (["--nbd", "/nonexistent/drive.sock"], ["--nbd /nonexistent/drive.sock", "ssdlab serve"]),
    (["--file", "/nonexistent/ns.img"], ["--file /nonexistent/ns.img", "truncate"]),
    ([], ["--nbd SOCKET or --file PATH"]),
])
def test_bad_input_is_one_line_exit_2(args, words):
    r = subprocess.run([sys.executable, "-m", "ssdlab.serve.nvme_vm", *args], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 2, (r.stdout, r.stderr)
    err = r.stderr.strip()
    assert len(err.splitlines()) == 1 and all(w in err for w in words), err


def test_namespaces_in_order_with_their_lba_size():
    q = nvme_vm.qemu_args([nvme_vm.Namespace("/x/a.img", 512),
                           nvme_vm.Namespace("nbd+unix:///?socket=/x/d.sock", 4096)])
    assert q[:2] == ["-device", f"nvme,serial={nvme_vm.SERIAL},id=nvme0"]
    # a backing's error fails the guest's command rather than pausing the VM
    assert "file=/x/a.img,if=none,id=ns1,format=raw,discard=unmap,werror=report,rerror=report" in q
    assert "nvme-ns,drive=ns2,bus=nvme0,nsid=2,logical_block_size=4096,physical_block_size=4096" in q
    assert "file=nbd+unix:///?socket=/x/d.sock,if=none,id=ns2,format=raw,discard=unmap,werror=report,rerror=report" in q
    with pytest.raises(ValueError, match="512 or 4096"):
        nvme_vm.Namespace("/x/a.img", 1024)


def test_a_namespace_with_protection_information():
    q = nvme_vm.qemu_args([nvme_vm.Namespace("/x/a.img", 4096, pi=1)])
    assert "nvme-ns,drive=ns1,bus=nvme0,nsid=1,logical_block_size=4096,physical_block_size=4096,ms=8,pi=1" in q
    with pytest.raises(ValueError, match="0 \\(none\\), 1, 2 or 3"):
        nvme_vm.Namespace("/x/a.img", 4096, pi=4)


@pytest.mark.parametrize("modules, kvm, want", [
    (["kvm", "kvm_amd"], True, ("kvm", "")),
    (["kvm", "kvm_intel"], True, ("kvm", "")),
    (["kvm", "kvm_pvm"], True, ("tcg", "PVM")),  # boots only PVM guest kernels
    (["kvm"], False, ("tcg", "no ")),
])
def test_kvm_where_it_boots_the_guest_else_emulation(tmp_path, monkeypatch, modules, kvm, want):
    for m in modules:
        (tmp_path / "module" / m).mkdir(parents=True)
    dev = tmp_path / "kvm"
    if kvm:
        dev.touch()
    monkeypatch.setattr(nvme_vm, "MODULES", tmp_path / "module")
    monkeypatch.setattr(nvme_vm, "KVM", str(dev))
    monkeypatch.delenv("SSDLAB_NVME_VM_ACCEL", raising=False)
    acc, why = nvme_vm.accel()
    assert acc == want[0] and want[1] in why and (why == "") == (acc == "kvm")
    monkeypatch.setenv("SSDLAB_NVME_VM_ACCEL", "tcg")
    assert nvme_vm.accel() == ("tcg", "")


def test_only_missing_qemu_stops_the_vm(monkeypatch):
    """Without KVM the VM still boots (emulated); without QEMU it cannot, and says which
    package gives it."""
    monkeypatch.setattr(nvme_vm.shutil, "which", lambda name: None if name == "qemu-system-x86_64" else "/x")
    why = nvme_vm.why_not()
    assert why is not None and "qemu-system-x86" in why and "sysdeps" in why


def test_an_emulated_guest_waits_for_its_controller_as_long_as_emulation_needs(monkeypatch):
    monkeypatch.setattr(nvme_vm, "kernel_image", lambda: "/boot/vmlinuz-x")
    ns = [nvme_vm.Namespace("/x/a.img", 4096)]
    tcg = nvme_vm.command(ns, "true", acc="tcg")
    assert "--disable-kvm" in tcg and f"nvme_core.io_timeout={nvme_vm.EMULATED_TIMEOUT_S}" in tcg
    assert nvme_vm.EMULATED_TIMEOUT_S > 30  # longer than the kernel's default: a Format may take minutes emulated
    assert not any("nvme_core" in x for x in nvme_vm.command(ns, "true", acc="kvm"))


def test_an_emulated_guest_loads_no_driver_for_what_it_does_not_use(monkeypatch):
    """udev would load a driver for each emulated device and CPU feature: under emulation
    the chipset's, KVM's and the crypto accelerations' are kept out; never the NVMe driver's."""
    monkeypatch.setattr(nvme_vm, "kernel_image", lambda: "/boot/vmlinuz-x")
    ns = [nvme_vm.Namespace("/x/a.img", 4096)]
    tcg = nvme_vm.command(ns, "true", acc="tcg")
    skip = [x for x in tcg if x.startswith("modprobe.blacklist=")]
    assert len(skip) == 1 and tcg[tcg.index(skip[0]) - 1] == "--append"
    names = skip[0].split("=", 1)[1].split(",")
    assert {"ahci", "sr_mod", "kvm", "ghash_clmulni_intel"} <= set(names)
    assert not {"nvme", "nvme_core", "9p", "9pnet_virtio", "virtio_console", "overlay", "ext4"} & set(names)
    assert not any("modprobe.blacklist" in x for x in nvme_vm.command(ns, "true", acc="kvm"))


def _virtiofsd(path: Path, says: str) -> Path:
    path.write_text(f"#!/bin/sh\necho '{says}'\n")
    path.chmod(0o755)
    return path


@pytest.mark.parametrize("says, nine_p", [
    ("virtiofsd version 7.2.22 (Debian 1:7.2+dfsg-7)\nCopyright (c) 2003-2022 Fabrice Bellard and the QEMU Project "
     "developers", True),
    ("virtiofsd 1.13.0", False)])
def test_the_host_is_shared_over_9p_where_vngs_virtiofsd_would_not_start(monkeypatch, tmp_path, says, nine_p):
    """QEMU's own virtiofsd answers --version as the Rust one vng is written for does, then
    refuses vng's options: vng would wait for it before every shared directory."""
    monkeypatch.setattr(nvme_vm, "kernel_image", lambda: "/boot/vmlinuz-x")
    monkeypatch.setattr(nvme_vm, "VIRTIOFSD_PLACES", (str(_virtiofsd(tmp_path / "virtiofsd", says)),))
    monkeypatch.setattr(nvme_vm, "bundled_virtiofsd", lambda: None)
    monkeypatch.setattr(nvme_vm, "environment", lambda: {"PATH": str(tmp_path / "none")})
    assert nvme_vm.virtiofsd_usable() is not nine_p
    assert ("--force-9p" in nvme_vm.command([nvme_vm.Namespace("/x/a.img")], "true", acc="tcg")) is nine_p
    monkeypatch.setattr(nvme_vm, "VIRTIOFSD_PLACES", ())
    assert "--force-9p" in nvme_vm.command([nvme_vm.Namespace("/x/a.img")], "true", acc="kvm")


def test_the_trees_programs_load_from_are_shared_again_cached_and_read_only_over_9p(monkeypatch, tmp_path):
    """Over 9p the guest's Python and fio load from read-only copies of their host trees
    mounted with the guest's cache: each is a read-only virtfs and a cache=loose mount made
    before the guest's command; nested trees once, none that would hide an --rwdir."""
    monkeypatch.setattr(nvme_vm, "kernel_image", lambda: "/boot/vmlinuz-x")
    monkeypatch.setattr(nvme_vm, "virtiofsd_usable", lambda: False)
    trees = nvme_vm.cached_trees()
    base = os.path.realpath(sys.base_prefix)
    assert "/usr" in trees and any(base == t or base.startswith(t + "/") for t in trees)
    assert not any(a != b and b.startswith(a + "/") for a in trees for b in trees)  # outermost only
    cmd = nvme_vm.command([nvme_vm.Namespace("/x/a.img")], "guest-command", acc="tcg")
    qemu = shlex.split(next(x for x in cmd if x.startswith("--qemu-opts="))[len("--qemu-opts="):])
    shares = [qemu[i + 1] for i, x in enumerate(qemu) if x == "-virtfs"]
    assert [s.split(",")[1] for s in shares] == [f"path={t}" for t in trees]
    assert all("readonly=on" in s for s in shares)
    guest = cmd[cmd.index("--exec") + 1]
    assert guest.endswith("guest-command") and guest.count("cache=loose") == len(trees)
    assert guest.index(f" {trees[-1]} ") < guest.index("guest-command")
    # an --rwdir inside a tree: that tree stays as vng shares it
    rw = Path(trees[0]) / "results"
    assert trees[0] not in nvme_vm.cached_trees([rw]) and len(nvme_vm.cached_trees([rw])) == len(trees) - 1
    # virtiofs caches the root itself: no second share
    monkeypatch.setattr(nvme_vm, "virtiofsd_usable", lambda: True)
    cmd = nvme_vm.command([nvme_vm.Namespace("/x/a.img")], "guest-command", acc="tcg")
    assert "-virtfs" not in cmd[[x.startswith("--qemu-opts=") for x in cmd].index(True)]
    assert cmd[cmd.index("--exec") + 1] == "guest-command"


def test_a_boot_past_its_bound_is_killed_whole(monkeypatch, tmp_path):
    """vng's child QEMU (here a grandchild `sleep`) holds the output open: the bound kills
    the whole group and the result says the boot was killed."""
    mark = tmp_path / "grandchild.pid"
    monkeypatch.setattr(nvme_vm, "command", lambda *a, **k: ["sh", "-c", f"sleep 60 & echo $! > {mark}; echo up; wait"])
    t0 = time.monotonic()
    r = nvme_vm.run([nvme_vm.Namespace("/x/a.img")], "true", timeout=1.0)
    assert r.returncode is None and r.stdout == "up\n"
    assert time.monotonic() - t0 < 30
    pid = int(mark.read_text())
    for _ in range(50):  # the kill reaches the orphan at once; its reaping may lag
        if not Path(f"/proc/{pid}").exists() or "Z" in Path(f"/proc/{pid}/stat").read_text().split()[2]:
            break
        time.sleep(0.1)
    else:
        raise AssertionError(f"the boot's grandchild {pid} outlived the bound")


def test_an_emulated_vm_runs_on_one_host_cpu(monkeypatch):
    """QEMU's threads share the shadow doorbells with the guest: on one CPU they cannot miss
    each other's update (KVM boots are left as they are)."""
    monkeypatch.setattr(nvme_vm.os, "sched_getaffinity", lambda pid: {0, 1, 3})
    monkeypatch.setattr(nvme_vm.shutil, "which", lambda name: f"/usr/bin/{name}")
    assert nvme_vm.one_cpu(["vng", "--run"]) == ["taskset", "-c", "3", "vng", "--run"]
    monkeypatch.setattr(nvme_vm.os, "sched_getaffinity", lambda pid: {2})
    assert nvme_vm.one_cpu(["vng"]) == ["vng"]


# QEMU's file chardevs, as virtme-ng opens them: /proc/self/fd/N by name, O_TRUNC, each with
# its own offset (the kernel console, the guest's stderr, its /dev/stderr)
QEMU_LIKE = ("exec 3>/proc/self/fd/2 4>/proc/self/fd/2; echo console-line >&3; echo guest-stderr >&4; "
             "echo guest-stdout > /proc/self/fd/1")


def test_the_vms_output_keeps_what_was_written_before_it(tmp_path):
    """Run with its output appended to a log (`>> log`), the boot keeps the log and the
    line nvme_vm printed before it; QEMU reopening the file by name truncated both."""
    log = tmp_path / "lab.log"
    log.write_text("yesterday's notes\n")
    code = ("import sys\nfrom ssdlab.serve import nvme_vm\n"
            f"nvme_vm.command = lambda *a, **k: ['sh', '-c', {QEMU_LIKE!r}]\n"
            "print('nvme_vm: QEMU emulates the CPU instead', file=sys.stderr)\n"
            "r = nvme_vm.run([nvme_vm.Namespace('/x/a.img')], 'true', capture=False, timeout=60)\n"
            "sys.exit(r.returncode)")
    with open(log, "a") as f:
        r = subprocess.run([sys.executable, "-c", code], stdout=f, stderr=f, timeout=120)
    assert r.returncode == 0
    lines = log.read_text().splitlines()
    assert lines[:2] == ["yesterday's notes", "nvme_vm: QEMU emulates the CPU instead"], lines
    assert sorted(lines[2:]) == ["console-line", "guest-stderr", "guest-stdout"], lines


def test_captured_console_and_guest_stderr_do_not_overwrite_each_other(monkeypatch):
    monkeypatch.setattr(nvme_vm, "command", lambda *a, **k: ["sh", "-c", QEMU_LIKE])
    r = nvme_vm.run([nvme_vm.Namespace("/x/a.img")], "true", timeout=60)
    assert r.returncode == 0
    assert r.stderr.splitlines() == ["console-line", "guest-stderr"] and r.stdout == "guest-stdout\n"


def test_ctrl_c_stops_the_vm_with_one_line(tmp_path):
    """Ctrl-C reaches nvme_vm only (the VM runs in a session of its own): the VM's processes
    are killed and the command says so in one line, exit 130, no traceback."""
    ns, mark = tmp_path / "ns.img", tmp_path / "vm.pid"
    ns.write_bytes(b"\0" * 4096)
    code = ("import sys\nfrom ssdlab.serve import nvme_vm\n"
            "nvme_vm.why_not = lambda: None\n"
            f"nvme_vm.command = lambda *a, **k: ['sh', '-c', 'echo $$ > {mark}; sleep 60']\n"
            f"sys.exit(nvme_vm.main(['--file', {str(ns)!r}, '--', 'true']))")
    # SIGINT at its default, as in a terminal's process: a shell without job control starts a
    # background job (`make test &`) with it ignored, and Python keeps that
    p = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    for _ in range(200):
        if mark.exists() and mark.read_text().strip():
            break
        time.sleep(0.05)
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=60)
    assert p.returncode == 130, err
    lines = [x for x in err.splitlines() if not x.startswith("nvme_vm: /dev/kvm") and "emulates the CPU" not in x]
    assert lines == ["nvme_vm: interrupted; the VM was stopped"], err
    assert gone(int(mark.read_text().strip()))


def gone(pid: int, within_s: float = 10.0) -> bool:
    """The process ended (or is a zombie) within `within_s`: a killed process dies when it
    is next scheduled, which on a loaded machine is not at once."""
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        try:
            if "Z" in Path(f"/proc/{pid}/stat").read_text().split()[2]:
                return True
        except OSError:
            return True
        time.sleep(0.05)
    return False


def test_a_read_only_backing_file_is_refused_before_anything_boots(monkeypatch, tmp_path, capsys):
    """The guest writes a --file whole, and QEMU run as root would open one its owner made
    read-only (a kept image) for writing all the same: refused with the fix, exit 2."""
    booted: list = []
    monkeypatch.setattr(nvme_vm, "why_not", lambda: None)
    monkeypatch.setattr(nvme_vm, "accel", lambda: ("kvm", ""))
    monkeypatch.setattr(nvme_vm, "run", lambda *a, **k: booted.append(a) or nvme_vm.Result(0, "", ""))
    img = tmp_path / "kept.img"
    img.write_bytes(b"\1" * 4096)
    img.chmod(0o444)
    assert nvme_vm.main(["--file", str(img), "--", "true"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and f"--file {img}" in err and "read-only" in err, err
    assert f"chmod u+w {img.resolve()}" in err, err
    assert booted == [] and img.read_bytes() == b"\1" * 4096
    img.chmod(0o644)  # writable by its owner: it boots
    assert nvme_vm.main(["--file", str(img), "--", "true"]) == 0 and len(booted) == 1


@pytest.fixture
def ctrl_c_reaches_python():
    """Python's own Ctrl-C handler, as in a terminal: a suite started in the background by a
    shell without job control inherits SIGINT ignored, and a Ctrl-C would be lost."""
    old = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, old)


def test_ctrl_c_while_the_vm_starts_stops_it_too(monkeypatch, tmp_path, ctrl_c_reaches_python):
    """Ctrl-C that lands while the VM's process is being started (after its exec, before
    Popen returns: a busy machine widens that moment) is held until the process can be
    stopped: the VM is killed whole and run() ends with KeyboardInterrupt."""
    mark = tmp_path / "vm.pid"
    monkeypatch.setattr(nvme_vm, "command", lambda *a, **k: ["sh", "-c", f"echo $$ > {mark}; sleep 60"])
    monkeypatch.setattr(nvme_vm, "accel", lambda: ("kvm", ""))
    real = subprocess.Popen

    def popen_then_ctrl_c(*a, **k):
        p = real(*a, **k)
        for _ in range(200):
            if mark.exists() and mark.read_text().strip():
                break
            time.sleep(0.05)
        os.kill(os.getpid(), signal.SIGINT)  # inside the start, as the user's Ctrl-C
        return p

    monkeypatch.setattr(nvme_vm.subprocess, "Popen", popen_then_ctrl_c)
    with pytest.raises(KeyboardInterrupt):
        nvme_vm.run([nvme_vm.Namespace("/x/a.img")], "true", timeout=120)
    assert gone(int(mark.read_text().strip()))
