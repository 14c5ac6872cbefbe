"""The NVMe VM, booted once per test session: QEMU's emulated NVMe controller with four
namespaces (three sparse files on tmpfs, one `ssdlab serve` socket), ssdlab
run inside it by guest.py, the results (steps.json, the SQLite stores) written back to a
host directory shared into the guest. KVM when it can boot a distribution kernel, QEMU's
emulation (TCG) otherwise; the tests skip only where QEMU cannot run at all.

The guest is kept small, as the machine is shared: one vCPU (an emulated CPU is a host
thread busy all the time) and 1 GiB of memory."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import pytest
from ssdlab.serve import nvme_vm
from ssdlab.targets.child import die_with_parent

MIB = 2**20
NS_BYTES = 128 * MIB
PI_NS_BYTES = 32 * MIB  # the namespace with protection information (its file holds the metadata too)
CPUS = 1
MEMORY = "1G"
VM_TIMEOUT_S = 780  # a boot; two fit in the tests' 1800 s
GUEST = Path(__file__).with_name("guest.py")
ROOT = Path(__file__).resolve().parents[2]
# the served namespace: a small simulated drive (its fill through the guest's NVMe driver
# must reach it; benchmarks/nvme_served_fill.py compares a larger one's fill with virtual time)
SERVED_DRIVE = "sim:sn520-128"
SERVED_SETS = ["user_capacity_gb=0.25", "nand.channels=1", "nand.blocks_per_plane=16",
               "slc.dynamic_max_gb=0.05", "slc.dynamic_share=1.0"]


def skip_reason() -> str | None:
    why = nvme_vm.why_not()
    if why is None and os.geteuid() != 0:
        return "needs root (the guest runs as root on the host's root filesystem)"
    return why  # a missing package: a failure under `make test` (sysdeps installs it)


class VM:
    def __init__(self, out: Path, result: nvme_vm.Result, wall_s: float, accel: str):
        self.out = out
        self.result = result
        self.wall_s = wall_s
        self.accel = accel
        f = out / "steps.json"
        self.steps = json.loads(f.read_text()) if f.exists() else {}
        self.serve_end: dict = {}
        self.ns_bytes = NS_BYTES
        self.served_bytes = float(dict(x.split("=") for x in SERVED_SETS)["user_capacity_gb"]) * 1e9

    def step(self, name: str) -> dict:
        s = self.steps.get(name)
        ended = (f"exit {self.result.returncode}" if self.result.returncode is not None else
                 f"killed after {VM_TIMEOUT_S} s")
        assert s is not None, (f"the guest never reached step {name!r} ({ended}); its output:\n"
                               f"{self.result.stdout[-3000:]}\nits kernel's NVMe lines:\n{self.nvme_lines()}")
        assert s["ok"], f"guest step {name} raised:\n{s['error']}\nthe guest kernel's NVMe lines:\n{self.nvme_lines()}"
        return s

    def controller_stalled(self) -> bool:
        """Did the guest's kernel time out a command (or was the VM killed at the bound)?"""
        return self.result.returncode is None or any(
            "timeout, aborting" in x or "reset controller" in x for x in (self.result.stderr or "").splitlines())

    def nvme_lines(self) -> str:
        """The guest kernel's console lines about NVMe (timeouts, aborts, resets) and hung tasks."""
        lines = [x for x in (self.result.stderr or "").splitlines()
                 if "nvme" in x or "blocked for more than" in x]
        return "\n".join(lines[-30:])


def _serve(sock: Path, db: Path) -> subprocess.Popen:
    # stopped (SIGTERM) with the test process even when that is killed outright
    serve = subprocess.Popen([sys.executable, "-m", "ssdlab.cli", "serve", SERVED_DRIVE, "--socket", str(sock),
                              "--db", str(db), "--json", *(x for s in SERVED_SETS for x in ("--set", s))],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             preexec_fn=die_with_parent())
    assert serve.stdout is not None
    ready = json.loads(serve.stdout.readline() or "{}")
    if ready.get("event") != "ready":
        serve.kill()
        raise AssertionError(f"serve did not start: {serve.communicate()[1][-2000:]}")
    return serve


def _boot(base: Path) -> VM:
    """One boot of the VM on fresh namespaces and a fresh served drive."""
    out = base / "out"
    out.mkdir()
    mem = Path(tempfile.mkdtemp(prefix="ssdlab-nvme-vm-", dir="/dev/shm" if os.path.isdir("/dev/shm") else base))
    try:
        n1, n2, n4 = mem / "n1.img", mem / "n2.img", mem / "n4.img"
        for f, size in ((n1, NS_BYTES), (n2, NS_BYTES), (n4, PI_NS_BYTES)):
            with open(f, "wb") as fh:
                fh.truncate(size)
        # namespace 1: a partition table (for the refusals; the guest mounts its partition, a
        # small one: mkfs is quick)
        subprocess.run(["sfdisk", "-q", str(n1)], input="label: gpt\n,16MiB\n", text=True, check=True,
                       capture_output=True)
        # namespace 3: a simulated drive, `ssdlab serve` over a Unix socket
        sock = base / "drive.sock"
        serve = _serve(sock, out / "serve.sqlite")
        acc, _ = nvme_vm.accel()
        try:
            ns = [nvme_vm.Namespace(str(n1), 512), nvme_vm.Namespace(str(n2), 4096),
                  nvme_vm.Namespace(f"nbd+unix:///?socket={sock}", 512),
                  nvme_vm.Namespace(str(n4), 4096, pi=1)]  # 8 bytes of metadata, PI type 1
            t0 = time.monotonic()
            # bounded below the tests' own timeout, so a stuck guest fails with what it printed
            r = nvme_vm.run(ns, f"cd {ROOT} && {sys.executable} {GUEST} {out}", rwdirs=[out],
                            memory=MEMORY, cpus=CPUS, timeout=VM_TIMEOUT_S, console=True)
            wall = time.monotonic() - t0
        finally:
            if serve.poll() is None:
                serve.send_signal(signal.SIGINT)
            sout, _ = serve.communicate(timeout=120)
    finally:
        shutil.rmtree(mem, ignore_errors=True)
    (out / "console.log").write_text(r.stderr or "")
    vm = VM(out, r, wall, acc)
    ends = [json.loads(x) for x in sout.splitlines() if x.startswith("{")]
    vm.serve_end = ends[-1] if ends else {}
    return vm


@pytest.fixture(scope="session")
def nvme_vm_run(tmp_path_factory) -> VM:
    why = skip_reason()
    if why:
        pytest.skip(why)
    vm = _boot(tmp_path_factory.mktemp("nvme-vm"))
    if vm.controller_stalled():
        # QEMU's emulated controller (under TCG) now and then stops fetching a queue's
        # commands: the guest's kernel times them out, aborts and resets the controller. That
        # is the emulator, not what is tested here: one more boot, on fresh namespaces. A
        # warning, so that a passing run's summary says why the VM took twice as long.
        last = "\n".join(vm.nvme_lines().splitlines()[-8:])
        warnings.warn(f"NVMe VM: the emulated controller stalled (that boot took {vm.wall_s:.0f} s); "
                      f"booting again. Its kernel said, last:\n{last}", stacklevel=1)
        vm = _boot(tmp_path_factory.mktemp("nvme-vm-again"))
    print(f"\nNVMe VM ({vm.accel}, {CPUS} vCPU, {MEMORY}): {vm.wall_s:.0f} s wall, "
          f"{(vm.out / 'guest.log').read_text() if (vm.out / 'guest.log').exists() else 'no guest log'}",
          file=sys.stderr)
    return vm
