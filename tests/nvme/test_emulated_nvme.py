"""ssdlab's real-drive path on an NVMe controller (QEMU's, in the VM of conftest.py):
identity and telemetry from nvme-cli and smartctl, purge by the controller's own command,
the refusals, review, and interrupted runs keeping what they recorded."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from ssdlab.serve import nvme_vm
from ssdlab.store import Store
from ssdlab.targets import purge

# the VM boots in the first test's setup: seconds under KVM, many minutes emulated
pytestmark = [pytest.mark.realdev, pytest.mark.timeout(3600)]
MIB = 2**20


def _phases(db, test: str, status: str | None = None) -> list[dict]:
    st = Store(db, create=False)
    runs = [r for r in st.runs() if r["test"] == test and (status is None or r["status"] == status)]
    assert runs, f"no {test} run in {db}: {[(r['test'], r['status']) for r in st.runs()]}"
    run = st.run(runs[-1]["id"])
    return st.phases(run["drives"][0]["id"])


def test_identity_from_the_controller(nvme_vm_run):
    s = nvme_vm_run.step("identity")
    for dev, lba in (("/dev/nvme0n1", 512), ("/dev/nvme0n2", 4096)):
        d = s[dev]
        ident = d["identity"]
        assert ident["kind"] == "block" and ident["extra"]["kind"] == "nvme"
        assert ident["model"] == "QEMU NVMe Ctrl" and ident["serial"] == "SSDLABVM0001"
        assert ident["firmware"] and ident["capacity"] == 256 * MIB
        assert ident["extra"]["logical_block"] == lba
        assert d["telemetry_tool"] in ("smartctl", "nvme-cli")
        tel = d["telemetry"]
        assert 0 < tel["temp_c"] < 100 and tel["percent_used"] == 0 and tel["media_errors"] == 0
        assert tel["host_write_bytes"] >= 0 and tel["host_read_bytes"] >= 0


def test_purge_uses_the_controllers_route_and_stores_which(nvme_vm_run):
    ctrl = json.loads(nvme_vm_run.step("tools")["id_ctrl"]["stdout"])
    expect = ("nvme-format-crypto" if ctrl["fna"] & 0x4 else "nvme-format-user-data") \
        if ctrl["oacs"] & 0x2 else "blkdiscard"
    assert nvme_vm_run.step("identity")["/dev/nvme0n2"]["purge_plan"] == expect
    nvme_vm_run.step("fill")
    ph = _phases(nvme_vm_run.out / "r.sqlite", "fill", "complete")
    p = [x for x in ph if x["totals"].get("purge_method_code")][0]
    assert p["totals"]["purge_method_code"] == purge.CODES[expect]


def test_telemetry_before_and_after_every_phase_is_stored(nvme_vm_run):
    run = json.loads(nvme_vm_run.step("fill")["run"]["stdout"])
    assert run["drives"][0]["metrics"]["avg_mbps"] > 0
    ph = _phases(nvme_vm_run.out / "r.sqlite", "fill", "complete")
    assert len(ph) >= 2
    for p in ph:
        t = p["totals"]
        for k in ("temp_c", "host_write_bytes", "host_read_bytes", "percent_used", "media_errors"):
            assert not math.isnan(t[f"drive_before_{k}"]) and not math.isnan(t[f"drive_after_{k}"]), (p["name"], k)
    fill = [p for p in ph if p["name"] == "fill"][0]["totals"]
    # data units are thousands of 512-byte blocks, rounded up: the drive's count of host
    # writes is fio's within one unit
    assert fill["drive_host_write_bytes"] == pytest.approx(fill["write_bytes"], abs=512000)
    assert fill["drive_after_host_write_bytes"] - fill["drive_before_host_write_bytes"] == fill["drive_host_write_bytes"]


@pytest.mark.parametrize("case, words", [
    ("partition_table", ["partition"]),
    ("mounted", ["mounted"]),
    ("disk_of_mounted", ["mounted"]),
    ("in_use", ["in use"]),
])
def test_refusals(nvme_vm_run, case, words):
    r = nvme_vm_run.step("refusals")[case]
    assert r["rc"] == 2, r
    err = r["stderr"].strip()
    assert len(err.splitlines()) == 1 and all(w in err.lower() for w in words), err


def test_review_on_a_namespace_writes_its_report(nvme_vm_run):
    s = nvme_vm_run.step("review")
    assert s["run"]["rc"] == 0, s["run"]["stderr"]
    assert "index.html" in s["files"]


def _interrupted(nvme_vm_run, step: str, status: str) -> list[dict]:
    s = nvme_vm_run.step(step)
    listed = json.loads(s["list"]["stdout"])
    assert [r["status"] for r in listed] == [status], (listed, s["stderr"])
    assert s["fds_on_device_after"] == "0"  # no fio left writing
    st = Store(s["db"], create=False)
    return st.phases(st.run(st.runs()[-1]["id"])["drives"][0]["id"])


def test_ctrl_c_keeps_the_partial_fill(nvme_vm_run):
    ph = _interrupted(nvme_vm_run, "ctrl_c", "interrupted")
    fill = next(p for p in ph if p["name"] == "fill")
    assert fill["status"] == "partial" and len(fill["series"]["t_s"]) > 0
    assert float(np.nansum(fill["series"]["host_write_bytes"])) > 0


def test_sigkill_leaves_a_stale_run_with_its_finished_phases(nvme_vm_run):
    """ssdlab cannot store anything once killed: the purge it finished is kept, the run
    reads as stale in the guest where its process lived, and the kernel stopped fio."""
    ph = _interrupted(nvme_vm_run, "sigkill", "stale")
    assert [p["name"] for p in ph][:1] == ["purge"] and ph[0]["status"] == "complete"


def test_served_drive_as_an_nvme_namespace_fills_like_virtual_time(nvme_vm_run):
    """The guest's fill of the served namespace finds the SLC cache and post-cache speed
    that the same fill finds in virtual time."""
    import subprocess
    import sys

    from conftest import SERVED_DRIVE, SERVED_SETS

    if nvme_vm.accel()[0] == "tcg":
        pytest.skip("[hardware] emulated CPU (SSDLAB_NVME_VM_ACCEL=tcg): the guest's fio writes 20-70 MB/s, "
                    "slower than the drive's SLC cache; the fill would measure the emulator")
    s = nvme_vm_run.step("served_fill")
    assert s["run"]["rc"] == 0, s["run"]["stderr"]
    real = json.loads(s["run"]["stdout"])["drives"][0]["metrics"]
    sets = [x for v in SERVED_SETS for x in ("--set", v)]
    r = subprocess.run([sys.executable, "-m", "ssdlab.cli", "run", "fill", "--drive", SERVED_DRIVE, *sets,
                        "--db", str(nvme_vm_run.out / "virtual.sqlite"), "--json"],
                       capture_output=True, text=True, timeout=600, check=True)
    virtual = json.loads(r.stdout)["drives"][0]["metrics"]
    assert virtual["slc_cache_gb"] > 0.3
    assert real["slc_cache_gb"] == pytest.approx(virtual["slc_cache_gb"], rel=0.10)
    assert real["post_cache_mbps"] == pytest.approx(virtual["post_cache_mbps"], rel=0.15)
    # the purge was the controller's Format, which reached the drive as an unmap
    m = nvme_vm_run.serve_end["metrics"]
    assert m["trim_bytes"] >= 1.9e9 and m["host_write_bytes"] >= 1.99e9
