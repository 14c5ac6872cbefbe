"""`ssdlab results show RUN` names a real drive as the plan does: model, serial, firmware
(the table's title gave only the device path, the same for whichever drive sat there)."""

from __future__ import annotations

from typer.testing import CliRunner

from ssdlab.cli import app
from ssdlab.store import Store


def test_results_show_names_the_real_drive(tmp_path):
    store = Store(tmp_path / "r.sqlite")
    rid = store.create_run("fill", {"drives": ["/dev/nvme0n1"]})
    rd = store.add_drive(rid, 0, "/dev/nvme0n1", {"kind": "block", "model": "QEMU NVMe Ctrl", "serial": "SSDLABVM0001",
                                                   "firmware": "7.2.22", "capacity": 268435456, "extra": {}})
    store.set_metrics(rd, {"avg_mbps": 136.5})
    store.finish_drive(rd, "complete")
    store.finish_run(rid, "complete")
    sim = store.create_run("fill", {"drives": ["sim:tlc-256"]})
    store.add_drive(sim, 0, "sim:tlc-256", {"kind": "sim", "model": "TLC 256 GB", "capacity": 256e9, "extra": {}})
    runner = CliRunner()
    r = runner.invoke(app, ["results", "show", str(rid), "--db", str(store.path)])
    assert r.exit_code == 0, r.output
    assert "# /dev/nvme0n1 (complete): QEMU NVMe Ctrl serial SSDLABVM0001 firmware 7.2.22\n" in r.output
    r = runner.invoke(app, ["results", "show", str(sim), "--db", str(store.path)])
    assert "# sim:tlc-256 (running)\n" in r.output, r.output
