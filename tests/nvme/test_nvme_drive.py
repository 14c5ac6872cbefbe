"""A real NVMe drive: the one thing this machine cannot have. Give one with
SSDLAB_TEST_NVME=/dev/nvmeXnY (root): its identity, its telemetry through smartctl or
nvme-cli, the purge method chosen for it (planned, not run) and a 2 s random-read phase.
Nothing is written."""

from __future__ import annotations

import math
import os

import pytest

from ssdlab import phase as P
from ssdlab.targets import open_target

DEV = os.environ.get("SSDLAB_TEST_NVME")
pytestmark = pytest.mark.realdev
if not DEV:
    pytest.skip("[hardware] no NVMe drive here: set SSDLAB_TEST_NVME=/dev/nvmeXnY to test one "
                "(reads only)", allow_module_level=True)


def test_identity_telemetry_purge_plan_and_a_read_phase():
    with open_target(DEV) as t:
        ident = t.identify()
        assert ident.kind == "block" and ident.extra["kind"] == "nvme" and ident.capacity > 0
        assert ident.model and ident.serial and ident.firmware
        assert t.telemetry.available, "smartctl or nvme-cli reads nothing from the drive"
        tel = t.telemetry.read()
        assert 0 < tel["temp_c"] < 100 and tel["host_write_bytes"] > 0
        assert math.isnan(tel["nand_write_bytes"]) or tel["nand_write_bytes"] > 0
        assert t._purge_plan().method in ("nvme-format-crypto", "nvme-format-user-data", "blkdiscard",
                                          "none")
        r = t.run(P.rand_io("read", 100, stop_seconds=2))
        assert r.totals["write_bytes"] == 0 and r.totals["iops"] > 0
        assert "temp_c" in r.series and r.totals["temp_max_c"] > 0
