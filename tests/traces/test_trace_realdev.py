"""The same trace on a simulated drive and on a loop device through fio: both
runs land in one comparison table and one chart. Root, losetup and fio needed (the loop
device sits on a sparse file, as in the other real-device tests)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from loopdevs import REASON, loops  # noqa: F401  (loops: a fixture)
from ssdlab.cli import app
from ssdlab.phase import Replay
from ssdlab.targets import open_target

DATA = Path(__file__).parents[1] / "data" / "traces"
from drives import SMALL  # noqa: E402
runner = CliRunner()

pytestmark = pytest.mark.realdev
if REASON:
    pytestmark = [pytest.mark.realdev, pytest.mark.skip(reason=REASON)]


def run(db, *args):
    r = runner.invoke(app, ["run", "trace", *map(str, args), "--db", db, "--json"])
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)


def test_same_trace_on_sim_and_loop_device_one_table_and_chart(loops, tmp_path):
    dev, _ = loops.make()
    db = str(tmp_path / "r.sqlite")
    trace = ["--trace", DATA / "fio_v3.log", "--qd", "4"]
    sim = run(db, *trace, "--drive", "sim:tlc-256", *[x for s in SMALL for x in ("--set", s)])
    real = run(db, *trace, "--drive", dev, "--destroy-data", dev)
    ms, mr = sim["drives"][0]["metrics"], real["drives"][0]["metrics"]
    for m in (ms, mr):
        assert m["trace_format"] == "fio-v3" and m["trace_mode"] == "closed loop QD4"
        assert m["empty_ios"] == 40
        assert m["empty_read_bytes"] + m["empty_write_bytes"] == 40 * 4096
        assert m["empty_data_rate_mbps"] > 0 and m["empty_read_lat_p99_us"] > 0
    r = runner.invoke(app, ["compare", str(sim["run_id"]), str(real["run_id"]), "--db", db, "--json"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    rows = {x["metric"]: x["values"] for x in doc["rows"]}
    assert len(doc["columns"]) == 2 and all(v is not None for v in rows["empty_lat_p99_us"])
    out = tmp_path / "report"
    r = runner.invoke(app, ["report", str(sim["run_id"]), str(real["run_id"]), "-o", str(out), "--db", db])
    assert r.exit_code == 0, r.output
    html = (out / "report.html").read_text()
    assert 'id="sec-trace"' in html and "fig-trace-empty-latency" in html and "fig-trace-latency" in html
    assert (out / "trace-empty-latency.png").stat().st_size > 0
    assert (out / "trace-empty-rate.png").stat().st_size > 0


def test_trims_and_flushes_reach_the_loop_device(loops):
    dev, backing = loops.make()
    with open_target(dev, destroy_data=dev) as t:
        from ssdlab.phase import Phase

        r = t.run(Phase(kind="replay", name="trace-empty",
                        replay=Replay(trace=str(DATA / "fio_v2.log"), queue_depth=2)))
    tot = r.totals
    assert tot["write_bytes"] == 2 * 131072 and tot["read_bytes"] == 4096 + 8192
    assert tot["trim_ios"] == 1 and tot["flush_ios"] == 2
    assert r.latency["read"]["ios"] == 2 and r.latency["write"]["ios"] == 2



def test_plan_shows_the_replay_job(loops, tmp_path):
    dev, _ = loops.make()
    r = runner.invoke(app, ["run", "trace", "--trace", str(DATA / "plain.csv"), "--qd", "2",
                            "--drive", dev, "--destroy-data", dev, "--plan", "--fio-jobs",
                            "--db", str(tmp_path / "r.sqlite")])
    assert r.exit_code == 0, r.output
    assert "read_iolog=$WORKDIR/p2.iolog" in r.stdout and f"replay_redirect={dev}" in r.stdout
    assert "replay_no_stall=1" in r.stdout and "iodepth=2" in r.stdout
    assert not (tmp_path / "r.sqlite").exists()
