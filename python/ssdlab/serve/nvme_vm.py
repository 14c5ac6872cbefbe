"""A small VM with QEMU's emulated NVMe controller, booted with virtme-ng on the host's own
root filesystem (read-only), so the guest has the host's fio, nvme-cli, smartctl and this
Python environment. Each namespace is backed by a file or by an NBD export (`ssdlab serve`
gives a simulated drive: the guest kernel sees /dev/nvme0nN with that drive's timing).

    python -P -m ssdlab.serve.nvme_vm --nbd /tmp/drive.sock -- fio --name=f --filename=/dev/nvme0n1 ...

(-P: run as root, `python -m` would first import ssdlab, or any module, from the working
directory, where another user may have left one.)

KVM boots it in seconds where /dev/kvm can run a distribution kernel; elsewhere (no
/dev/kvm, or a PVM one) QEMU emulates the CPU (TCG): about a minute to boot, and Python in
the guest is slow to start (6-9 s to import ssdlab's CLI, from trees shared with the guest's
cache on: cached_trees).

Nothing here touches a host device: the namespaces' backings are files the caller names or
sockets; the guest's writes go to them only.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import shlex
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import threading
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, Sequence

from .. import safe_path
from ..targets import child, group_leader
from ..targets.guard import safety
from .vm_output import Relay

SERIAL = "SSDLABVM0001"
LBA_SIZES = (512, 4096)
KVM = "/dev/kvm"
MODULES = Path("/sys/module")  # the host kernel's loaded modules: which KVM /dev/kvm is


@dataclass
class Namespace:
    """One namespace: `backing` is a file path or an NBD URI (nbd+unix:///?socket=...);
    `pi` 1-3: end-to-end protection information of that type, in 8 bytes of metadata per
    block (kept apart from the data, as the Linux driver supports it)."""

    backing: str
    lba: int = 512
    pi: int = 0

    def __post_init__(self) -> None:
        if self.lba not in LBA_SIZES:
            raise ValueError(f"LBA size {self.lba}: the emulated namespaces use 512 or 4096")
        if self.pi not in (0, 1, 2, 3):
            raise ValueError(f"protection information type {self.pi}: 0 (none), 1, 2 or 3")


def kernel_image() -> Path | None:
    """A distribution kernel whose modules are installed (virtme-ng loads nvme, 9p from
    them): the newest /boot/vmlinuz-* with /lib/modules/<release>."""
    found = []
    for p in Path("/boot").glob("vmlinuz-*"):
        rel = p.name[len("vmlinuz-"):]
        if (Path("/lib/modules") / rel / "modules.dep").exists() and os.access(p, os.R_OK):
            found.append(p)
    return max(found, key=lambda p: p.stat().st_mtime) if found else None


def accel() -> tuple[str, str]:
    """("kvm", "") when KVM can boot a distribution kernel here, else ("tcg", why not KVM)
    with the reason in one line: QEMU's emulation boots the same kernel, in a minute rather
    than seconds. SSDLAB_NVME_VM_ACCEL=tcg or kvm forces one."""
    forced = os.environ.get("SSDLAB_NVME_VM_ACCEL", "")
    if forced in ("tcg", "kvm"):
        return forced, ""
    if not os.path.exists(KVM):
        return "tcg", f"no {KVM} (no hardware virtualization)"
    if not os.access(KVM, os.R_OK | os.W_OK):
        return "tcg", f"{KVM} is not accessible to this user (add it to group kvm)"
    mods = MODULES
    if (mods / "kvm_pvm").exists() and not ((mods / "kvm_intel").exists() or (mods / "kvm_amd").exists()):
        return "tcg", ("/dev/kvm here is PVM (kvm_pvm, nested virtualization without VT-x/AMD-V): it "
                       "boots only PVM guest kernels")
    return "kvm", ""


def why_not() -> str | None:
    """One line saying what this machine lacks to boot the NVMe VM at all, or None (KVM is
    not needed: without it QEMU emulates the CPU)."""
    if not shutil.which("qemu-system-x86_64"):
        return "qemu-system-x86_64 not installed (tools/sysdeps.sh test installs qemu-system-x86)"
    if not shutil.which("busybox"):
        return "busybox not installed (virtme-ng's initramfs; tools/sysdeps.sh test installs busybox-static)"
    if kernel_image() is None:
        return "no kernel image with its modules in /boot (tools/sysdeps.sh test installs linux-image-amd64)"
    if not vng_binary():
        return "virtme-ng (vng) not found next to this Python (make build installs it)"
    return None


def vng_binary() -> str | None:
    here = Path(sys.executable).parent / "vng"
    return str(here) if here.exists() else shutil.which("vng")


def qemu_args(namespaces: list[Namespace], serial: str = SERIAL) -> list[str]:
    """QEMU options for one NVMe controller with `namespaces` (nsid 1, 2 ... in order)."""
    args = ["-device", f"nvme,serial={serial},id=nvme0"]
    for i, ns in enumerate(namespaces, 1):
        # discard=unmap: the guest's deallocate (DSM) and Format reach the backing as unmaps;
        # [rw]error=report: a backing's error (a full tmpfs) fails the command in the guest
        # instead of pausing the VM, which would wait for ever
        # a ',' in QEMU's option values is written twice (once would start another option)
        args += ["-drive", f"file={ns.backing.replace(',', ',,')},if=none,id=ns{i},format=raw,discard=unmap,"
                           "werror=report,rerror=report",
                 "-device", (f"nvme-ns,drive=ns{i},bus=nvme0,nsid={i},"
                             f"logical_block_size={ns.lba},physical_block_size={ns.lba}"
                             + (f",ms=8,pi={ns.pi}" if ns.pi else ""))]
    return args


EMULATED_TIMEOUT_S = 120

# Under emulation each driver the guest loads costs host CPU seconds (its file over the shared
# root, its init, a crypto module's self-tests), and udev's coldplug would load one for every
# emulated device and CPU feature: the q35 chipset's SATA and CD-ROM, watchdogs, SMBus,
# speaker, mouse, CPU frequency, KVM, the crypto and CRC accelerations (the generic code
# stands in). The guest uses none of them, only the NVMe controller and the virtio devices:
# udev skips these (libkmod's modprobe.blacklist; a module asked for by name still loads).
EMULATED_UNUSED_DRIVERS = (
    "ahci", "libata", "sr_mod", "cdrom", "sg",  # chipset SATA, its CD-ROM
    "i6300esb", "iTCO_wdt", "iTCO_vendor_support", "intel_pmc_bxt", "lpc_ich",  # watchdogs, LPC
    "i2c_i801", "i2c_smbus", "qemu_fw_cfg", "button", "pcspkr", "psmouse", "serio_raw", "evdev",
    "acpi_cpufreq", "pcc_cpufreq", "powernow_k8", "edac_mce_amd",  # CPU frequency, MCE
    "kvm", "kvm_amd", "kvm_intel", "ccp",  # nested virtualization
    # crypto and CRC accelerations (not those of crc32c, which ext4 asks for, or crct10dif,
    # the NVMe driver's protection information's: the kernel loads those by name anyway)
    "aesni_intel", "cryptd", "sha1_ssse3", "sha256_ssse3", "sha512_ssse3", "ghash_clmulni_intel",
    "crc32_pclmul",
)


# where vng looks for virtiofsd after its own guest tools and PATH, in its order
VIRTIOFSD_PLACES = ("/usr/libexec/virtiofsd", "/usr/lib/virtiofsd/virtiofsd", "/usr/lib/virtiofsd",
                    "/usr/lib/qemu/virtiofsd")


def bundled_virtiofsd() -> str | None:
    """The virtiofsd among virtme-ng's guest tools, the first place vng looks."""
    spec = importlib.util.find_spec("virtme")
    return str(Path(spec.origin).parent / "guest" / "bin" / "virtiofsd") if spec and spec.origin else None


def virtiofsd_usable() -> bool:
    """Would vng's virtiofsd start? vng takes the first virtiofsd that answers --version. The
    Rust daemon it is written for does; so does QEMU's older C one (Debian 12's
    /usr/lib/qemu/virtiofsd), which then refuses vng's options (--shared-dir): vng waits 3 s
    for it, for the root and again for each --rwdir, before it shares them over 9p."""
    for p in (bundled_virtiofsd(), shutil.which("virtiofsd", path=environment()["PATH"]), *VIRTIOFSD_PLACES):
        if not p or not os.access(p, os.X_OK) or os.path.isdir(p):
            continue
        try:
            r = subprocess.run([p, "--version"], capture_output=True, text=True, timeout=30)
        except (OSError, subprocess.TimeoutExpired):
            continue
        if r.returncode == 0:
            return "QEMU" not in r.stdout + r.stderr  # QEMU's own says "the QEMU Project"
    return False


def cached_trees(rwdirs: Sequence[Path] = ()) -> list[str]:
    """The host trees the guest's programs load from (/usr: fio, nvme-cli, their libraries;
    this Python and ssdlab), outermost first, shared again read-only with the guest's cache
    on. Over vng's uncached 9p root every lookup is a round trip to QEMU, about 0.5 ms
    emulated: Python's start in an emulated guest took 15 s, 6-9 s from cached trees. They
    do not change while the VM runs; a tree holding an --rwdir is left as it is (the cached
    mount would hide it), as is a path QEMU's options cannot spell (a comma)."""
    import ssdlab

    rw = [os.path.realpath(d) for d in rwdirs]
    trees: list[str] = []
    for t in sorted({os.path.realpath(t) for t in ("/usr", sys.base_prefix, sys.prefix,
                                                    Path(ssdlab.__file__).parents[1])}, key=len):
        if (os.path.isdir(t) and t != "/" and "," not in t
                and not any(os.path.commonpath([t, o]) == o for o in trees)  # inside one already
                and not any(os.path.commonpath([d, t]) == t for d in rw)):
            trees.append(t)
    return trees


def command(namespaces: list[Namespace], guest_cmd: str, *, rwdirs: Sequence[Path] = (),
            memory: str = "1G", cpus: int = 2, acc: str = "kvm", console: bool = False) -> list[str]:
    """The vng command line that boots the VM, runs `guest_cmd` (a shell command, as root,
    in the current directory) and powers off. Its exit status is the command's."""
    kernel = kernel_image()
    if kernel is None:
        raise ValueError("no kernel image with its modules in /boot: apt-get install linux-image-amd64")
    q = qemu_args(namespaces)  # vng adds -cpu host under KVM
    mounts = []
    nine_p = not virtiofsd_usable()
    if nine_p:  # (virtiofs caches the root itself)
        for i, tree in enumerate(cached_trees(rwdirs)):
            q += ["-virtfs", f"local,path={tree},mount_tag=ssdlab_tree{i},security_model=none,readonly=on"]
            mounts.append(f"mount -t 9p -o ro,trans=virtio,version=9p2000.L,msize=524288,cache=loose "
                          f"ssdlab_tree{i} {shlex.quote(tree)} 2>/dev/null; ")  # uncached if it fails
    cmd = [vng_binary() or "vng", "--run", str(kernel), "--user", "root", "-m", memory, "-p", str(cpus),
           "--disable-monitor", "--qemu-opts=" + shlex.join(q)]
    if nine_p:
        cmd += ["--force-9p"]  # where vng would share them anyway, without its wait
    if acc != "kvm":
        # under emulation on a busy host a command (a Format) can outlast the guest's 30 s
        # NVMe timeouts; two minutes still recover a command the emulator lost (abort, reset)
        cmd += ["--disable-kvm", "--append", f"nvme_core.io_timeout={EMULATED_TIMEOUT_S}",
                "--append", f"nvme_core.admin_timeout={EMULATED_TIMEOUT_S}",
                "--append", "modprobe.blacklist=" + ",".join(EMULATED_UNUSED_DRIVERS)]
    for d in rwdirs:
        cmd += ["--rwdir", str(Path(d).absolute())]
    if console:
        # the kernel's messages on stderr (vng sends them to /dev/null unless verbose)
        cmd += ["--verbose", "--append", "loglevel=6"]
    return cmd + ["--exec", "".join(mounts) + guest_cmd]


def environment() -> dict[str, str]:
    """vng runs virtme-run from PATH and virtiofsd (Debian keeps it in /usr/lib/qemu)."""
    path = [str(Path(sys.executable).parent), os.environ.get("PATH", ""), "/usr/lib/qemu", "/usr/sbin", "/sbin"]
    return dict(os.environ, PATH=":".join(p for p in path if p))


@dataclass
class Result:
    """How a boot ended: the command's exit status (None: killed at the time bound) and what
    it printed (empty unless captured)."""

    returncode: int | None
    stdout: str
    stderr: str


def run(namespaces: list[Namespace], guest_cmd: str, *, rwdirs: Sequence[Path] = (), memory: str = "1G",
        cpus: int = 2, timeout: float | None = None, capture: bool = True,
        console: bool = False) -> Result:
    """Boot, run `guest_cmd`, power off. `capture`: the guest's output in the result,
    else on this process's stdout and stderr (through pipes either way: vm_output.py).
    `console`: the guest kernel's messages in its stderr (its NVMe resets and hung-task
    reports). Past `timeout` the whole process group (vng, QEMU) is killed and the
    result's returncode is None; it is killed as well when this process dies."""
    acc, _ = accel()
    cmd = command(namespaces, guest_cmd, rwdirs=rwdirs, memory=memory, cpus=cpus, acc=acc, console=console)
    with tempfile.TemporaryFile("w+b") as out, tempfile.TemporaryFile("w+b") as err:
        sys.stdout.flush()
        sys.stderr.flush()
        relays = [Relay(out.fileno() if capture else 1), Relay(err.fileno() if capture else 2)]
        with sigint_held() as held:
            try:
                proc = subprocess.Popen(launch(cmd, acc), env=environment(), stdin=subprocess.DEVNULL,
                                        stdout=relays[0].w, stderr=relays[1].w, start_new_session=True,
                                        preexec_fn=child.die_with_parent())
            finally:
                for r in relays:
                    r.started()
        try:
            if held:  # what that Ctrl-C would have done, now that the VM can be stopped
                signal.raise_signal(signal.SIGINT)
            rc: int | None = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            rc = None
        finally:
            _kill_group(proc)  # QEMU, a grandchild, holds the pipes open past vng
            for r in relays:
                r.finish()
        out.seek(0)
        err.seek(0)
        text = (lambda f: f.read().decode(errors="replace")) if capture else (lambda f: "")
        return Result(rc, text(out), text(err))


@contextmanager
def sigint_held() -> Iterator[list[int]]:
    """SIGINT noted, not acted on, while the VM's process starts: Ctrl-C between its exec
    and Popen's return would leave the VM running in its session, with no pid to kill.
    The caller raises it again once it holds the process (the list is not empty)."""
    held: list[int] = []
    if threading.current_thread() is not threading.main_thread():
        yield held  # only the main thread gets signals
        return
    old = signal.signal(signal.SIGINT, lambda signum, frame: held.append(signum))
    try:
        yield held
    finally:
        signal.signal(signal.SIGINT, old)


def launch(cmd: list[str], acc: str) -> list[str]:
    """The VM's command as started: under a group leader that kills vng, virtme-run and QEMU
    (a grandchild) when this process dies, even by SIGKILL; on one CPU under emulation."""
    return group_leader.command(one_cpu(cmd) if acc != "kvm" else cmd)


def one_cpu(cmd: list[str]) -> list[str]:
    """Under emulation, QEMU and everything it starts on one host CPU. QEMU's emulated
    controller and the guest's driver share doorbells and event indexes in memory (Doorbell
    Buffer Config, which Linux enables); QEMU's vCPU and I/O threads, each on its own host
    CPU, now and then miss each other's update (a store and a later load reordered by the
    host) and a queue stops: its commands time out and the guest resets the controller. On
    one CPU every switch between those threads orders their memory. One emulated vCPU
    uses one host CPU anyway."""
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2 or not shutil.which("taskset"):
        return cmd
    return ["taskset", "-c", str(cpus[-1]), *cmd]


def _kill_group(proc: subprocess.Popen) -> None:
    """Nothing of the VM outlives its run: the group leader, vng, virtme-run and QEMU share one
    process group."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait()


def _checked(path: str, what: str) -> tuple[str, os.stat_result]:
    """`path`'s real path, reached through no other user's link (safe_path), and its stat."""
    real = safe_path.real(path, what)
    try:
        return real, os.stat(real)
    except OSError as e:
        raise ValueError(f"{what}: {e.strerror}") from None


def checked_file(path: str) -> str:
    """A --file backing: QEMU (as root, under sudo) opens it by name and the guest writes it
    whole, so it must be a regular file of the caller's (or root's), reached through no
    other user's link and in directories no one else may write (safe_path.check_dirs), who
    could otherwise point it at any file of the host. Its real path, which QEMU gets."""
    what = f"--file {path}"
    if not os.path.lexists(path):
        raise ValueError(f"{what}: not a file; create it first (truncate -s 1G {path})")
    real, st = _checked(path, what)
    if not stat.S_ISREG(st.st_mode):
        raise ValueError(f"{what}: not a file; create it first (truncate -s 1G {path})")
    if st.st_uid not in safe_path.trusted_uids():
        raise safe_path.UnsafePath(what, f"{real} belongs to uid {st.st_uid}, another user, who could swap "
                                         "it for a link to any file before QEMU opens it; copy it to a file of yours")
    safe_path.check_dirs(real, what)
    why = safety.read_only(st, real)  # QEMU as root would open it for writing all the same
    if why:
        raise ValueError(f"{what}: {why}")
    return real


def checked_socket(path: str) -> str:
    """An --nbd socket, reached through no other user's link; its real path."""
    what = f"--nbd {path}"
    if not os.path.lexists(path):
        raise ValueError(f"{what}: no socket there; start `ssdlab serve ... --socket {path}` first")
    real, st = _checked(path, what)
    if not stat.S_ISSOCK(st.st_mode):
        raise ValueError(f"{what}: no socket there; start `ssdlab serve ... --socket {path}` first")
    return real


def checked_rwdir(path: Path) -> str:
    """An --rwdir: the guest's root writes into it, so it must be a directory of the caller's
    (or root's), reached through no other user's link, that no one else may swap (as
    safe_path.check_dirs); its real path."""
    what = f"--rwdir {path}"
    real, st = _checked(str(path), what)
    if not stat.S_ISDIR(st.st_mode):
        raise ValueError(f"{what}: not a directory; create it first (mkdir {path})")
    if st.st_uid not in safe_path.trusted_uids():
        raise safe_path.UnsafePath(what, f"{real} belongs to uid {st.st_uid}, another user; give a directory of "
                                         "yours")
    safe_path.check_dirs(os.path.join(real, "-"), what)
    return real


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -P -m ssdlab.serve.nvme_vm",
                                 description="Boot a small VM whose NVMe namespaces are files or "
                                             "`ssdlab serve` sockets, run a command in it as root.")
    ap.add_argument("--nbd", action="append", default=[], metavar="SOCKET",
                    help="an `ssdlab serve` Unix socket: one namespace per --nbd, in order")
    ap.add_argument("--file", action="append", default=[], metavar="PATH",
                    help="a backing file: one namespace per --file, after the --nbd ones")
    ap.add_argument("--lba", type=int, default=512, choices=LBA_SIZES, help="logical block size")
    ap.add_argument("--memory", default="1G")
    ap.add_argument("--cpus", type=int, default=2, help="vCPUs (each one a busy host thread when emulated)")
    ap.add_argument("--rwdir", action="append", default=[], type=Path,
                    help="a host directory the guest may write (results)")
    ap.add_argument("--console", action="store_true",
                    help="the guest kernel's messages on stderr (NVMe timeouts, aborts, resets)")
    ap.add_argument("cmd", nargs=argparse.REMAINDER, help="-- COMMAND (default: nvme list)")
    a = ap.parse_args(argv)
    try:
        ns = [Namespace(f"nbd+unix:///?socket={checked_socket(s)}", a.lba) for s in a.nbd]
        ns += [Namespace(checked_file(f), a.lba) for f in a.file]
        rwdirs = [Path(checked_rwdir(d)) for d in a.rwdir]
    except ValueError as e:
        print(str(e).splitlines()[0], file=sys.stderr)
        return 2
    if not ns:
        print("give at least one namespace: --nbd SOCKET or --file PATH", file=sys.stderr)
        return 2
    why = why_not()
    if why:
        print(f"cannot boot the NVMe VM: {why}", file=sys.stderr)
        return 2
    acc, why_tcg = accel()
    if acc == "tcg" and why_tcg:
        print(f"nvme_vm: {why_tcg}; QEMU emulates the CPU instead (a minute to boot, slow Python)",
              file=sys.stderr)
    cmd = a.cmd[1:] if a.cmd[:1] == ["--"] else a.cmd
    try:
        r = run(ns, shlex.join(cmd) if cmd else "nvme list", rwdirs=rwdirs, memory=a.memory, cpus=a.cpus,
                capture=False, console=a.console)
    except KeyboardInterrupt:  # run() has killed the VM whole on its way out
        print("nvme_vm: interrupted; the VM was stopped", file=sys.stderr)
        return 130
    return 1 if r.returncode is None else r.returncode


if __name__ == "__main__":
    sys.exit(main())
