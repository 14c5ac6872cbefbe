"""A --drive parsed once into a DriveSpec: its kind, where it is, and one clear line for
what is wrongly written."""

from __future__ import annotations

import socket

import pytest

from ssdlab.targets.spec import DriveSpec, parse_drive, parse_local


@pytest.mark.parametrize("text, kind, path, size", [
    ("sim:tlc-256", "sim", "tlc-256", None),
    ("/dev/nvme1n1", "device", "/dev/nvme1n1", None),
    ("file:/srv/a:b/t.bin:1G", "file", "/srv/a:b/t.bin", 2**30),  # the last ':' ends the path
    ("file:/srv/t.bin:100000", "file", "/srv/t.bin", 98304),  # whole 4 KiB blocks
    ("lab1:/dev/sdb", "remote", "/dev/sdb", None),
    ("ops@lab1:2222:/srv/t.bin:8G", "remote", "/srv/t.bin", 8 * 2**30),
])
def test_each_kind_of_drive_parses_into_its_parts(text, kind, path, size):
    d = parse_drive(text)
    assert (d.kind, d.path, d.size, str(d)) == (kind, path, size, text)
    assert d.simulated is (kind == "sim") and d.real is (kind != "sim") and d.remote is (kind == "remote")


def test_a_profile_file_is_a_simulated_drive_read_from_its_file(tmp_path):
    p = tmp_path / "mine.toml"
    p.write_text(parse_drive("sim:tlc-256").profile_text())
    d = parse_drive(str(p))
    assert d.kind == "profile" and d.simulated and "[nand]" in d.profile_text()
    d = parse_drive(f"sim:{p}")  # a twin as `ssdlab fit` writes it: --drive sim:./twin.toml
    assert d.kind == "profile" and d.path == str(p) and str(d) == f"sim:{p}"
    with pytest.raises(ValueError, match="not a simulated drive"):
        parse_drive("/dev/sdb").profile_text()


def test_an_export_is_one_drive_however_it_is_named(tmp_path):
    sock = tmp_path / "s.sock"
    s = socket.socket(socket.AF_UNIX)
    s.bind(str(sock))
    try:
        a, b = parse_drive(f"nbd:{sock}"), parse_drive(f"nbd:nbd+unix:///?socket={sock}")
        assert a.kind == b.kind == "nbd" and a.key() == b.key() and a.nbd is not None
    finally:
        s.close()


def test_a_file_named_through_a_link_of_its_own_is_the_same_drive(tmp_path):
    (tmp_path / "t.bin").write_bytes(b"")
    (tmp_path / "l.bin").symlink_to(tmp_path / "t.bin")
    assert parse_drive(f"file:{tmp_path}/t.bin:1M").key() == parse_drive(f"file:{tmp_path}/l.bin:1M").key()


@pytest.mark.parametrize("text, says", [
    ("sim:nope", "unknown profile 'nope'"),
    ("sim:../x", "unknown profile"),
    ("file:/x", "write file:PATH:SIZE"),
    ("file:/srv/t.bin:1K", "too small"),
    ("nbd:", "write nbd:SOCKET"),
    ("nbd:/no/such.sock", "no socket /no/such.sock"),
    ("mine.toml", "profile file 'mine.toml' not found"),
    ("sdb", "unknown drive 'sdb'"),
    ("/dev/$x", "not allowed"),
    ("h1:70000:/dev/x", "port 70000"),
])
def test_a_wrongly_written_drive_says_what_is_wrong(text, says):
    with pytest.raises(ValueError, match=says.replace("$", r"\$").replace(".", r"\.")):
        parse_drive(text)


@pytest.mark.parametrize("text", ["sim:tlc-256", "h1:/dev/sdb", "nbd:/tmp/x.sock", None, 3])
def test_a_drive_hosts_agent_takes_only_its_own_devices_and_files(text):
    with pytest.raises(ValueError, match="the agent drives a block device"):
        parse_local(text)
    assert parse_local("/dev/sdb") == DriveSpec("/dev/sdb", "device", "/dev/sdb")


@pytest.mark.parametrize("text, fix", [
    ("sim:tlc-256?nand.channels=4", "sim:tlc-256 --set nand.channels=4"),
    ("sim:sn520-128?nand.channels=2&slc.dynamic_max_gb=4",
     "sim:sn520-128 --set nand.channels=2 --set slc.dynamic_max_gb=4"),
    ("sim:tlc-256,user_capacity_gb=8", "sim:tlc-256 --set user_capacity_gb=8"),
])
def test_overrides_written_into_a_profiles_name_are_pointed_to_set(text, fix):
    with pytest.raises(ValueError) as e:
        parse_drive(text)
    assert str(e.value) == (f"drive '{text}': a profile's overrides are given with --set, not in the drive's "
                            f"name: {fix}")


def test_an_unknown_profile_with_a_query_is_still_an_unknown_profile():
    with pytest.raises(ValueError, match="unknown profile 'tlc-999[?]nand.channels=4': built-in profiles are"):
        parse_drive("sim:tlc-999?nand.channels=4")


def test_a_profiles_bare_id_is_pointed_to_its_sim_name():
    with pytest.raises(ValueError) as e:
        parse_drive("tlc-256")
    assert str(e.value) == "unknown drive 'tlc-256': the built-in profile tlc-256 is the drive sim:tlc-256"
