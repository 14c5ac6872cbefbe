"""Runs inside the NVMe VM as root (tests/nvme/conftest.py boots it): ssdlab against the
emulated controller's namespaces, each step's outcome written to OUT/steps.json for the
host's tests to judge. The steps only gather facts; the assertions live in the tests.

  /dev/nvme0n1  512 B LBAs, a partition table (made on the host), partition 1 mounted here
  /dev/nvme0n2  4 KiB LBAs, blank: identity, fills, review, interrupts
  /dev/nvme0n3  512 B LBAs, a simulated drive served by `ssdlab serve` over NBD: a fill
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
import traceback
from pathlib import Path

OUT = Path(sys.argv[1])
# SQLite cannot lock on the 9p share: the stores live in the guest's /tmp and are copied
# to OUT after each step
LOCAL = Path("/tmp/ssdlab-guest")
LOCAL.mkdir(exist_ok=True)
DB = LOCAL / "r.sqlite"
N1, N2 = "/dev/nvme0n1", "/dev/nvme0n2"
steps: dict[str, dict] = {}


def save() -> None:
    tmp = OUT / "steps.json.tmp"
    tmp.write_text(json.dumps(steps, default=str, indent=1))
    tmp.replace(OUT / "steps.json")


ONLY = sys.argv[2].split(",") if len(sys.argv) > 2 else None  # a subset of the steps, by name


def step(fn):
    if ONLY is not None and fn.__name__ not in ONLY:
        return fn
    t0 = time.monotonic()
    try:
        steps[fn.__name__] = {"ok": True, **fn()}
    except Exception:
        steps[fn.__name__] = {"ok": False, "error": traceback.format_exc()[-3000:]}
    steps[fn.__name__]["wall_s"] = time.monotonic() - t0
    for f in LOCAL.glob("*.sqlite*"):
        shutil.copyfile(f, OUT / f.name)
    line = (f"guest: {fn.__name__} {'ok' if steps[fn.__name__]['ok'] else 'FAILED'} "
            f"({steps[fn.__name__]['wall_s']:.0f} s)")
    print(line, flush=True)
    with open(OUT / "guest.log", "a") as f:
        f.write(line + "\n")
    save()
    return fn


def sh(*cmd: str, timeout: float = 600) -> dict:
    r = subprocess.run(list(cmd), capture_output=True, text=True, timeout=timeout)
    return {"rc": r.returncode, "stdout": r.stdout[-20000:], "stderr": r.stderr[-4000:]}


def ssdlab(*args: str, timeout: float = 900) -> dict:
    """`ssdlab ARGS` in this process (typer's runner: one import of ssdlab for all the
    commands; an emulated guest takes a minute per import)."""
    from typer.testing import CliRunner

    from ssdlab.cli import app

    r = CliRunner().invoke(app, list(args), catch_exceptions=False)
    return {"rc": r.exit_code, "stdout": r.stdout[-20000:], "stderr": r.stderr[-4000:]}


def sectors_written(dev: str) -> int:
    return int(Path(f"/sys/block/{os.path.basename(dev)}/stat").read_text().split()[6])


@step
def tools():
    return {"nvme_list": sh("nvme", "list", "-o", "json"),
            "id_ctrl": sh("nvme", "id-ctrl", N2, "-o", "json"),
            "id_ns1": sh("nvme", "id-ns", N1, "-o", "json"),
            "id_ns2": sh("nvme", "id-ns", N2, "-o", "json"),
            "smartctl": sh("smartctl", "-j", "-a", N2),
            "smart_log": sh("nvme", "smart-log", N2, "-o", "json")}


@step
def identity():
    from ssdlab.targets.fio import FioTarget

    out = {}
    for dev in (N1, N2):
        with FioTarget(dev) as t:
            ident = t.identify()
            out[dev] = {"identity": {"kind": ident.kind, "model": ident.model, "serial": ident.serial,
                                     "firmware": ident.firmware, "capacity": ident.capacity,
                                     "extra": ident.extra},
                        "telemetry_tool": t.telemetry.tool, "telemetry": t.telemetry.read(),
                        "purge_plan": t._purge_plan().method}
    return out


N3 = "/dev/nvme0n3"


@step
def served_fill():
    """The fill on the namespace backed by `ssdlab serve` (a simulated drive), through the
    guest's NVMe driver and fio's io_uring/libaio engine with direct I/O."""
    if not os.path.exists(N3):
        return {"absent": True}
    return {"run": ssdlab("run", "fill", "--drive", N3, "--destroy-data", N3, "--db", str(LOCAL / "served.sqlite"),
                          "--json", timeout=1800),
            "queue": {k: Path(f"/sys/block/nvme0n3/queue/{k}").read_text().strip()
                      for k in ("max_sectors_kb", "max_hw_sectors_kb", "nr_requests", "discard_max_bytes",
                                "write_zeroes_max_bytes")}}


@step
def refusals():
    """n1: its partition table without the flag; its mounted partition and the whole disk
    under it even with the flag; n2 held open O_EXCL by another process."""
    mnt = Path("/tmp/ssdlab-mnt")
    mnt.mkdir(exist_ok=True)
    part = N1 + "p1"
    out = {"partition_table": ssdlab("run", "fill", "--drive", N1, "--db", str(DB))}
    out.update(mkfs=sh("mkfs.ext4", "-q", "-F", part), mount=sh("mount", part, str(mnt)))
    out["mounted"] = ssdlab("run", "fill", "--drive", part, "--destroy-data", part, "--db", str(DB))
    out["disk_of_mounted"] = ssdlab("run", "fill", "--drive", N1, "--destroy-data", N1, "--db", str(DB))
    sh("umount", str(mnt))
    holder = subprocess.Popen([sys.executable, "-c", "import os,sys,time; fd=os.open(sys.argv[1], "
                               "os.O_RDONLY|os.O_EXCL); print('held', flush=True); time.sleep(600)", N2],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        out["in_use"] = ssdlab("run", "fill", "--drive", N2, "--destroy-data", N2, "--db", str(DB))
    finally:
        holder.kill()
        holder.wait()
    return out


@step
def fill():
    """The fill on the 4 KiB namespace: purge by the controller's route, telemetry stored."""
    return {"run": ssdlab("run", "fill", "--drive", N2, "--destroy-data", N2, "--db", str(DB), "--json")}


@step
def review():
    rep = OUT / "report"
    return {"run": ssdlab("review", "--drive", N2, "--destroy-data", N2, "--db", str(DB), "-o", str(rep),
                          "--repeat", "1", "--seconds", "2", "--interval", "0", "--json", timeout=1800),
            "files": sorted(p.name for p in rep.iterdir()) if rep.is_dir() else []}


def _interrupt(sig: int) -> dict:
    db = LOCAL / f"sig{sig}.sqlite"
    p = subprocess.Popen([sys.executable, "-m", "ssdlab.cli", "run", "fill", "--drive", N2,
                          "--destroy-data", N2, "--db", str(db)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    # the fill itself writing (after the purge), then a second of samples stored
    deadline = time.monotonic() + 600
    base = sectors_written(N2)
    while sectors_written(N2) - base < 2 * 2**20 // 512 * 8 and p.poll() is None and time.monotonic() < deadline:
        time.sleep(0.1)
    time.sleep(3)
    p.send_signal(sig)
    out, err = p.communicate(timeout=300)
    time.sleep(1)
    fio_left = sh("sh", "-c", "ls -l /proc/[0-9]*/fd 2>/dev/null | grep -c nvme0n2 || true")["stdout"].strip()
    # read in the guest: a killed run reads as stale only where its process lived
    listed = ssdlab("results", "list", "--db", str(db), "--json")
    return {"rc": p.returncode, "stdout": out[-4000:], "stderr": err[-4000:], "db": str(OUT / db.name),
            "fds_on_device_after": fio_left, "list": listed}


@step
def ctrl_c():
    return _interrupt(signal.SIGINT)


@step
def sigkill():
    return _interrupt(signal.SIGKILL)


steps["done"] = {"ok": True}
save()
