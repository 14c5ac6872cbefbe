"""Drive telemetry parsing, purge choice and the safety checks that need no root."""

from __future__ import annotations

import math
import os

import numpy as np
import pytest

from ssdlab.targets.fio import identity
from ssdlab.targets.guard import purge, safety
from ssdlab.targets.fio.target import _attach_temps

# smartctl 7.x `-j -A` shapes (trimmed to the fields ssdlab reads)
NVME = {"device": {"name": "/dev/nvme0n1", "type": "nvme", "protocol": "NVMe"},
        "nvme_smart_health_information_log": {"critical_warning": 0, "temperature": 41,
                                               "data_units_written": 2000000, "data_units_read": 10},
        "temperature": {"current": 41}}
CRUCIAL = {"device": {"name": "/dev/sdb", "type": "sat", "protocol": "ATA"},
           "temperature": {"current": 33},
           "ata_smart_attributes": {"table": [
               {"id": 194, "name": "Temperature_Celsius", "raw": {"value": 33}},
               {"id": 246, "name": "Total_LBAs_Written", "raw": {"value": 1000}},
               {"id": 247, "name": "Host_Program_Page_Count", "raw": {"value": 500}},
               {"id": 248, "name": "FTL_Program_Page_Count", "raw": {"value": 250}}]}}
INTEL = {"ata_smart_attributes": {"table": [
    {"id": 190, "name": "Airflow_Temperature_Cel", "raw": {"value": 0x1E0014001F}},
    {"id": 241, "name": "Total_LBAs_Written", "raw": {"value": 2048}},
    {"id": 249, "name": "NAND_Writes_1GiB", "raw": {"value": 3}}]}}


def test_smartctl_nvme():
    t = identity.parse_smartctl(NVME)
    assert t["temp_c"] == 41
    assert t["host_write_bytes"] == 2000000 * 512000
    assert math.isnan(t["nand_write_bytes"])  # NVMe has no standard NAND counter


def test_smartctl_ata_page_counts_give_waf():
    before = identity.parse_smartctl(CRUCIAL)
    after_doc = {**CRUCIAL, "ata_smart_attributes": {"table": [
        {"name": "Total_LBAs_Written", "raw": {"value": 3000}},
        {"name": "Host_Program_Page_Count", "raw": {"value": 600}},
        {"name": "FTL_Program_Page_Count", "raw": {"value": 400}}]}}
    d = identity.write_counters_delta(before, identity.parse_smartctl(after_doc))
    assert d["drive_host_write_bytes"] == 2000 * 512
    assert d["drive_waf"] == pytest.approx((100 + 150) / 100)


def test_smartctl_ata_nand_gib_and_packed_temperature():
    t = identity.parse_smartctl(INTEL)
    assert t["temp_c"] == 31  # low byte of the packed raw value
    assert t["host_write_bytes"] == 2048 * 512 and t["nand_write_bytes"] == 3 * 2**30
    after = dict(t, host_write_bytes=t["host_write_bytes"] + 2**30,
                 nand_write_bytes=t["nand_write_bytes"] + 2**31)
    assert identity.write_counters_delta(t, after)["drive_waf"] == pytest.approx(2.0)


def test_unknown_counters_give_nan_waf():
    d = identity.write_counters_delta({}, {})
    assert math.isnan(d["drive_waf"])


def test_nvme_cli_smart_log_kelvin():
    t = identity.parse_nvme_smart_log({"temperature": 313, "data_units_written": 10})
    assert t["temp_c"] == 40 and t["host_write_bytes"] == 10 * 512000


def test_ocp_physical_media_units():
    assert identity.parse_ocp_smart({"Physical media units written": {"hi": 0, "lo": 4096}}) == 4096
    assert math.isnan(identity.parse_ocp_smart({}))


def test_no_telemetry_for_loop_and_files():
    assert not identity.Telemetry("/dev/loop0", "loop").available
    assert identity.Telemetry("/x", "file").read() == {}


def test_temperature_column_aligned_to_series():
    s = {"t_s": np.array([1.0, 2.0, 3.0])}
    _attach_temps(s, [(0.1, 40.0), (1.1, 41.0), (2.05, 43.0)])
    assert list(s["temp_c"]) == [41.0, 43.0, 43.0]
    s2 = {"t_s": np.array([1.0])}
    _attach_temps(s2, [])
    assert "temp_c" not in s2


HDPARM = """
Security:
	Master password revision code = 65534
		supported
	not	enabled
	not	locked
	not	frozen
	not	expired: security count
		supported: enhanced erase
	2min for SECURITY ERASE UNIT. 2min for ENHANCED SECURITY ERASE UNIT.
"""


def test_ata_security_state():
    assert purge.ata_erase_state(HDPARM) == (True, False, False)
    frozen = HDPARM.replace("not\tfrozen", "\tfrozen")
    assert purge.ata_erase_state(frozen) == (True, True, False)
    assert purge.ata_erase_state("no security section") == (False, False, False)


def test_purge_choice_without_secure_erase():
    p = purge.plan_block("/dev/loop7", "loop", discard=True)
    assert p.method == "blkdiscard" and p.commands == [["blkdiscard", "--force", "/dev/loop7"]]
    assert purge.plan_block("/dev/loop7", "loop", discard=False).method == "none"
    f = purge.plan_file("/tmp/x.bin", 4096)
    assert f.method == "punch-hole" and "--punch-hole" in f.commands[0]
    assert purge.CODES[p.method] == p.code


def test_file_target_checks(tmp_path):
    new = tmp_path / "new.bin"
    assert safety.check_file_write(str(new), None) == str(new)
    empty = tmp_path / "empty.bin"
    empty.touch()
    safety.check_file_write(str(empty), None)
    foreign = tmp_path / "foreign.bin"
    foreign.write_bytes(b"x" * 100)
    with pytest.raises(safety.UnsafeTarget, match="--destroy-data"):
        safety.check_file_write(str(foreign), None)
    with pytest.raises(safety.UnsafeTarget):
        safety.check_file_write(str(foreign), str(tmp_path / "other"))
    safety.check_file_write(str(foreign), str(foreign))
    with pytest.raises(safety.UnsafeTarget, match="not a regular file"):
        safety.check_file_write(str(tmp_path), None)
    with pytest.raises(safety.UnsafeTarget, match="does not exist"):
        safety.check_file_write(str(tmp_path / "no" / "dir.bin"), None)
    with pytest.raises(safety.UnsafeTarget, match="not a regular file"):
        safety.check_file_write("/dev/null", None)


def test_file_marked_ours_needs_no_flag(tmp_path):
    f = tmp_path / "ours.bin"
    f.write_bytes(b"y" * 100)
    safety.mark_ours(str(f))
    assert safety.is_ours(str(f)), "the test directory's filesystem has no user xattrs"
    safety.check_file_write(str(f), None)
    if os.geteuid() == 0:  # marked, but another user's file: not ours, and not written at all
        os.chown(f, 65534, 65534)
        with pytest.raises(safety.UnsafeTarget, match="belongs to uid 65534, another user"):
            safety.check_file_write(str(f), None)


def test_block_checks_reject_non_devices(tmp_path):
    with pytest.raises(safety.UnsafeTarget, match="no such device"):
        safety.check_block_write("/dev/ssdlab-does-not-exist", None)
    with pytest.raises(safety.UnsafeTarget, match="not a block device"):
        safety.check_block_write("/dev/null", None)


def test_root_device_refused():
    st = os.stat("/")
    sysdev = f"/sys/dev/block/{os.major(st.st_dev)}:{os.minor(st.st_dev)}"
    if not os.path.exists(sysdev):
        pytest.skip("[hardware] the root filesystem is not on a block device here")
    name = os.path.basename(os.path.realpath(sysdev))
    path = f"/dev/{name}"
    if not os.path.exists(path):
        pytest.skip(f"[hardware] {path} not present")
    for dd in (None, path):
        with pytest.raises(safety.UnsafeTarget, match="root filesystem|mounted"):
            safety.check_block_write(path, dd)


@pytest.mark.parametrize("ocp", [None, {"Physical media units written": {"hi": 0, "lo": 4096}}])
def test_the_ocp_log_is_asked_again_only_while_the_drive_answers_it(monkeypatch, ocp):
    """An NVMe drive without the OCP extended SMART page (most) is asked for it once per
    target, not at every phase's before and after reads."""
    calls = []

    def run_json(cmd, timeout=10.0):
        calls.append(cmd[1] if cmd[0] == "nvme" else cmd[0])
        return ocp if cmd[:2] == ["nvme", "ocp"] else NVME

    monkeypatch.setattr(identity, "_run_json", run_json)
    monkeypatch.setattr(identity.shutil, "which", lambda tool: f"/usr/sbin/{tool}")
    t = identity.Telemetry("/dev/nvme0n1", "nvme")
    reads = [t.read() for _ in range(3)]
    assert t.tool == "smartctl" and calls.count("smartctl") == 4
    if ocp is None:
        assert calls.count("ocp") == 1 and all(math.isnan(r["nand_write_bytes"]) for r in reads)
    else:
        assert calls.count("ocp") == 3 and all(r["nand_write_bytes"] == 4096 for r in reads)
