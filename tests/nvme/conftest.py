"""The NVMe VM, booted once per test session: QEMU's emulated NVMe controller with three
namespaces (two sparse files on tmpfs, one `ssdlab serve` socket), ssdlab
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
from pathlib import Path

import pytest
from ssdlab.serve import nvme_vm

MIB = 2**20
NS_BYTES = 128 * MIB
CPUS = 1
MEMORY = "1G"
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
    def __init__(self, out: Path, result: subprocess.CompletedProcess, wall_s: float, accel: str):
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
        assert s is not None, (f"the guest never reached step {name!r}: exit {self.result.returncode}\n"
                               f"{self.result.stdout[-3000:]}\n{self.result.stderr[-3000:]}")
        kernel = "\n".join(self.steps.get("kernel", {}).get("nvme", [])[-20:])
        assert s["ok"], f"guest step {name} raised:\n{s['error']}\nthe guest kernel's NVMe lines:\n{kernel}"
        return s


def _serve(sock: Path, db: Path) -> subprocess.Popen:
    serve = subprocess.Popen([sys.executable, "-m", "ssdlab.cli", "serve", SERVED_DRIVE, "--socket", str(sock),
                              "--db", str(db), "--json", *(x for s in SERVED_SETS for x in ("--set", s))],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert serve.stdout is not None
    ready = json.loads(serve.stdout.readline() or "{}")
    if ready.get("event") != "ready":
        serve.kill()
        raise AssertionError(f"serve did not start: {serve.communicate()[1][-2000:]}")
    return serve


@pytest.fixture(scope="session")
def nvme_vm_run(tmp_path_factory, request) -> VM:
    why = skip_reason()
    if why:
        pytest.skip(why)
    base = tmp_path_factory.mktemp("nvme-vm")
    out = base / "out"
    out.mkdir()
    # the namespaces' files in memory where there is a tmpfs: on a shared disk, QEMU's
    # writes to them stalled past the guest's 30 s I/O timeout (the controller was reset)
    mem = Path(tempfile.mkdtemp(prefix="ssdlab-nvme-vm-", dir="/dev/shm" if os.path.isdir("/dev/shm") else base))
    request.addfinalizer(lambda: shutil.rmtree(mem, ignore_errors=True))
    n1, n2 = mem / "n1.img", mem / "n2.img"
    for f in (n1, n2):
        with open(f, "wb") as fh:
            fh.truncate(NS_BYTES)
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
              nvme_vm.Namespace(f"nbd+unix:///?socket={sock}", 512)]
        t0 = time.monotonic()
        r = nvme_vm.run(ns, f"cd {ROOT} && {sys.executable} {GUEST} {out}", rwdirs=[out],
                        memory=MEMORY, cpus=CPUS, timeout=1800)
        wall = time.monotonic() - t0
    finally:
        if serve.poll() is None:
            serve.send_signal(signal.SIGINT)
        sout, _ = serve.communicate(timeout=120)
    vm = VM(out, r, wall, acc)
    ends = [json.loads(x) for x in sout.splitlines() if x.startswith("{")]
    vm.serve_end = ends[-1] if ends else {}
    print(f"\nNVMe VM ({acc}, {CPUS} vCPU, {MEMORY}): {wall:.0f} s wall, "
          f"{(out / 'guest.log').read_text() if (out / 'guest.log').exists() else 'no guest log'}",
          file=sys.stderr)
    return vm
