"""A served drive's Write Zeroes: an NVMe Format of a namespace backed by `ssdlab serve`
reaches it as NBD zero requests that may unmap; the drive unmaps them like a trim (a
formatted drive is empty), and a zero request that may not unmap is a write of zeroes.
Either way the range reads back as zeroes."""

from __future__ import annotations

import shutil
import subprocess
import time

import pytest
from ssdlab.serve.server import ServeOptions, Serving
from ssdlab.store import Store

TINY = ["user_capacity_gb=0.25", "nand.channels=1", "nand.blocks_per_plane=16",
        "slc.dynamic_max_gb=0.05", "slc.dynamic_share=1.0"]
MIB = 2**20


def _why_not() -> str | None:
    for tool in ("nbdkit", "nbdcopy"):
        if not shutil.which(tool):
            return f"{tool} not installed (tools/sysdeps.sh test installs nbdkit, libnbd-bin)"
    return None


@pytest.mark.skipif(_why_not() is not None, reason=str(_why_not()))
@pytest.mark.parametrize("allocated, unmapped", [(False, True), (True, False)])
def test_zero_requests_unmap_when_allowed(tmp_path, allocated, unmapped):
    src = tmp_path / "src.img"
    with open(src, "wb") as f:  # 32 MiB of data, then 32 MiB of hole: nbdcopy zeroes the hole
        f.write(b"\xa5" * (32 * MIB))
        f.truncate(64 * MIB)
    s = Serving(ServeOptions(drive="sim:sn520-128", sets=TINY, socket=tmp_path / "d.sock", interval_s=0.2))
    s.start(Store(tmp_path / "r.sqlite"), {"test": True})
    try:
        # --allocated: nbdcopy asks for zeroes that stay allocated (no MAY_TRIM)
        cmd = ["nbdcopy", *(["--allocated"] if allocated else []), str(src), s.uri]
        subprocess.run(cmd, check=True, capture_output=True, timeout=300)
        back = subprocess.run(["nbdcopy", s.uri, "-"], check=True, capture_output=True, timeout=300).stdout
        time.sleep(0.5)
    finally:
        totals, status = s.finish()
    assert back[:32 * MIB] == b"\xa5" * (32 * MIB) and back[32 * MIB:64 * MIB].count(0) == 32 * MIB
    if unmapped:
        # the hole reached the drive as an unmap, not as 32 MiB of written zeroes
        assert totals["trim_bytes"] >= 32 * MIB - MIB and totals["write_bytes"] < 33 * MIB
    else:
        assert totals["write_bytes"] >= 64 * MIB - MIB
