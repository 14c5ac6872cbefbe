"""The report's table of real drives: identity (model, serial, firmware) and the drive's
own counters from the first phase of its first run to the last phase of its last run."""

from __future__ import annotations

import re

from ssdlab.report import ReportDrive, ReportPhase, ReportRun
from ssdlab.report.page import render
from ssdlab.report.synthetic import demo_runs

IDENT = {"kind": "block", "model": "QEMU NVMe Ctrl", "serial": "SSDLABVM0001", "firmware": "7.2.22",
         "capacity": 268435456, "extra": {"logical_block": 512, "write_cache": "write back",
                                          "telemetry": "smartctl"}}


def _phase(name: str, before_w: float, after_w: float, temp: float = 50.0) -> ReportPhase:
    return ReportPhase(name=name, totals={"drive_before_host_write_bytes": before_w,
                                          "drive_after_host_write_bytes": after_w,
                                          "drive_before_temp_c": temp, "drive_after_temp_c": temp + 1,
                                          "drive_before_media_errors": 0.0, "drive_after_media_errors": 0.0,
                                          "drive_before_host_read_bytes": float("nan")})


def _run(run_id: int, test: str, phases: list[ReportPhase]) -> ReportRun:
    return ReportRun(run_id, test, [ReportDrive("/dev/nvme0n1", "QEMU NVMe Ctrl", phases=phases, kind="block",
                                                identity=IDENT)])


def test_a_real_drive_is_named_with_its_serial_firmware_and_counters():
    runs = [_run(4, "consistency", [_phase("purge", 3e9, 3e9), _phase("random", 3e9, 5.29e9, temp=52)]),
            _run(3, "fill", [_phase("purge", 1e6, 1e6, temp=49), _phase("fill", 1e6, 3e9)])]
    page = render(runs)
    table = re.search(r'<table class="compare runs" id="drives">.*?</table>', page, re.S)
    assert table, "no drives table"
    cells = re.findall(r"<td>(.*?)</td>", table.group(0))
    assert cells[:8] == ["/dev/nvme0n1", "QEMU NVMe Ctrl", "SSDLABVM0001", "7.2.22", "0.268", "512",
                         "write back", "smartctl"]
    # from the first phase of the earliest run (3) to the last phase of the latest (4)
    assert cells[8] == "49 → 53" and cells[9] == "0.001 → 5.29"
    assert cells[10] == "–" and cells[12] == "0 → 0"  # reads never reported (NaN); no media errors


def test_simulated_drives_have_no_drives_table():
    assert 'id="drives"' not in render(demo_runs())
