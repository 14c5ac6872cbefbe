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


def _nvme_cli(monkeypatch, id_ns: str | None) -> None:
    """nvme-cli answering id-ctrl as QEMU's controller and id-ns with the file `id_ns`
    (None: nothing, as a namespace it cannot identify)."""
    def out(cmd: list[str], timeout: float = 20.0) -> str:
        if cmd[:2] == ["nvme", "id-ns"]:
            return (DATA / id_ns).read_text() if id_ns else ""
        return (DATA / "qemu-id-ctrl.json").read_text()

    monkeypatch.setattr(purge.shutil, "which", lambda _: "/usr/sbin/nvme")
    monkeypatch.setattr(purge, "_out", out)
    monkeypatch.setattr(purge, "blkdiscard_has_force", lambda: True)  # not asked (and cached) of this fake


@pytest.mark.parametrize("id_ns, keep", [
    ("qemu-id-ns-4k.json", ["--lbaf=4", "--pi=0", "--pil=0", "--ms=0"]),
    # 4 KiB with 8 bytes of metadata and protection information type 1 (QEMU's ms=8,pi=1)
    ("qemu-id-ns-4k-pi1.json", ["--lbaf=5", "--pi=1", "--pil=0", "--ms=0"]),
])
def test_qemus_controller_is_purged_by_format_with_user_data_erase_keeping_the_namespaces_format(
        monkeypatch, id_ns, keep):
    """nvme-cli keeps the LBA format by itself but not the protection information: the
    format says what the namespace is formatted with now."""
    _nvme_cli(monkeypatch, id_ns)
    plan = purge.plan_block("/dev/nvme0n2", "nvme", discard=True)
    assert plan.method == "nvme-format-user-data"
    # nvme-cli's own 10 minutes would have the kernel abort a longer format and reset the
    # controller: it gets the purge's whole wait
    assert plan.commands == [["nvme", "format", "/dev/nvme0n2", "--ses=1", *keep,
                              f"--timeout={purge.PURGE_WAIT_S * 1000}", "--force"]]
    assert purge.PURGE_WAIT_S >= 3600


def test_a_namespace_whose_format_cannot_be_read_is_not_formatted(monkeypatch):
    _nvme_cli(monkeypatch, None)
    plan = purge.plan_block("/dev/nvme0n2", "nvme", discard=True)
    assert plan.method == "blkdiscard" and "nvme id-ns" in plan.why


def test_the_lba_format_index_past_16_takes_flbas_upper_bits():
    doc = {"flbas": 0b1100011, "dps": 0b1010, "nlbaf": 20}  # index 0b11 << 4 | 3, PI type 2 first
    assert purge.nvme_format_as_is(doc) == ["--lbaf=51", "--pi=2", "--pil=1", "--ms=0"]
    assert purge.nvme_format_as_is({"flbas": 0x13, "dps": 0, "nlbaf": 7}) == ["--lbaf=3", "--pi=0", "--pil=0",
                                                                             "--ms=1"]
    assert purge.nvme_format_as_is({"flbas": "4", "dps": 0}) is None
