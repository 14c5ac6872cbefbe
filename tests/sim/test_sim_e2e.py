"""End to end on the simulator (sim:tlc-256 shrunk to 8 GB so every test takes seconds)."""

import json

import pytest
from typer.testing import CliRunner

pytest.importorskip("ssdlab._sim")

from ssdlab.cli import app  # noqa: E402
from ssdlab.methodology import Options  # noqa: E402
from ssdlab.runner import Hooks, RunInterrupted, run_test  # noqa: E402
from ssdlab.store import Store  # noqa: E402
from ssdlab.targets import open_target  # noqa: E402

from clirun import reaped  # noqa: E402
from drives import SMALL  # noqa: E402
SETS = [x for s in SMALL for x in ("--set", s)]
runner = CliRunner()


def run_json(db, *args):
    r = runner.invoke(app, ["run", *map(str, args), "--drive", "sim:tlc-256", *SETS,
                            "--db", db, "--json"])
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)


@pytest.fixture
def db(tmp_path):
    return str(tmp_path / "sim.sqlite")


def test_fill_on_the_simulator(db):
    doc = run_json(db, "fill")
    (d,) = doc["drives"]
    m = d["metrics"]
    assert d["status"] == "complete"
    assert m["peak_mbps"] > m["post_cache_mbps"] > 0  # the SLC cache runs out
    assert 0 < m["slc_cache_gb"] < 8
    assert m["mbps_per_watt"] > 0
    assert m["fill_seconds"] == pytest.approx(8000 / m["avg_mbps"], rel=0.01)
    s = Store(db)
    rd = s.run(doc["run_id"])["drives"][0]
    assert rd["identity"]["extra"]["profile"]["user_capacity_gb"] == 8
    assert s.run(doc["run_id"])["engine_version"].startswith("ssdsim")
    fill = s.phases(rd["id"])[1]
    # 249 MB segments (1/32 of a drive under 32 GB, rounded down): 32 whole ones in the 7.9996 GB
    # area, then the last 31.6 MB
    gb = fill["segments"]["gb"]
    assert gb.size == 33 and gb[-1] * 1e9 == pytest.approx(fill["totals"]["write_bytes"])
    assert 0.03 < gb[-1] - gb[-2] < 0.249 and "slc_used_bytes" in fill["series"]


def test_consistency_with_spare_area(db):
    m = {}
    for spare in (0, 25):
        doc = run_json(db, "consistency", "--seconds", 60, "--spare", spare)
        m[spare] = doc["drives"][0]["metrics"]
    assert m[0]["waf"] > m[25]["waf"] >= 1.0  # more spare area, less write amplification
    assert m[25]["steady_iops"] > m[0]["steady_iops"]


@pytest.mark.parametrize("bad, message", [
    ("nand.no_such_key=3", "no_such_key"),
    ("nand.channels=zero", "nand.channels"),
])
def test_bad_profile_override_is_one_line_exit_2(db, bad, message):
    r = runner.invoke(app, ["run", "fill", "--drive", "sim:tlc-256", "--set", bad, "--db", db])
    assert r.exit_code == 2
    assert r.stderr.count("\n") == 1 and message in r.stderr, r.stderr


def test_ctrl_c_mid_phase_keeps_the_partial_phase(db):
    class CtrlC(Hooks):
        n = 0

        def sample(self, row):
            self.n += 1
            if self.n == 25:  # during the random writes (the fill has ~10 samples)
                raise KeyboardInterrupt

    store = Store(db)
    target = open_target("sim:tlc-256", overrides=SMALL)
    with pytest.raises(RunInterrupted) as e:
        run_test(store, "consistency", [("sim:tlc-256", target)], Options(seconds=60), {},
                 hooks=CtrlC())
    run = store.run(e.value.run_id)
    assert run["status"] == "interrupted"
    phases = store.phases(run["drives"][0]["id"])
    assert [p["status"] for p in phases] == ["complete", "complete", "partial"]
    assert 0 < phases[-1]["series"]["iops"].size < 60


def test_review_runs_every_test_and_reports(db, tmp_path):
    pytest.importorskip("ssdlab.report")
    r = runner.invoke(app, ["review", "--drive", "sim:tlc-256", *SETS, "--seconds", "1",
                            "--repeat", "1", "--db", db, "-o", str(tmp_path / "rep"), "--json"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert [x["test"] for x in doc["runs"]] == ["fill", "consistency", "working-set", "trim",
                                                "idle", "quick", "copy", "trace"]
    assert all(x["drives"][0]["status"] == "complete" for x in doc["runs"])
    assert doc["report"].endswith(".html")
    # the application workload, scaled to the 8 GB drive, on the empty and the full drive
    m = doc["runs"][-1]["drives"][0]["metrics"]
    assert m["trace_format"] == "builtin" and m["empty_ios"] == m["full_ios"] == m["trace_ios"] > 0
    assert 'id="sec-trace"' in open(doc["report"]).read()


def test_sigint_stops_the_simulator_and_keeps_the_run(db):
    """A real Ctrl-C (SIGINT) while the simulator runs with the GIL released."""
    import os
    import signal
    import subprocess
    import sys
    import time
    from pathlib import Path

    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[2] / "python"))
    p = subprocess.Popen([sys.executable, "-m", "ssdlab.cli", "run", "consistency", "--drive",
                          "sim:tlc-256", *SETS, "--seconds", "1000000", "--db", db, "--json"],
                         env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    with reaped(p):
        # in the random phase that would run for hours: once purge and fill are stored (a
        # fixed 3 s could end in the start-up on a slow machine, before there was a run)
        deadline = time.monotonic() + 120
        while _phases_stored(db) < 2 and p.poll() is None and time.monotonic() < deadline:
            time.sleep(0.1)
        assert p.poll() is None and _phases_stored(db) == 2, p.poll()
        time.sleep(0.5)  # past the few lines between the fill's storing and the next phase
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=60)
    assert p.returncode == 130, err
    assert json.loads(out)["drives"][0]["status"] == "interrupted"
    store = Store(db)
    run = store.run(store.latest_run_id())
    assert run["status"] == "interrupted"
    assert store.phases(run["drives"][0]["id"], with_data=False)[-1]["status"] == "partial"


def _phases_stored(db: str) -> int:
    import dbpoll

    return dbpoll.count(db, "SELECT count(*) FROM phases")


def test_drives_lists_the_builtin_profiles():
    r = runner.invoke(app, ["drives", "--json"])
    assert r.exit_code == 0, r.output
    tlc = next(d for d in json.loads(r.stdout) if d["drive"] == "sim:tlc-256")
    assert tlc["capacity_gb"] == 256 and tlc["mapping"] == "dram"


def test_a_profile_is_described_as_its_built_drive():
    """`drives` lists profiles from Drive.describe (no tables allocated): the same info as
    the built drive, overrides included."""
    from ssdlab._sim import Drive
    from ssdlab.profiles import load_text

    for pid, sets in (("tlc-256", list(SMALL)), ("sn520-128", ["user_capacity_gb=2", "nand.channels=1"])):
        built = Drive(load_text(pid), sets).info()
        assert Drive.describe(load_text(pid), sets) == built, pid


def test_two_cli_runs_share_one_store(db):
    import os
    import subprocess
    import sys
    from pathlib import Path

    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[2] / "python"))
    procs = [subprocess.Popen([sys.executable, "-m", "ssdlab.cli", "run", test, "--drive",
                               "sim:tlc-256", *SETS, "--seconds", "20", "--db", db, "--json"],
                              env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for test in ("consistency", "trim")]
    docs = []
    for p in procs:
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
        docs.append(json.loads(out))
    store = Store(db)
    assert sorted(r["test"] for r in store.runs()) == ["consistency", "trim"]
    assert all(r["status"] == "complete" for r in store.runs())
    assert {d["run_id"] for d in docs} == {r["id"] for r in store.runs()}
