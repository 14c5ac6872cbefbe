"""A real drive's plan begins with what the device is: an empty field (a loop device has
no firmware) is left out rather than printed as a dangling `firmware `."""

from __future__ import annotations

from ssdlab.targets.fio import transport


def _header(monkeypatch, info: dict) -> str:
    monkeypatch.setattr(transport.safety, "consent", lambda dev: f"--destroy-data={dev}")
    dev = transport.LocalBlock.__new__(transport.LocalBlock)
    dev.dev, dev.path, dev.info, dev.block = "/dev/loop7", "/dev/loop7", info, "/dev/loop7"
    return dev.plan_header()[0]


def test_a_loop_device_has_no_dangling_firmware(monkeypatch):
    line = _header(monkeypatch, {"kind": "loop", "model": "Linux loop device", "backing_file": "/srv/a.img",
                                 "firmware": ""})
    assert line == "# device /dev/loop7: Linux loop device backing file /srv/a.img"


def test_a_disk_keeps_serial_and_firmware(monkeypatch):
    line = _header(monkeypatch, {"kind": "nvme", "model": "M", "serial": "S1", "firmware": "F2"})
    assert line == "# device /dev/loop7: M serial S1 firmware F2"
