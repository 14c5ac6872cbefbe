"""`ssdlab sweep` and executor.py: grids checked before anything runs, the same results
whichever executor runs them, resume, Ctrl-C keeps finished points."""

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

pytest.importorskip("ssdlab._sim")

from ssdlab import executor as ex  # noqa: E402
from ssdlab import sweep as sw  # noqa: E402
from ssdlab.cli import app  # noqa: E402
from ssdlab.store import Store  # noqa: E402

# sim:tlc-256 shrunk to 8 GB: a consistency point takes about a second
SMALL = ["user_capacity_gb=8", "nand.blocks_per_plane=46", "slc.dynamic_max_gb=1"]
SETS = [x for s in SMALL for x in ("--set", s)]
GRID = ["consistency", "--drive", "sim:tlc-256", *SETS, "--set", "host.write_buffer_kib=1024,4096",
        "--spare", "0,25", "--seconds", "60"]  # 60 s: the 8 GB drive is steady
runner = CliRunner()
ROOT = Path(__file__).resolve().parents[2]


def sweep(db, *args, grid=GRID):
    r = runner.invoke(app, ["sweep", *grid, "--db", str(db), "--json", *args])
    return r, (json.loads(r.stdout) if r.exit_code in (0, 1) and r.stdout.strip() else None)


def values(doc):
    return {json.dumps(p["point"], sort_keys=True): p["metrics"] for p in doc["points"]}


# ---- the grid -------------------------------------------------------------------------------
def test_grid_is_the_cartesian_product_with_a_stable_id(tmp_path):
    g = sw.make_grid("consistency", ["sim:tlc-256", "sim:sn520-128"], ["nand.channels=4,8"],
                     ["0,7,25"])
    pts = g.points()
    assert len(pts) == 2 * 2 * 3
    assert pts[0] == {"drive": "sim:tlc-256", "nand.channels": "4", "spare": 0.0}
    assert g.swept == ["drive", "nand.channels", "spare"]
    again = sw.make_grid("consistency", ["sim:tlc-256", "sim:sn520-128"], ["nand.channels=4,8"],
                         ["0,7,25"])
    assert g.id == again.id
    other = sw.make_grid("consistency", ["sim:tlc-256", "sim:sn520-128"], ["nand.channels=4,8"],
                         ["0,7"])
    assert other.id != g.id


def test_grid_file_adds_to_the_command_line(tmp_path):
    f = tmp_path / "g.toml"
    f.write_text('drives = ["sim:sn520-128"]\nspare = [0, 25]\nseconds = 30\n'
                 '[set.nand]\ndies_per_channel = [2, 4]\n')
    g = sw.make_grid("consistency", ["sim:tlc-256"], ["nand.channels=4,8"], [], f)
    assert g.drives == ["sim:tlc-256", "sim:sn520-128"]
    assert g.sets == {"nand.channels": ["4", "8"], "nand.dies_per_channel": ["2", "4"]}
    assert g.spares == [0.0, 25.0] and g.seconds == 30
    assert len(g.points()) == 16


@pytest.mark.parametrize("args, message", [
    (["--set", "nand.bogus=1,2"], "unknown field `bogus`"),
    (["--set", "nand.channels=4,x"], "nand.channels"),
    (["--set", "nand.channels=4,,8"], "comma-separated"),
    (["--set", "nand.channels=4,4"], "given twice"),
    # the profile reads numbers by value: 900 and 900.0 would be two identical points
    (["--set", "nand.native.prog_us=900,900.0"], "900 and 900.0 are the same value"),
    (["--set", "nand.native.prog_us=1e3,1000"], "1e3 and 1000 are the same value"),
    (["--spare", "0,100"], "--spare 100"),
    (["--spare", "a"], "bad --spare 'a'"),
    (["--drive", "/dev/null"], "sweeps run simulated drives"),
    (["--drive", "sim:nope"], "unknown profile 'nope'"),
    (["--jobs", "0"], "--jobs 0"),
    # a point whose phases do not fit its drive: refused before the other points run
    (["--spare", "0,99.99"], "spare=99.99: drive of 8000000000 bytes is too small for --spare 99.99"),
])
def test_bad_grids_are_refused_before_anything_runs(tmp_path, args, message):
    db = tmp_path / "s.sqlite"
    r = runner.invoke(app, ["sweep", "consistency", "--drive", "sim:tlc-256", *SETS,
                            "--seconds", "20", "--db", str(db), *args])
    assert r.exit_code == 2, r.output
    err = r.stderr.strip()
    assert len(err.splitlines()) == 1 and message in err, err
    assert "Traceback" not in r.output
    assert not db.exists()  # nothing was stored: the store was not even created


def test_bad_grid_file_is_one_line(tmp_path):
    f = tmp_path / "g.toml"
    f.write_text("drivez = ['sim:tlc-256']\n")
    r = runner.invoke(app, ["sweep", "consistency", "--drive", "sim:tlc-256", "--grid", str(f),
                            "--db", str(tmp_path / "s.sqlite")])
    assert r.exit_code == 2 and "unknown key 'drivez'" in r.stderr, r.output
    f.write_text("[set]\n'nand.channels' = []\n")  # an axis with no value: not a grid of no points
    r = runner.invoke(app, ["sweep", "consistency", "--drive", "sim:tlc-256", "--grid", str(f),
                            "--db", str(tmp_path / "s.sqlite")])
    assert r.exit_code == 2 and "'set.nand.channels' = []: give at least one value" in r.stderr, r.output
    f.write_text("[set.nand.native]\nprog_us = [900, 900.0]\n")  # by value, as on the command line
    r = runner.invoke(app, ["sweep", "consistency", "--drive", "sim:tlc-256", "--grid", str(f),
                            "--db", str(tmp_path / "s.sqlite")])
    assert r.exit_code == 2 and "'set.nand.native.prog_us': 900 and 900.0 are the same value" in r.stderr, r.output
    assert len(r.stderr.strip().splitlines()) == 1 and not (tmp_path / "s.sqlite").exists()


# ---- executors ------------------------------------------------------------------------------
def square(x):
    if x == 3:
        raise ValueError("three")
    return x * x


@pytest.mark.parametrize("make", [lambda: ex.Executor(), lambda: ex.PoolExecutor(2)])
def test_executor_hands_back_every_unit_and_its_failure(make):
    with make() as e:
        got = {d.key: (d.value if d.ok else str(d.error)) for d in
               e.run([ex.Unit(i, square, (i,), cost=i) for i in range(6)])}
    assert got == {0: 0, 1: 1, 2: 4, 3: "three", 4: 16, 5: 25}


def span(x):
    t = time.monotonic()
    time.sleep(0.2)
    return t, time.monotonic()


def test_a_ray_address_ray_cannot_read_names_the_option():
    ray = pytest.importorskip("ray")
    if ray.is_initialized():
        ray.shutdown()
    with pytest.raises(ValueError, match=r"^--ray-address bogus:::: cannot reach the Ray cluster .*HOST:PORT"):
        ex.open_executor(ray="bogus:::")


def test_runs_from_two_threads_share_the_pools_memory_budget(monkeypatch):
    """Two threads running units on one pool at once (a fit's cross-validation beside its
    pinning): units whose memory fits the budget only one at a time never overlap, and every
    unit of both runs comes back."""
    from concurrent.futures import ThreadPoolExecutor

    monkeypatch.setattr(ex, "available_bytes", lambda: 1e9)
    big = 0.5e9  # two of them: more than MEMORY_SHARE of 1e9
    with ex.PoolExecutor(2) as e, ThreadPoolExecutor(2) as threads:
        runs = [threads.submit(lambda k: [d.value for d in e.run([ex.Unit((k, i), span, (i,), memory=big)
                                                                   for i in range(3)])], k) for k in range(2)]
        spans = sorted(s for r in runs for s in r.result())
    assert len(spans) == 6
    assert all(a[1] <= b[0] for a, b in zip(spans, spans[1:])), spans
    # small units of both runs do overlap: the two workers are shared, not split (each unit
    # waits for the other to be running: run one after the other, the first would give up)
    with tempfile.TemporaryDirectory() as d, ex.PoolExecutor(2) as e, ThreadPoolExecutor(2) as threads:
        runs = [threads.submit(lambda k: [x.value for x in e.run([ex.Unit((k, 0), meet, (d, k))])], k)
                for k in range(2)]
        (a,), (b,) = (r.result() for r in runs)
    assert a and b


def meet(d, k, timeout=30.0):
    """Mark unit `k` as running in directory `d`, then wait until the other unit is too."""
    Path(d, str(k)).touch()
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if Path(d, str(1 - k)).exists():
            return True
        time.sleep(0.01)
    return False


def test_same_points_same_results_inline_pool_and_ray(tmp_path):
    """Determinism: a point's results depend on its seed, never on where it ran."""
    docs = {}
    for name, args in (("inline", ["--jobs", "1"]), ("pool", ["--jobs", "2"])):
        r, docs[name] = sweep(tmp_path / f"{name}.sqlite", *args)
        assert r.exit_code == 0, r.output
        assert docs[name]["complete"] == 4
    assert values(docs["inline"]) == values(docs["pool"])
    # every stored series too, not only the metrics
    a, b = Store(tmp_path / "inline.sqlite"), Store(tmp_path / "pool.sqlite")
    for pa in docs["inline"]["points"]:
        pb = next(p for p in docs["pool"]["points"] if p["point"] == pa["point"])
        ra, rb = a.run(pa["run_id"]), b.run(pb["run_id"])
        sa = a.phases(ra["drives"][0]["id"])[-1]["series"]
        sb = b.phases(rb["drives"][0]["id"])[-1]["series"]
        assert sa.keys() == sb.keys() and all(np.array_equal(sa[k], sb[k], equal_nan=True) for k in sa)
    pytest.importorskip("ray")
    # --ray without an address starts an instance of its own: it joins no cluster that
    # someone else started on this machine (RAY_ADDRESS names one nobody answers at)
    import os
    from unittest import mock

    with mock.patch.dict(os.environ, {"RAY_ADDRESS": "127.0.0.1:9"}):
        r, docs["ray"] = sweep(tmp_path / "ray.sqlite", "--ray")
    assert r.exit_code == 0, r.output
    assert values(docs["ray"]) == values(docs["inline"])


def test_a_point_is_a_normal_run_tagged_with_the_sweep(tmp_path):
    r, doc = sweep(tmp_path / "s.sqlite", "--jobs", "1")
    assert r.exit_code == 0, r.output
    store = Store(tmp_path / "s.sqlite")
    runs = store.runs()
    assert len(runs) == 4 and all(x["status"] == "complete" and x["test"] == "consistency"
                                  for x in runs)
    assert {x["args"]["sweep"] for x in runs} == {doc["sweep"]}
    one = next(x for x in runs if x["args"]["point"]["spare"] == 25.0)
    assert one["args"]["spare"] == 25.0 and "host.write_buffer_kib=1024" in one["args"]["set"] \
        or "host.write_buffer_kib=4096" in one["args"]["set"]
    # `ssdlab run` with the point's options gives the same metrics
    p = doc["points"][0]["point"]
    rr = runner.invoke(app, ["run", "consistency", "--drive", "sim:tlc-256", *SETS, "--set",
                             f"host.write_buffer_kib={p['host.write_buffer_kib']}", "--spare",
                             str(p["spare"]), "--seconds", "60", "--db", str(tmp_path / "r.sqlite"),
                             "--json"])
    assert rr.exit_code == 0, rr.output
    assert json.loads(rr.stdout)["drives"][0]["metrics"] == doc["points"][0]["metrics"]


def test_rerun_skips_finished_points_and_redoes_the_rest(tmp_path):
    db = tmp_path / "s.sqlite"
    r, first = sweep(db, "--jobs", "2")
    assert r.exit_code == 0 and first["complete"] == 4
    r, again = sweep(db, "--jobs", "2")
    assert r.exit_code == 0 and again["skipped"] == 4 and again["complete"] == 0
    assert len(Store(db).runs()) == 4  # nothing ran twice
    assert values(again) == values(first)
    # a point whose run did not complete (interrupted, failed) runs again
    store = Store(db)
    lost = first["points"][1]
    store.finish_run(lost["run_id"], "interrupted", "test")
    r, third = sweep(db, "--jobs", "2")
    assert r.exit_code == 0 and third["skipped"] == 3 and third["complete"] == 1
    redone = next(p for p in third["points"] if p["status"] == "complete")
    assert redone["point"] == lost["point"] and redone["metrics"] == lost["metrics"]


def test_a_failing_point_is_stored_failed_and_the_others_complete(tmp_path, monkeypatch):
    real = sw.compute if hasattr(sw, "compute") else None
    assert real is not None

    def compute(job):  # runs inline (--jobs 1): the monkeypatch reaches it
        if "host.write_buffer_kib=4096" in job.overrides:
            raise RuntimeError("boom")
        return real(job)

    monkeypatch.setattr(sw, "compute", compute)
    r, doc = sweep(tmp_path / "s.sqlite", "--jobs", "1")
    assert r.exit_code == 1, r.output
    assert doc["failed"] == 2 and doc["complete"] == 2
    failed = [p for p in doc["points"] if p["status"] == "failed"]
    assert all("boom" in p["error"] for p in failed)
    assert {x["status"] for x in Store(tmp_path / "s.sqlite").runs()} == {"complete", "failed"}


def _complete_runs(db: Path) -> int:
    import dbpoll

    return dbpoll.count(db, "SELECT count(*) FROM runs WHERE status = 'complete'")


def _children(pid: int) -> list[str]:
    """The pids whose parent is `pid` (read from /proc: quicker than running pgrep)."""
    out = []
    for d in os.listdir("/proc"):
        try:
            if d.isdigit() and Path(f"/proc/{d}/stat").read_text().rsplit(")", 1)[1].split()[1] == str(pid):
                out.append(d)
        except (OSError, IndexError):
            pass
    return out


@pytest.mark.serial
@pytest.mark.parametrize("jobs", ["1", "2", "ray"])
def test_ctrl_c_keeps_finished_points_and_a_rerun_resumes(tmp_path, jobs):
    if jobs == "ray":
        pytest.importorskip("ray")
    how = ["--ray"] if jobs == "ray" else ["--jobs", jobs]
    db = tmp_path / "s.sqlite"
    # 12 points of ~0.5 s: Ctrl-C within ~50 ms of the first one stored leaves most of them
    # to run on any machine (6 points and a 0.2 s poll, with pgrep before the signal,
    # left a faster machine time to finish them all)
    grid = ["consistency", "--drive", "sim:tlc-256", *SETS, "--set",
            "host.write_buffer_kib=1024,2048,3072,4096,5120,6144", "--spare", "0,25",
            "--seconds", "40"]
    env = dict(os.environ, PYTHONPATH=str(ROOT / "python"))
    p = subprocess.Popen([sys.executable, "-m", "ssdlab.cli", "sweep", *grid, "--db", str(db),
                          *how], env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True,
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + 240
    while _complete_runs(db) == 0 and p.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)  # until a point is stored, then Ctrl-C
    kids = _children(p.pid)
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=60)
    assert p.returncode == 130, f"stderr:\n{err}\nstdout:\n{out[-3000:]}"
    assert "interrupted" in err and "Traceback" not in err, err
    runs = Store(db).runs()
    done = [r for r in runs if r["status"] == "complete"]
    assert 1 <= len(done) < 12, runs
    # no worker is left running (Ray's shutdown SIGKILLs a slow daemon without waiting
    # for it to exit: give the kernel time, rather than a fixed 0.5 s)
    def running() -> list[str]:
        out = []
        for k in kids:
            try:
                if "Z" not in Path(f"/proc/{k}/stat").read_text().rsplit(")", 1)[1].split()[:1]:
                    out.append(k)
            except OSError:  # gone
                pass
        return out

    gone_by = time.monotonic() + 30
    while running() and time.monotonic() < gone_by:
        time.sleep(0.1)
    assert not running(), kids
    r, doc = sweep(db, *how, grid=grid)
    assert r.exit_code == 0, r.output
    assert doc["skipped"] == len(done) and doc["complete"] == 12 - len(done)


def test_sweep_report_lines_heat_maps_sensitivity_and_the_grid(tmp_path):
    db, out = tmp_path / "s.sqlite", tmp_path / "rep"
    r, doc = sweep(db, "--jobs", "2", "-o", str(out))
    assert r.exit_code == 0, r.output
    html = Path(doc["report"]).read_text()
    for el in ("table-sensitivity", "table-grid", "fig-sweep-steady_iops",
               "fig-sweep-steady_iops-heat"):
        assert f'id="{el}"' in html or f'id="wrap-{el}"' in html, el
    import csv

    rows = list(csv.DictReader(open(out / "grid.csv")))
    assert len(rows) == 4 and {r["status"] for r in rows} == {"complete"}
    by_point = {(r["host.write_buffer_kib"], r["spare"]): float(r["steady_iops"]) for r in rows}
    want = {(str(p["point"]["host.write_buffer_kib"]), f"{p['point']['spare']:g}"):
            p["metrics"]["steady_iops"] for p in doc["points"]}
    assert by_point == want
    assert (out / "sweep-steady_iops.png").stat().st_size > 1000
    if (out / "grid.parquet").exists():
        import pyarrow.parquet as pq

        assert pq.read_table(out / "grid.parquet").num_rows == 4
    # the same report from the store afterwards
    r2 = runner.invoke(app, ["report", "--sweep", doc["sweep"], "-o", str(tmp_path / "again"),
                             "--db", str(db)])
    assert r2.exit_code == 0, r2.output
    assert (tmp_path / "again" / "grid.csv").read_text() == (out / "grid.csv").read_text()


def test_sensitivity_names_the_parameter_that_moves_a_metric_most():
    from ssdlab.report import sweep_data as S

    rows = [{"run_id": i, "status": "complete", "a": a, "b": b, "m": 10 * a + b}
            for i, (a, b) in enumerate([(1, 1), (1, 2), (2, 1), (2, 2)])]
    t = S.SweepTable("sw-x", "consistency", {"a": [1, 2], "b": [1, 2]}, rows, ["m"])
    assert S.main_effect(t, "m", "a") == [11.5, 21.5]
    (s,) = S.sensitivity(t)
    assert s["top"] == "a" and s["swing_pct"]["a"] == pytest.approx(100 * 10 / 16.5)
    assert S.two_way(t, "m", "a", "b").tolist() == [[11, 21], [12, 22]]
