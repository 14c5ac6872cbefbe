"""An NVMe drive's character devices given as --drive: the controller's /dev/nvme0 and a
namespace's generic /dev/ng0n1 are refused in one line that names the block device to
give (sysfs laid out as the kernel lays it out, under a temporary directory)."""

from __future__ import annotations

import os
import stat

import pytest

from ssdlab.targets.guard import char_device, safety


@pytest.fixture
def sysfs(tmp_path, monkeypatch):
    ctrl = tmp_path / "devices/pci0000:00/0000:00:04.0/nvme/nvme0"
    gen = ctrl / "ng0n2"
    for d in (ctrl, gen, tmp_path / "class/nvme", tmp_path / "class/nvme-generic", tmp_path / "dev/char"):
        d.mkdir(parents=True, exist_ok=True)
    (ctrl / "subsystem").symlink_to(tmp_path / "class/nvme")
    (gen / "subsystem").symlink_to(tmp_path / "class/nvme-generic")
    (tmp_path / "dev/char/250:0").symlink_to(ctrl)
    other = ctrl.parent / "nvme2"  # a controller with no namespace named after it
    other.mkdir()
    (other / "subsystem").symlink_to(tmp_path / "class/nvme")
    (tmp_path / "dev/char/250:2").symlink_to(other)
    (tmp_path / "dev/char/251:1").symlink_to(gen)
    (tmp_path / "dev/char/1:3").symlink_to(tmp_path / "devices/virtual/mem/null")
    block = tmp_path / "class/block"
    for n in ("nvme0n1", "nvme0n2", "nvme0n10", "nvme0n1p1", "nvme1n1", "sda"):
        (block / n).mkdir(parents=True)
    monkeypatch.setattr(char_device, "SYS_DEV_CHAR", tmp_path / "dev/char")
    monkeypatch.setattr(char_device, "SYS_CLASS_BLOCK", block)
    return tmp_path


def _node(tmp_path, name: str, major: int, minor: int) -> str:
    """A character device node with that number (its driver need not be there)."""
    if os.geteuid() != 0:
        pytest.skip("needs root (mknod)")
    p = tmp_path / name
    os.mknod(p, stat.S_IFCHR | 0o600, os.makedev(major, minor))
    return str(p)


def _refusal(path: str) -> str:
    with pytest.raises(safety.UnsafeTarget) as e:
        safety.check_block_write(path, path)
    return str(e.value)


def test_the_controllers_node_names_its_namespaces(sysfs, tmp_path):
    msg = _refusal(_node(tmp_path, "nvme0", 250, 0))
    assert "not a block device" in msg and "controller nvme0" in msg
    assert "/dev/nvme0n1, /dev/nvme0n2, /dev/nvme0n10" in msg and "nvme1n1" not in msg and "p1" not in msg
    assert "file:PATH:SIZE" not in msg and len(msg.splitlines()) == 1
    msg = _refusal(_node(tmp_path, "nvme2", 250, 2))
    assert "controller nvme2" in msg and "`nvme list` shows them" in msg and "/dev/nvme0n" not in msg


def test_a_generic_namespace_node_names_its_block_device(sysfs, tmp_path):
    msg = _refusal(_node(tmp_path, "ng0n2", 251, 1))
    assert "generic character device" in msg and "--drive /dev/nvme0n2" in msg
    assert "file:PATH:SIZE" not in msg


def test_other_character_devices_and_files(sysfs, tmp_path):
    assert "character device" in _refusal("/dev/null") and "file:PATH:SIZE" not in _refusal("/dev/null")
    f = tmp_path / "f.bin"
    f.write_bytes(b"")
    assert "not a block device; for a file use file:PATH:SIZE" in _refusal(str(f))
