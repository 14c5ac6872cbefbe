"""--destroy-data=SERIAL names one device or none: the namespaces of one NVMe drive share
their controller's serial, as drives behind one USB bridge may, and a partition has its
disk's; a serial that more than one present device has is refused with the device path
to type instead (sysfs faked here; then on loop devices given the same fake serial)."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from loopdevs import MIB, REASON, loops  # noqa: F401  (loops: a fixture)
from ssdlab.targets.guard import safety


def fake_sysfs(root: Path, devices: dict[str, str | None]) -> Path:
    """/sys/class/block with these devices (name -> serial; None: a partition)."""
    for name, ser in devices.items():
        d = root / name
        d.mkdir(parents=True)
        if ser is None:
            (d / "partition").write_text("1\n")
        else:
            (d / "device").mkdir()
            (d / "device" / "serial").write_text(ser + "  \n")
    return root


def sha(path: str) -> str:
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def dev(name: str) -> safety.BlockDev:
    return safety.BlockDev(path=f"/dev/{name}", real=f"/dev/{name}", name=name, devno="259:0")


def test_a_serial_two_namespaces_share_names_neither(tmp_path, monkeypatch):
    sysfs = fake_sysfs(tmp_path / "block", {"nvme0n1": "S3Z9NB0K", "nvme0n2": "S3Z9NB0K",
                                            "nvme0n1p1": None, "sda": "WD-WX12"})
    monkeypatch.setattr(safety, "SYS_CLASS_BLOCK", sysfs)
    assert safety.serials() == {"nvme0n1": "S3Z9NB0K", "nvme0n2": "S3Z9NB0K", "sda": "WD-WX12"}
    with pytest.raises(safety.UnsafeTarget) as e:
        safety.names_device("S3Z9NB0K", dev("nvme0n2"))
    msg = str(e.value)
    assert msg == ("refusing /dev/nvme0n2: --destroy-data=S3Z9NB0K is the serial of more than one device "
                   "(/dev/nvme0n2, /dev/nvme0n1: namespaces of one drive, or drives behind one bridge), so it "
                   "names none; pass --destroy-data=/dev/nvme0n2"), msg
    # what to type says the path only; a serial of one device still names it
    assert safety.consent(dev("nvme0n1")) == "--destroy-data=/dev/nvme0n1"
    assert safety.names_device("WD-WX12", dev("sda"))
    assert safety.consent(dev("sda")) == "--destroy-data=/dev/sda (or its serial: --destroy-data=WD-WX12)"
    assert not safety.names_device("WD-WX12", dev("nvme0n1"))


def test_a_partition_is_not_named_by_its_disks_serial(tmp_path, monkeypatch):
    sysfs = fake_sysfs(tmp_path / "block", {"sdb": "USB-BRIDGE-1", "sdb1": None})
    monkeypatch.setattr(safety, "SYS_CLASS_BLOCK", sysfs)
    monkeypatch.setattr(safety, "serial_of", lambda name: "USB-BRIDGE-1")  # as lsblk reports sdb1's
    with pytest.raises(safety.UnsafeTarget, match="serial of more than one device \\(/dev/sdb1, /dev/sdb:"):
        safety.names_device("USB-BRIDGE-1", dev("sdb1"))
    assert safety.names_device("USB-BRIDGE-1", dev("sdb"))


@pytest.mark.skipif(bool(REASON), reason=REASON or "")
def test_a_shared_serial_writes_no_device(loops, monkeypatch):
    a, _ = loops.make(64 * MIB)
    b, _ = loops.make(64 * MIB)
    names = {a.rsplit("/", 1)[1], b.rsplit("/", 1)[1]}
    monkeypatch.setattr(safety, "serial_of", lambda name: "S3Z9NB0K" if name in names else "")
    real = safety.serials
    monkeypatch.setattr(safety, "serials", lambda: {**real(), **{n: "S3Z9NB0K" for n in names}})
    before = sha(a)
    with pytest.raises(safety.UnsafeTarget, match=f"names none; pass --destroy-data={a}$"):
        safety.check_block_write(a, "S3Z9NB0K")
    assert sha(a) == before
    safety.check_block_write(a, a)  # the device's path is consent
