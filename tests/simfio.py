"""A fio job file run with `ssdlab run fio` on an 8 GB simulated drive, in this process:
the JSON document fio would print, and the same job run by real fio on a device
(`real_job`): the fio-parity tests put them side by side."""

from __future__ import annotations

import json
import subprocess
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


def real_job(tmp_path: Path, dev: str, body: str) -> dict:
    """The first job of real fio's JSON for `body` run on `dev` (fio's notes before the JSON skipped)."""
    (tmp_path / "dev.fio").write_text(body + f"filename={dev}\n")
    r = subprocess.run(["fio", "--output-format=json", "dev.fio"], capture_output=True, text=True,
                       cwd=tmp_path, timeout=300)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout[r.stdout.index("{"):])["jobs"][0]
