"""A simulated drive as an NVMe namespace: `ssdlab serve` backs namespace 1 of the VM's
emulated NVMe controller (python -m ssdlab.serve.nvme_vm), the guest runs `ssdlab run fill`
on /dev/nvme0n1 (its NVMe driver, fio with direct I/O), and the same fill runs in virtual
time. Prints both SLC cache sizes and post-cache speeds and their differences (the NVMe
tests require 10 % and 15 %). Root; needs a KVM that boots a distribution kernel
(SSDLAB_NVME_VM_ACCEL=tcg emulates instead: much slower, and the guest may not keep up)."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from ssdlab.serve import nvme_vm

ROOT = Path(__file__).resolve().parents[1]
DRIVE = "sim:sn520-128"
SETS = ["user_capacity_gb=2", "nand.channels=1", "nand.blocks_per_plane=88",
        "slc.dynamic_max_gb=0.5", "slc.dynamic_share=1.0"]


def metrics(out: str) -> dict:
    return json.loads(out)["drives"][0]["metrics"]


def main() -> int:
    why = nvme_vm.why_not()
    if why:
        print(f"nvme_served_fill: skipped: {why}")
        return 0
    sets = [x for s in SETS for x in ("--set", s)]
    with tempfile.TemporaryDirectory(prefix="ssdlab-bench-nvme-") as d:
        out = Path(d) / "out"
        out.mkdir()
        sock = Path(d) / "drive.sock"
        serve = subprocess.Popen([sys.executable, "-m", "ssdlab.cli", "serve", DRIVE, "--socket", str(sock),
                                  "--db", str(out / "serve.sqlite"), "--json", *sets],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            if json.loads(serve.stdout.readline() or "{}").get("event") != "ready":
                print(f"serve did not start: {serve.stderr.read()[-500:]}")
                return 1
            t0 = time.monotonic()
            guest = (f"cd {ROOT} && {sys.executable} -m ssdlab.cli run fill --drive /dev/nvme0n1 "
                     f"--destroy-data /dev/nvme0n1 --db {out}/served.sqlite --json > {out}/fill.json")
            r = nvme_vm.run([nvme_vm.Namespace(f"nbd+unix:///?socket={sock}", 512)], guest, rwdirs=[out],
                            memory="1536M", timeout=3600)
            wall = time.monotonic() - t0
        finally:
            serve.send_signal(signal.SIGINT)
            serve.communicate(timeout=120)
        if r.returncode != 0:
            print(f"the guest's fill failed (exit {r.returncode}): {r.stderr[-1000:]}")
            return 1
        real = metrics((out / "fill.json").read_text())
        virtual = metrics(subprocess.run([sys.executable, "-m", "ssdlab.cli", "run", "fill", "--drive", DRIVE,
                                          *sets, "--db", str(out / "virtual.sqlite"), "--json"],
                                         capture_output=True, text=True, check=True).stdout)
    print(f"served {DRIVE} ({', '.join(SETS)}) as an NVMe namespace, fill in the guest "
          f"({wall:.0f} s with boot) vs virtual time")
    print(f"{'':<22}{'NVMe VM':>10}{'virtual':>10}{'diff':>9}")
    for k, unit in (("slc_cache_gb", "GB"), ("post_cache_mbps", "MB/s")):
        a, b = real[k], virtual[k]
        diff = f"{100 * (a - b) / b:+.1f} %" if a is not None and b else "-"
        print(f"{k + ' (' + unit + ')':<22}{a if a is None else f'{a:.3g}':>10}{b:>10.3g}{diff:>9}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
