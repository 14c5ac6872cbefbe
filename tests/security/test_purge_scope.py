"""A purge erases the drive it was given and nothing else: a partition is never purged by
erasing its whole disk (an ATA SECURITY ERASE UNIT or an NVMe Format reaches every
partition, mounted ones too), and an NVMe namespace is not formatted when the controller
says a format or secure erase applies to all its namespaces and it may have others. Then
the purge is a discard, which the kernel keeps inside the device's own range.

Consent to write /dev/sdb1 (or the agent host listing it) is no consent to erase /dev/sdb2."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from loopdevs import MIB, REASON, loops, partitioned  # noqa: F401  (loops: a fixture)
from ssdlab.targets.fio import transport
from ssdlab.targets.guard import inuse, purge

DATA = Path(__file__).parents[1] / "data" / "nvme"
HDPARM_I = """
/dev/sdb:

ATA device, with non-removable media
Security:
\tMaster password revision code = 65534
\t\tsupported
\tnot\tenabled
\tnot\tlocked
\tnot\tfrozen
\tnot\texpired: security count
\t\tsupported: enhanced erase

Logical Unit WWN Device Identifier: 5000000000000000
"""


def id_ctrl(**fields: int) -> str:
    doc = json.loads((DATA / "qemu-id-ctrl.json").read_text())
    doc.update(fields)
    return json.dumps(doc)


ID_NS = (DATA / "qemu-id-ns-4k.json").read_text()


def tools(monkeypatch, answer: str) -> None:
    """nvme, hdparm and blkdiscard installed; every probe answers `answer` (but `nvme
    id-ns`: QEMU's 4 KiB namespace)."""
    monkeypatch.setattr(purge.shutil, "which", lambda tool: f"/usr/sbin/{tool}")
    monkeypatch.setattr(purge, "_out", lambda cmd, timeout=20.0: ID_NS if cmd[:2] == ["nvme", "id-ns"] else answer)
    monkeypatch.setattr(purge, "blkdiscard_has_force", lambda: True)


def fake_sysfs(root: Path, *partitions: str) -> Path:
    for name in ("sdb", "nvme0n1", *partitions):
        (root / name).mkdir(parents=True)
    for name in partitions:
        (root / name / "partition").write_text("1\n")
    return root


CRYPTO = 0x4  # FNA: cryptographic erase supported
ALL_NAMESPACES = 0x1 | 0x2  # FNA: a format, a secure erase, applies to every namespace


@pytest.mark.parametrize("dev, kind, answer", [
    ("/dev/sdb1", "sd", HDPARM_I),
    ("/dev/nvme0n1p1", "nvme", id_ctrl(fna=CRYPTO, nn=1)),
    ("/dev/nvme0n1p1", "nvme", id_ctrl(fna=0, nn=1)),
], ids=["sata", "nvme-crypto", "nvme-format"])
def test_a_partition_is_purged_by_a_discard_of_its_own_range(tmp_path, monkeypatch, dev, kind, answer):
    monkeypatch.setattr(inuse, "SYS_CLASS_BLOCK", fake_sysfs(tmp_path / "block", "sdb1", "nvme0n1p1"))
    tools(monkeypatch, answer)
    plan = purge.plan_block(dev, kind, discard=True)
    assert plan.method == "blkdiscard", plan
    assert plan.commands == [["blkdiscard", "--force", dev]]
    assert "partition" in plan.why
    # without discard support: nothing, rather than the whole disk
    assert purge.plan_block(dev, kind, discard=False).method == "none"


@pytest.mark.parametrize("dev, kind, answer, method", [
    ("/dev/sdb", "sd", HDPARM_I, "ata-security-erase"),
    ("/dev/nvme0n1", "nvme", id_ctrl(fna=CRYPTO | ALL_NAMESPACES, nn=1), "nvme-format-crypto"),
], ids=["sata", "nvme"])
def test_a_whole_drive_is_still_erased_by_its_strongest_method(tmp_path, monkeypatch, dev, kind, answer, method):
    monkeypatch.setattr(inuse, "SYS_CLASS_BLOCK", fake_sysfs(tmp_path / "block", "sdb1"))
    tools(monkeypatch, answer)
    assert purge.plan_block(dev, kind, discard=True).method == method


@pytest.mark.parametrize("fna, nn, method", [
    (CRYPTO | ALL_NAMESPACES, 4, "blkdiscard"),  # would erase the other namespaces too
    (CRYPTO | 0x2, 4, "blkdiscard"),  # the secure erase alone reaches all of them
    (0x1, 4, "blkdiscard"),
    (CRYPTO, 4, "nvme-format-crypto"),  # each namespace formatted on its own
    (0, 4, "nvme-format-user-data"),
    (CRYPTO | ALL_NAMESPACES, 1, "nvme-format-crypto"),  # the only namespace there can be
])
def test_a_namespace_is_not_formatted_when_the_format_reaches_its_siblings(tmp_path, monkeypatch, fna, nn,
                                                                           method):
    monkeypatch.setattr(inuse, "SYS_CLASS_BLOCK", fake_sysfs(tmp_path / "block"))
    tools(monkeypatch, id_ctrl(fna=fna, nn=nn))
    plan = purge.plan_block("/dev/nvme0n1", "nvme", discard=True)
    assert plan.method == method, plan
    if method == "blkdiscard":
        assert "every namespace" in plan.why


@pytest.mark.skipif(bool(REASON), reason=REASON or "")
def test_a_listed_partitions_purge_never_reaches_its_disk(loops, monkeypatch):
    """A real partition (sysfs as the kernel shows it) of a disk that hdparm would erase."""
    dev, _ = loops.make(64 * MIB, None, "--partscan")
    with partitioned(dev, "label: gpt\n,24M\n,24M\n") as (p1, _p2):
        real_info = transport.block_info

        def as_sata(path: str) -> dict:
            return dict(real_info(path), kind="sd")  # a SATA disk's partition

        monkeypatch.setattr(transport, "block_info", as_sata)
        tools(monkeypatch, HDPARM_I)
        where = transport.LocalBlock(p1, plan=True)
        plan = where.purge_plan()
        assert plan.method in ("blkdiscard", "none"), plan
        assert all(p1 in cmd and dev not in cmd for cmd in plan.commands), plan


@pytest.mark.parametrize("dev, kind", [("/dev/sdb1", "sd"), ("/dev/nvme0n1p1", "nvme")])
def test_a_partitions_write_cache_phase_leaves_its_disks_cache_alone(tmp_path, monkeypatch, dev, kind):
    """The cache is the whole disk's (hdparm -W, NVMe feature 06h): switching it for a
    partition switches it for the disk's other partitions too, mounted ones included."""
    from ssdlab.targets.fio import write_cache

    monkeypatch.setattr(inuse, "SYS_CLASS_BLOCK", fake_sysfs(tmp_path / "block", "sdb1", "nvme0n1p1"))
    tools(monkeypatch, id_ctrl(nn=1))  # a controller with room for one namespace
    r = write_cache.route(dev, kind)
    assert r.tool == "" and "partition" in r.why, r
    assert write_cache.route(dev.rstrip("1").rstrip("p"), kind).tool in ("hdparm", "nvme")


@pytest.mark.parametrize("nn, switched", [(4, False), (2, False), (0, False), (1, True)],
                         ids=["room-for-4", "room-for-2", "unsaid", "the-only-one"])
def test_a_namespaces_write_cache_phase_leaves_a_shared_controllers_cache_alone(tmp_path, monkeypatch, nn,
                                                                                switched):
    """Feature 06h is the controller's: switching it for /dev/nvme0n1 switches it for every
    namespace of the controller, and a killed run leaves it switched. Only a controller with
    room for one namespace (`nn` = 1, as the purge decides) is switched."""
    from ssdlab.targets.fio import write_cache

    monkeypatch.setattr(inuse, "SYS_CLASS_BLOCK", fake_sysfs(tmp_path / "block"))
    tools(monkeypatch, id_ctrl(fna=0, nn=nn))
    r = write_cache.route("/dev/nvme0n1", "nvme")
    if switched:
        assert r.tool == "nvme" and not r.why, r
    else:
        assert r.tool == "" and "namespace" in r.why and "left as it is" in r.why, r
        assert write_cache.switch(r, False) == (None, r.why)  # nothing run


def nvme_tools(monkeypatch, ctrl: str, active: list[int] | None, allocated: list[int] | None) -> None:
    """nvme-cli that answers id-ctrl with `ctrl` and list-ns with the namespaces attached
    to the controller (`active`) or, with --all, the subsystem's (`allocated`); None: the
    controller refuses the list (nothing on stdout)."""
    def out(cmd: list[str], timeout: float = 20.0) -> str:
        if cmd[:2] == ["nvme", "list-ns"]:
            ids = allocated if "--all" in cmd else active
            return "" if ids is None else json.dumps({"nsid_list": [{"nsid": i} for i in ids]})
        return ID_NS if cmd[:2] == ["nvme", "id-ns"] else ctrl

    tools(monkeypatch, "")
    monkeypatch.setattr(purge, "_out", out)


@pytest.mark.parametrize("active, allocated, nsid, method", [
    ([1], [1], 1, "nvme-format-crypto"),  # room for 32, one namespace made: the format reaches it alone
    ([1], [1, 2], 1, "blkdiscard"),  # another namespace of the subsystem, attached elsewhere
    ([1, 2], [1, 2], 1, "blkdiscard"),
    ([1], None, 1, "blkdiscard"),  # the subsystem's list refused: cannot be told
    ([2], [2], 1, "blkdiscard"),  # a list that does not name this namespace
    ([1], [1], None, "blkdiscard"),  # this namespace's id unknown
], ids=["alone", "another-in-the-subsystem", "two-attached", "list-refused", "list-of-another", "nsid-unknown"])
def test_a_namespace_alone_in_its_subsystem_is_formatted_though_the_controller_has_room_for_more(
        tmp_path, monkeypatch, active, allocated, nsid, method):
    """Many controllers report room for 32 or 128 namespaces (NN) with one made: a format
    that applies to every namespace (FNA bits 0, 1) then erases this one alone."""
    root = fake_sysfs(tmp_path / "block")
    if nsid is not None:
        (root / "nvme0n1" / "nsid").write_text(f"{nsid}\n")
    monkeypatch.setattr(inuse, "SYS_CLASS_BLOCK", root)
    nvme_tools(monkeypatch, id_ctrl(fna=CRYPTO | ALL_NAMESPACES, nn=32), active, allocated)
    assert purge.plan_block("/dev/nvme0n1", "nvme", discard=True).method == method


@pytest.mark.parametrize("active, switched", [([1], True), ([1, 2], False), (None, False)],
                         ids=["alone", "two-attached", "list-refused"])
def test_a_namespace_alone_on_its_controller_has_its_write_cache_switched(tmp_path, monkeypatch, active, switched):
    """The write cache is the controller's: the namespaces attached to it (not the
    subsystem's others, which another controller serves) decide."""
    from ssdlab.targets.fio import write_cache

    root = fake_sysfs(tmp_path / "block")
    (root / "nvme0n1" / "nsid").write_text("1\n")
    monkeypatch.setattr(inuse, "SYS_CLASS_BLOCK", root)
    nvme_tools(monkeypatch, id_ctrl(fna=0, nn=32), active, allocated=[1, 2])
    r = write_cache.route("/dev/nvme0n1", "nvme")
    assert (r.tool == "nvme") == switched, r


@pytest.mark.skipif(bool(REASON), reason=REASON or "")
def test_a_partitions_node_of_any_name_is_still_known_as_a_partition(loops, monkeypatch, tmp_path):
    """A node outside /dev may carry any name: the partition is told by the device the node
    is (its number, as sysfs files it), not by the node's name."""
    from ssdlab.targets.fio import write_cache

    dev, _ = loops.make(64 * MIB, None, "--partscan")
    with partitioned(dev, "label: gpt\n,24M\n,24M\n") as (p1, _p2):
        node = tmp_path / "scratch-disk"
        os.mknod(node, 0o600 | stat.S_IFBLK, os.stat(p1).st_rdev)
        tools(monkeypatch, HDPARM_I)
        plan = purge.plan_block(str(node), "sd", discard=True)
        assert plan.method == "blkdiscard" and "partition" in plan.why, plan
        r = write_cache.route(str(node), "sd")
        assert r.tool == "" and "partition" in r.why, r
