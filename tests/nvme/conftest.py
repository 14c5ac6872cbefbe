"""The NVMe VM, booted once per test session: QEMU's emulated NVMe controller with two
namespaces on sparse files in a temporary directory, ssdlab run inside it by guest.py,
the results (steps.json, the SQLite stores, the review's report) written back to a host
directory shared into the guest. Without a KVM that can boot a distribution kernel the
tests skip with one line saying so."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from ssdlab.serve import nvme_vm

MIB = 2**20
NS_BYTES = 256 * MIB
GUEST = Path(__file__).with_name("guest.py")
ROOT = Path(__file__).resolve().parents[2]
# the served namespace: the drive of tests/serve's NBD fill, shrunk (its SLC cache and
# post-cache speed are what the fill through the guest's NVMe driver must find)
SERVED_DRIVE = "sim:sn520-128"
SERVED_SETS = ["user_capacity_gb=2", "nand.channels=1", "nand.blocks_per_plane=88",
               "slc.dynamic_max_gb=0.5", "slc.dynamic_share=1.0"]


def skip_reason() -> str | None:
    why = nvme_vm.why_not()
    if why is None:
        return None
    if os.geteuid() != 0:
        return "needs root (the guest runs as root on the host's root filesystem)"
    # a missing package is a failure under `make test` (sysdeps installs it); missing
    # hardware virtualization is not something a package gives
    acc, _ = nvme_vm.accel()
    return f"[hardware] {why}" if acc is None else why


class VM:
    def __init__(self, out: Path, result: subprocess.CompletedProcess, wall_s: float):
        self.out = out
        self.result = result
        self.wall_s = wall_s
        f = out / "steps.json"
        self.steps = json.loads(f.read_text()) if f.exists() else {}

    def step(self, name: str) -> dict:
        s = self.steps.get(name)
        assert s is not None, (f"the guest never reached step {name!r}: exit {self.result.returncode}\n"
                               f"{self.result.stdout[-3000:]}\n{self.result.stderr[-3000:]}")
        assert s["ok"], f"guest step {name} raised:\n{s['error']}"
        return s


@pytest.fixture(scope="session")
def nvme_vm_run(tmp_path_factory) -> VM:
    why = skip_reason()
    if why:
        pytest.skip(why)
    base = tmp_path_factory.mktemp("nvme-vm")
    out = base / "out"
    out.mkdir()
    n1, n2 = base / "n1.img", base / "n2.img"
    for f in (n1, n2):
        with open(f, "wb") as fh:
            fh.truncate(NS_BYTES)
    # namespace 1: a partition table (for the refusals; the guest mounts its partition)
    subprocess.run(["sfdisk", "-q", str(n1)], input="label: gpt\n,\n", text=True, check=True,
                   capture_output=True)
    # namespace 3: a simulated drive, `ssdlab serve` over a Unix socket
    sock = base / "drive.sock"
    serve = subprocess.Popen([sys.executable, "-m", "ssdlab.cli", "serve", SERVED_DRIVE, "--socket", str(sock),
                              "--db", str(out / "serve.sqlite"), "--json",
                              *(x for s in SERVED_SETS for x in ("--set", s))],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        ready = json.loads(serve.stdout.readline() or "{}")
        assert ready.get("event") == "ready", f"serve did not start: {serve.stderr.read() if serve.poll() is not None else ''}"
        ns = [nvme_vm.Namespace(str(n1), 512), nvme_vm.Namespace(str(n2), 4096),
              nvme_vm.Namespace(f"nbd+unix:///?socket={sock}", 512)]
        t0 = time.monotonic()
        r = nvme_vm.run(ns, f"cd {ROOT} && {sys.executable} {GUEST} {out}", rwdirs=[out],
                        memory="1536M", timeout=3600)
        wall = time.monotonic() - t0
    finally:
        if serve.poll() is None:
            serve.send_signal(signal.SIGINT)
        sout, serr = serve.communicate(timeout=120)
    vm = VM(out, r, wall)
    vm.serve_end = [json.loads(x) for x in sout.splitlines() if x.startswith("{")][-1]
    return vm
