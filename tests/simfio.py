"""A fio job file run with `ssdlab run fio` on an 8 GB simulated drive, in this process:
the JSON document fio would print (the fio-parity tests put it beside real fio's)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner


def run_json(tmp_path: Path, body: str, name: str = "sim.fio") -> dict:
    pytest.importorskip("ssdlab._sim")
    from ssdlab.cli import app

    f = tmp_path / name
    f.write_text(body)
    r = CliRunner().invoke(app, ["run", "fio", str(f), "--drive", "sim:tlc-256", "--set", "user_capacity_gb=8",
                                 "--db", str(tmp_path / "r.sqlite"), "--output-format", "json"])
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)
