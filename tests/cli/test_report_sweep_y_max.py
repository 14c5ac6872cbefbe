"""`report --sweep` draws no fill curves, so `--y-max` (their y axis) has nothing to set:
refused in one line, as `--sweep` with run ids is, not silently ignored."""

from __future__ import annotations

import json

import pytest

from clirun import cli

pytest.importorskip("ssdlab._sim")


def test_y_max_with_a_sweep_report_is_refused(tmp_path):
    db = str(tmp_path / "s.sqlite")
    r = cli("sweep", "fill", "--drive", "sim:tlc-256", "--set", "user_capacity_gb=1", "--spare", "0,7",
            "--jobs", "1", "--db", db, "--json", check=True)
    sweep = json.loads(r.stdout)["sweep"]
    out = tmp_path / "rep"
    r = cli("report", "--sweep", sweep, "--y-max", "500", "-o", str(out), "--db", db)
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.count("\n") == 1 and r.stderr.startswith("ssdlab: error: --y-max"), r.stderr
    assert not out.exists()
    # without it the same report is drawn
    r = cli("report", "--sweep", sweep, "-o", str(out), "--db", db, check=True)
    assert (out / "sweep.html").is_file()
