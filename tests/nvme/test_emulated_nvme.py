"""ssdlab's real-drive path on an NVMe controller (QEMU's, in the VM of conftest.py):
identity and telemetry from nvme-cli and smartctl, purge by the controller's own command,
the refusals, a fill and a consistency run (their report made on the host), interrupted
runs keeping what they recorded, and a simulated drive served as a namespace."""

from __future__ import annotations

import json
import math
import subprocess
import sys

import numpy as np
import pytest
from ssdlab.store import Store
from ssdlab.targets.fio import write_cache as wc
from ssdlab.targets.guard import purge

# the VM boots in the first test's setup: seconds under KVM, minutes emulated; every test of
# it on one xdist worker, so the session boots it once while the other worker runs the rest
pytestmark = [pytest.mark.realdev, pytest.mark.timeout(1800), pytest.mark.xdist_group("nvme_vm")]


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
        assert ident["firmware"] and ident["capacity"] == nvme_vm_run.ns_bytes
        assert ident["extra"]["logical_block"] == lba
        assert ident["extra"]["nsid"] == int(dev[-1]) and ident["extra"]["integrity"] == "none"
        assert d["telemetry_tool"] in ("smartctl", "nvme-cli")
        tel = d["telemetry"]
        assert 0 < tel["temp_c"] < 100 and tel["percent_used"] == 0 and tel["media_errors"] == 0
        assert tel["host_write_bytes"] >= 0 and tel["host_read_bytes"] >= 0


def test_the_guest_loaded_the_nvme_driver_and_under_emulation_nothing_it_does_not_use(nvme_vm_run):
    from ssdlab.serve import nvme_vm

    loaded = set(nvme_vm_run.step("kernel")["modules"])
    assert {"nvme", "nvme_core"} <= loaded
    if nvme_vm_run.accel == "tcg":
        unused = loaded & set(nvme_vm.EMULATED_UNUSED_DRIVERS)
        assert not unused, f"the guest loaded drivers it does not use: {sorted(unused)}"


def test_the_write_cache_is_set_read_back_and_put_back_only_when_the_controller_has_no_other_namespace(
        nvme_vm_run):
    """Feature 06h is the controller's: on a controller with room for more namespaces than
    the one tested (QEMU's has four here) it is left as it is."""
    ctrl = json.loads(nvme_vm_run.step("tools")["id_ctrl"]["stdout"])
    s = nvme_vm_run.step("write_cache")
    assert wc.parse("nvme", s["before"]) is True  # QEMU's controller: its backing's cache, on
    if purge.nvme_namespace_room(ctrl) == 1:
        assert wc.parse("nvme", s["during"]) is False
        assert s["totals"] == {"write_cache_on": 0.0, "write_cache_set": 1.0}
    else:
        assert wc.parse("nvme", s["during"]) is True, s  # the other namespaces' cache too
        assert s["totals"]["write_cache_set"] == 0.0 and math.isnan(s["totals"]["write_cache_on"]), s
    assert wc.parse("nvme", s["after"]) is True


def test_purge_uses_the_controllers_route_and_stores_which(nvme_vm_run):
    ctrl = json.loads(nvme_vm_run.step("tools")["id_ctrl"]["stdout"])
    assert ctrl["sanicap"] == 0  # QEMU's controller has no Sanitize: Format is its route
    expect = ("nvme-format-crypto" if ctrl["fna"] & 0x4 else "nvme-format-user-data") \
        if ctrl["oacs"] & 0x2 else "blkdiscard"
    assert nvme_vm_run.step("identity")["/dev/nvme0n2"]["purge_plan"] == expect
    nvme_vm_run.step("consistency")
    ph = _phases(nvme_vm_run.out / "r.sqlite", "consistency", "complete")
    p = [x for x in ph if x["totals"].get("purge_method_code")][0]
    assert p["totals"]["purge_method_code"] == purge.CODES[expect]


def test_telemetry_before_and_after_every_phase_is_stored(nvme_vm_run):
    _run(nvme_vm_run.step("consistency"))
    ph = _phases(nvme_vm_run.out / "r.sqlite", "consistency", "complete")
    assert len(ph) == 3
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
    ("controller_node", ["not a block device", "controller nvme0", "/dev/nvme0n1, /dev/nvme0n2"]),
    ("generic_node", ["not a block device", "generic character device", "--drive /dev/nvme0n2"]),
    ("other_namespace", ["names another device", "--destroy-data=/dev/nvme0n2"]),
    ("shared_serial", ["serial of more than one device", "--destroy-data=/dev/nvme0n2"]),
    ("read_only", ["read-only"]),
])
def test_refusals(nvme_vm_run, case, words):
    r = nvme_vm_run.step("refusals")[case]
    assert r["rc"] == 2, r
    err = r["stderr"].strip()
    assert len(err.splitlines()) == 1 and all(w.lower() in err.lower() for w in words), err
    assert "file:PATH:SIZE" not in err, err


def test_nothing_refused_was_stored(nvme_vm_run):
    """The refusals come before a run is created: the store has only the runs that ran."""
    nvme_vm_run.step("refusals")
    nvme_vm_run.step("consistency")
    tests = [r["test"] for r in Store(nvme_vm_run.out / "r.sqlite", create=False).runs()]
    assert tests == ["consistency"], tests  # the consistency step's


def test_the_identity_records_the_namespaces_protection_information(nvme_vm_run):
    ident = nvme_vm_run.step("identity")["/dev/nvme0n4"]["identity"]
    assert ident["extra"]["logical_block"] == 4096 and ident["extra"]["nsid"] == 4
    assert ident["extra"]["integrity"] == "T10-DIF-TYPE1-CRC"


def test_the_format_keeps_a_namespaces_protection_information(nvme_vm_run):
    """The namespace with 8 bytes of metadata and PI type 1 is purged by a Format with its
    own settings: nvme-cli, told nothing, would format it with protection off."""
    s = nvme_vm_run.step("protected")
    assert s["run"]["rc"] == 0, s["run"]["stderr"]
    before, after = (json.loads(s[k]["stdout"]) for k in ("id_ns_before", "id_ns_after"))
    assert before["dps"] & 0x7 == 1 and before["lbafs"][before["flbas"] & 0xF] == {"ms": 8, "ds": 12, "rp": 0}
    assert (after["flbas"], after["dps"]) == (before["flbas"], before["dps"])
    assert s["integrity"] == "T10-DIF-TYPE1-CRC"
    ph = _phases(nvme_vm_run.out / "pi.sqlite", "fill", "complete")
    assert ph[0]["totals"]["purge_method_code"] == purge.CODES["nvme-format-user-data"]
    assert ph[1]["totals"]["write_bytes"] > 0


def test_the_format_keeps_the_namespaces_lba_format(nvme_vm_run):
    """ssdlab's purge formats the 4 KiB namespace with its current LBA format, not the
    controller's first one (512 B)."""
    s = nvme_vm_run.step("consistency")
    before = json.loads(nvme_vm_run.step("tools")["id_ns2"]["stdout"])
    after = json.loads(s["id_ns2_after"]["stdout"])
    cur = after["flbas"] & 0xF
    assert after["lbafs"][cur]["ds"] == 12 and after["flbas"] == before["flbas"]


def _run(step: dict) -> dict:
    assert step["run"]["rc"] == 0, step["run"]["stderr"]
    return json.loads(step["run"]["stdout"])


def test_consistency_on_the_namespace(nvme_vm_run):
    run = _run(nvme_vm_run.step("consistency"))
    m = run["drives"][0]["metrics"]
    # 6 s of random writes may not use up the namespace's spare area: then no steady figure
    if m["steady_reached"]:
        assert m["steady_iops"] > 0 and m["min_iops"] >= 0
    else:
        assert m["steady_iops"] is None and m["min_iops"] is None
    ph = _phases(nvme_vm_run.out / "r.sqlite", "consistency", "complete")
    assert [p["name"] for p in ph] == ["purge", "fill", "random"]
    rnd = ph[2]
    assert rnd["spec"]["block_size"] == 4096 and rnd["spec"]["pattern"] == "rand"
    assert len(rnd["series"]["t_s"]) >= 4 and float(np.nansum(rnd["series"]["iops"])) > 0
    for k in ("drive_before_host_write_bytes", "drive_after_host_write_bytes"):
        assert not math.isnan(rnd["totals"][k])


def test_report_made_on_the_host_from_the_guests_store(nvme_vm_run, tmp_path):
    """The guest only measures; the report comes from the store it wrote back."""
    rid = _run(nvme_vm_run.step("consistency"))["run_id"]
    r = subprocess.run([sys.executable, "-m", "ssdlab.cli", "report", str(rid), "--db",
                        str(nvme_vm_run.out / "r.sqlite"), "-o", str(tmp_path / "rep")],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    html = (tmp_path / "rep" / "report.html").read_text()
    assert "QEMU NVMe Ctrl" in html and "/dev/nvme0n2" in html


def test_the_guest_imports_only_the_real_drive_path(nvme_vm_run):
    """No plotting or cluster library is imported in the guest, where every import is
    read over the emulated machine's shared filesystem."""
    names = {m.split(".")[0] for m in nvme_vm_run.step("modules")["names"]}
    assert "ssdlab" in names and "numpy" in names
    assert not names & {"plotly", "matplotlib", "ray", "pyarrow", "jinja2", "PIL"}, sorted(names)


def _interrupted(nvme_vm_run, step: str, status: str) -> list[dict]:
    s = nvme_vm_run.step(step)
    listed = json.loads(s["list"]["stdout"])
    assert [r["status"] for r in listed] == [status], (listed, s["stderr"])
    assert s["holders_after"] == [], s["processes"]  # no fio left on the device within 60 s
    st = Store(s["db"], create=False)
    return st.phases(st.run(st.runs()[-1]["id"])["drives"][0]["id"])


def test_ctrl_c_keeps_the_partial_phase(nvme_vm_run):
    assert nvme_vm_run.step("ctrl_c")["rc"] == 130
    ph = _interrupted(nvme_vm_run, "ctrl_c", "interrupted")
    assert [(p["name"], p["status"]) for p in ph] == [("purge", "complete"), ("fill", "complete"),
                                                      ("random", "partial")]
    rnd = ph[2]
    assert len(rnd["series"]["t_s"]) > 0 and float(np.nansum(rnd["series"]["iops"])) > 0


def test_sigkill_keeps_the_phases_and_the_running_one_up_to_its_checkpoint(nvme_vm_run):
    """ssdlab cannot store anything once killed (here once the running phase had a
    checkpoint): the finished phases are kept and the one cut short as of its checkpoint;
    the run reads as stale in the guest where its process lived, and the kernel stopped fio."""
    assert nvme_vm_run.step("sigkill")["rc"] == -9
    ph = _interrupted(nvme_vm_run, "sigkill", "stale")
    assert [(p["name"], p["status"]) for p in ph] == [("purge", "complete"), ("fill", "complete"),
                                                      ("random", "partial")]
    assert len(ph[2]["series"]["t_s"]) > 0 and float(np.nansum(ph[2]["series"]["iops"])) > 0


def test_served_drive_as_an_nvme_namespace(nvme_vm_run):
    """A simulated drive (`ssdlab serve`) as the namespace's backing: the guest's fill
    reaches it through the NVMe driver, and the purge (the controller's Format) reaches it
    as an unmap of the whole drive."""
    run = _run(nvme_vm_run.step("served"))
    d = run["drives"][0]
    assert d["metrics"]["avg_mbps"] > 0
    cap = nvme_vm_run.served_bytes
    m = nvme_vm_run.serve_end["metrics"]
    assert m["trim_bytes"] >= 0.99 * cap and m["host_write_bytes"] >= 0.99 * cap
