import csv
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ssdlab import store_export
from ssdlab.phase import seq_write
from ssdlab.store import Store, StoreError
from ssdlab.phase import Identity, PhaseResult

ROOT = Path(__file__).resolve().parents[2]


def result(name="fill", n=5):
    t = np.arange(1.0, n + 1)
    return PhaseResult(
        phase=seq_write(name, offset=0, length=2**30, stop_bytes=2**30),
        series={"t_s": t, "mbps": t * 100, "waf": np.array([np.nan] + [1.5] * (n - 1))},
        segments={"gb": np.array([1.0]), "mbps": np.array([900.0]), "t_s": np.array([1.1])},
        latency={"p99_us": 50.0, "mean_us": 10.0, "edges_us": np.array([8.0, 16.0]),
                 "counts": np.array([3.0, 4.0])},
        totals={"duration_s": 5.0, "mbps": 300.0, "waf": float("nan")})


def test_roundtrip(store):
    run = store.create_run("fill", {"spare": 25, "drives": ["sim:x"]}, testbed="bench-1",
                           engine_version="ssdsim 0.1")
    rd = store.add_drive(run, 0, "sim:x", Identity("sim", "X", 10**9, extra={"profile": {"a": 1}}))
    store.add_phase(rd, 0, result())
    store.set_metrics(rd, {"peak_mbps": 1.5, "slc_cache_gb": None, "iops_by_gb": {"1": 2.0},
                           "waf": float("nan"), "n": np.int64(3)})
    store.finish_drive(rd, "complete")
    store.finish_run(run, "complete")

    r = store.run(run)
    assert r["status"] == "complete" and r["testbed"] == "bench-1"
    assert r["methodology_version"] and r["tool_version"] and r["engine_version"] == "ssdsim 0.1"
    assert r["args"]["spare"] == 25
    d = r["drives"][0]
    assert d["identity"]["extra"]["profile"] == {"a": 1}
    assert d["metrics"] == {"peak_mbps": 1.5, "slc_cache_gb": None, "iops_by_gb": {"1": 2.0},
                            "waf": None, "n": 3}
    (p,) = store.phases(d["id"])
    np.testing.assert_array_equal(p["series"]["mbps"], [100, 200, 300, 400, 500])
    assert np.isnan(p["series"]["waf"][0])
    assert p["series"]["mbps"].dtype == np.float64
    assert p["segments"]["mbps"].tolist() == [900.0]
    assert p["histogram"]["counts"].tolist() == [3.0, 4.0]
    assert p["latency"] == {"p99_us": 50.0, "mean_us": 10.0}
    assert p["totals"]["waf"] is None
    assert p["spec"]["stop_bytes"] == 2**30
    assert store.latest_run_id() == run
    assert [x["id"] for x in store.runs()] == [run]


def test_a_phase_replaces_its_partial_checkpoint_never_a_complete_one(store):
    import sqlite3

    run = store.create_run("fill", {})
    rd = store.add_drive(run, 0, "sim:x", Identity("sim", "X", 10**9))
    store.add_phase(rd, 0, result(n=2), "partial")  # the running phase so far
    store.add_phase(rd, 0, result(n=3), "partial")
    (p,) = store.phases(rd)
    assert p["status"] == "partial" and len(p["series"]["t_s"]) == 3
    store.add_phase(rd, 0, result(n=5))
    (p,) = store.phases(rd)
    assert p["status"] == "complete" and len(p["series"]["t_s"]) == 5 and p["histogram"] is not None
    n = store.db.execute("SELECT count(*) FROM series").fetchone()[0]
    assert n == len(result().series) + len(result().segments)  # the checkpoints' series are gone
    with pytest.raises(sqlite3.IntegrityError):
        store.add_phase(rd, 0, result(n=1), "partial")


def test_export_csv_and_json(store):
    run = store.create_run("fill", {})
    rd = store.add_drive(run, 0, "sim:x", Identity("sim", "X", 10**9))
    store.add_phase(rd, 0, result(n=3))
    store.set_metrics(rd, {"peak_mbps": 2.0, "iops_by_gb": {"1": 7.0}})
    doc = json.loads(store_export.to_json(store, run))
    ph = doc["drives"][0]["phases"][0]
    assert ph["series"]["mbps"] == [100.0, 200.0, 300.0]
    assert ph["series"]["waf"][0] is None
    rows = list(csv.DictReader(io.StringIO(store_export.to_csv(store, run))))
    mbps = [float(r["value"]) for r in rows if r["table"] == "series" and r["column"] == "mbps"]
    assert mbps == [100.0, 200.0, 300.0]
    assert {"metric", "series", "segments", "histogram", "totals"} <= {r["table"] for r in rows}
    assert any(r["column"] == "iops_by_gb" and r["row"] == "1" and r["value"] == "7.0" for r in rows)


def test_unknown_run_and_empty_store(store):
    with pytest.raises(StoreError, match="no run 7"):
        store.run(7)
    with pytest.raises(StoreError, match="no runs"):
        store.latest_run_id()


def test_unwritable_path_is_a_store_error(tmp_path):
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o500)
    if os.access(ro, os.W_OK):  # root ignores permissions: use a path under a file
        target = tmp_path / "afile"
        target.write_text("")
        path = target / "x.sqlite"
    else:
        path = ro / "x.sqlite"
    with pytest.raises(StoreError, match="cannot open results store"):
        Store(path)


WRITER = """
import sys
sys.path.insert(0, {python!r})
import numpy as np
from ssdlab.store import Store
from ssdlab.phase import seq_write
from ssdlab.phase import Identity, PhaseResult
s = Store(sys.argv[1])
run = s.create_run("fill", {{}}, testbed=sys.argv[2])
rd = s.add_drive(run, 0, sys.argv[2], Identity("sim", "X", 1))
for i in range(40):
    t = np.arange(2000.0)
    s.add_phase(rd, i, PhaseResult(seq_write("p%d" % i, stop_bytes=4096), {{"t_s": t}}, {{}}, {{}}, {{}}))
s.set_metrics(rd, {{"x": 1.0}})
s.finish_drive(rd, "complete")
s.finish_run(run, "complete")
"""


def test_two_processes_write_at_once(tmp_path):
    db = tmp_path / "shared.sqlite"
    code = WRITER.format(python=str(ROOT / "python"))
    procs = [subprocess.Popen([sys.executable, "-c", code, str(db), f"drive{i}"],
                              stderr=subprocess.PIPE) for i in range(2)]
    for p in procs:
        _, err = p.communicate(timeout=120)
        assert p.returncode == 0, err.decode()
    s = Store(db)
    runs = s.runs()
    assert sorted(r["testbed"] for r in runs) == ["drive0", "drive1"]
    for r in runs:
        assert r["status"] == "complete"
        d = s.run(r["id"])["drives"][0]
        assert len(s.phases(d["id"], with_data=False)) == 40


@settings(max_examples=30, deadline=None)
@given(st.lists(st.floats(allow_nan=True, allow_infinity=True), max_size=200))
def test_series_blobs_round_trip_exactly(tmp_path_factory, values):
    s = Store(tmp_path_factory.mktemp("h") / "r.sqlite")
    rd = s.add_drive(s.create_run("fill", {}), 0, "x", Identity("sim", "X", 1))
    r = PhaseResult(seq_write("p", stop_bytes=4096), {"v": np.array(values, dtype=float)}, {}, {}, {})
    pid = s.add_phase(rd, 0, r)
    got = s.phase_data(pid)["series"]["v"]
    np.testing.assert_array_equal(got, np.array(values, dtype=float))
    s.close()
