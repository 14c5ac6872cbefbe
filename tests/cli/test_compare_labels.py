"""`compare` names each column's drive capacity in GB as the CLI's tables do (`ssdlab drives`'
capacity_gb, four significant digits): a 2 GiB loop device read `2.14748 GB`."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from ssdlab.cli import app
from ssdlab.store import Store


def _run(store: Store, spec: str, capacity: float) -> int:
    rid = store.create_run("fill", {"drives": [spec]})
    rd = store.add_drive(rid, 0, spec, {"kind": "block", "model": "m", "capacity": capacity, "extra": {}})
    store.set_metrics(rd, {"avg_mbps": 100.0})
    store.finish_drive(rd, "complete")
    store.finish_run(rid, "complete")
    return rid


def test_compare_labels_a_capacity_as_the_report_does(tmp_path):
    store = Store(tmp_path / "r.sqlite")
    ids = [_run(store, "/dev/loop0", 2**31), _run(store, "sim:tlc-256", 256e9), _run(store, "sim:big", 1024e9)]
    r = CliRunner().invoke(app, ["compare", *map(str, ids), "--db", str(store.path), "--json"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["columns"] == [f"{ids[0]}:/dev/loop0 (2.147 GB)", f"{ids[1]}:sim:tlc-256 (256 GB)",
                                               f"{ids[2]}:sim:big (1024 GB)"]
