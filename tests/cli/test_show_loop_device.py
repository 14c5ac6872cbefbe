"""`results show` names a loop device's backing file as such, not as a serial (a loop
device has none, and its file is not what --destroy-data names), and leaves out an empty
firmware, as the plan's header does."""

from __future__ import annotations

from ssdlab.cli.results import who


def test_a_loop_devices_backing_file_is_no_serial():
    ident = {"kind": "block", "model": "Linux loop device", "serial": "/dev/shm/a.img", "firmware": "",
             "extra": {"kind": "loop", "backing_file": "/dev/shm/a.img"}}
    assert who(ident) == ": Linux loop device backing file /dev/shm/a.img"


def test_a_disk_keeps_its_serial_and_firmware():
    ident = {"kind": "block", "model": "QEMU NVMe Ctrl", "serial": "SSDLABVM0001", "firmware": "7.2.22",
             "extra": {"kind": "nvme"}}
    assert who(ident) == ": QEMU NVMe Ctrl serial SSDLABVM0001 firmware 7.2.22"
