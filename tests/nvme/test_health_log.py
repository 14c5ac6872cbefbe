"""The NVMe SMART / health log as QEMU's controller reports it (captured in the NVMe VM
with smartctl 7.3 and nvme-cli 2.4: tests/data/nvme/), read into the telemetry ssdlab
stores before and after each phase."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from ssdlab.targets.fio import identity
from ssdlab.targets.guard import purge

DATA = Path(__file__).parents[1] / "data" / "nvme"


def _doc(name: str) -> dict:
    return json.loads((DATA / name).read_text())


@pytest.mark.parametrize("parse, name", [(identity.parse_smartctl, "qemu-smartctl.json"),
                                         (identity.parse_nvme_smart_log, "qemu-smart-log.json")])
def test_both_tools_read_the_same_health_log(parse, name):
    t = parse(_doc(name))
    assert t["temp_c"] == 50.0  # nvme-cli's kelvin (323) converted
    assert t["host_write_bytes"] == 0.0 and t["host_read_bytes"] == 7 * 512000.0
    assert t["percent_used"] == 0.0 and t["media_errors"] == 0.0 and t["unsafe_shutdowns"] == 0.0
    assert math.isnan(t["nand_write_bytes"])  # only vendor logs have it


def test_every_phase_stores_the_counters_before_and_after():
    before = identity.parse_smartctl(_doc("qemu-smartctl.json"))
    after = dict(before, host_write_bytes=before["host_write_bytes"] + 5 * 512000.0, temp_c=52.0)
    t = identity.before_after(before, after)
    assert t["drive_before_temp_c"] == 50.0 and t["drive_after_temp_c"] == 52.0
    assert t["drive_after_host_write_bytes"] - t["drive_before_host_write_bytes"] == 5 * 512000.0
    assert t["drive_before_percent_used"] == 0.0 and t["drive_after_media_errors"] == 0.0
    d = identity.write_counters_delta(before, after)
    assert d["drive_host_write_bytes"] == 5 * 512000.0 and d["drive_host_read_bytes"] == 0.0
    # a tool that reports nothing: unknown, not zero
    assert all(math.isnan(v) for v in identity.before_after({}, {}).values())


def test_qemus_controller_is_purged_by_format_with_user_data_erase(monkeypatch):
    monkeypatch.setattr(purge.shutil, "which", lambda _: "/usr/sbin/nvme")
    monkeypatch.setattr(purge, "_out", lambda cmd, timeout=20.0: (DATA / "qemu-id-ctrl.json").read_text())
    plan = purge.plan_block("/dev/nvme0n2", "nvme", discard=True)
    assert plan.method == "nvme-format-user-data"
    assert plan.commands == [["nvme", "format", "/dev/nvme0n2", "--ses=1", "--force"]]
