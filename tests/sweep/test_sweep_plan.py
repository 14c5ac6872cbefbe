"""`ssdlab sweep --plan`: the points and an estimate of their drive time, as `run --plan`
estimates it; every point checked, nothing run or stored."""

import json

from bounded import refused, run_cli
from drives import SMALL, set_flags

GRID = ["sweep", "consistency", "--drive", "sim:tlc-256", *set_flags(SMALL),
        "--set", "host.write_buffer_kib=1024,4096", "--spare", "0,25", "--seconds", "60"]


def test_plan_lists_the_points_and_their_estimate_and_stores_nothing(tmp_path):
    db = tmp_path / "s.sqlite"
    r = run_cli(*GRID, "--plan", "--json", "--db", str(db))
    assert r.returncode == 0, r.stderr[-2000:]
    doc = json.loads(r.stdout)
    assert doc["points"] == 4 and len(doc["plan"]) == 4 and doc["sweep"].startswith("sw-")
    first = doc["plan"][0]
    assert first["point"]["host.write_buffer_kib"] == "1024" and first["point"]["spare"] == 0.0
    est = first["estimate"]  # 60 s of random writes, the fill's 8 GB at the assumed 500 MB/s
    assert est["timed_s"] == 60 and est["bytes"] == first["capacity"] // 2**20 * 2**20
    assert est["seconds"] == 60 + est["bytes"] / 500e6
    assert doc["estimate"]["seconds"] == sum(p["estimate"]["seconds"] for p in doc["plan"])
    assert not db.exists()  # not even the store is made

    r = run_cli(*GRID, "--plan", "--db", str(db))
    assert r.returncode == 0, r.stderr[-2000:]
    assert "4 points (host.write_buffer_kib 2 x spare 2); nothing run or stored" in r.stdout, r.stdout
    assert "estimate" in r.stdout
    assert not db.exists()


def test_plan_of_a_bad_grid_is_refused_too(tmp_path):
    db = tmp_path / "s.sqlite"
    r = run_cli(*GRID, "--set", "nand.channels=4,x", "--plan", "--db", str(db))
    refused(r, "nand.channels")
    assert not db.exists()


def test_plan_of_the_largest_grid_is_quick_and_short(tmp_path):
    """10,000 points: planned in seconds within the memory bound, the table cut at 100 rows."""
    kib = ",".join(str(1024 + i) for i in range(100))
    spare = ",".join(f"{i / 2:g}" for i in range(100))
    r = run_cli("sweep", "fill", "--drive", "sim:tlc-256", *set_flags(SMALL), "--set",
                f"host.write_buffer_kib={kib}", "--spare", spare, "--plan",
                "--db", str(tmp_path / "s.sqlite"), timeout=60)
    assert r.returncode == 0, r.stderr[-2000:]
    assert "10000 points" in r.stdout and "and 9900 more points" in r.stdout
    assert len(r.stdout.splitlines()) < 110
    assert not (tmp_path / "s.sqlite").exists()


def test_a_plan_warns_of_an_option_the_test_does_not_read_as_run_plan_does(tmp_path):
    from typer.testing import CliRunner

    from ssdlab.cli import app

    r = CliRunner().invoke(app, ["sweep", "fill", "--drive", "sim:sn520-128", "--set", "user_capacity_gb=1",
                                 "--interval", "5", "--plan", "--db", str(tmp_path / "r.sqlite")])
    assert r.exit_code == 0, r.stderr
    assert r.stderr == "ssdlab: warning: --interval is not used by fill\n"
    assert not (tmp_path / "r.sqlite").exists()


def test_a_spare_axis_the_test_does_not_read_is_refused_not_run_as_identical_points(tmp_path):
    """pts-iops ignores --spare: several spare values would run the same point that many
    times, so the grid is refused before anything is stored (one value only warns)."""
    db = tmp_path / "s.sqlite"
    r = run_cli("sweep", "pts-iops", "--drive", "sim:sn520-128", "--spare", "0,25", "--db", str(db))
    refused(r, "--spare", "pts-iops", "give one or none")
    assert not db.exists()


def test_a_test_that_needs_its_own_options_is_refused_naming_run(tmp_path):
    """A sweep's points carry the options every test shares, not a trace or a job file."""
    db = tmp_path / "s.sqlite"
    for test, words in (("trace", ["--trace FILE"]), ("fio", ["job file"])):
        r = run_cli("sweep", test, "--drive", "sim:sn520-128", "--plan", "--db", str(db))
        refused(r, f"ssdlab sweep does not run {test}", f"use ssdlab run {test}", *words)
        assert not db.exists()
