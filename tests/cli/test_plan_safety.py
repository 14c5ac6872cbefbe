"""`--plan --json` of a real drive carries its safety verdict as data (`safety`), as the
text plan's `# safety:` line says it: a script can tell a refused run from an allowed one
without reading the commands."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from ssdlab.cli import app


def _safety(*args: str) -> dict:
    r = CliRunner().invoke(app, ["run", *args, "--plan", "--json"])
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)["plan"][0]["safety"]


def test_the_plan_says_whether_a_run_would_be_refused(tmp_path):
    f = tmp_path / "drive.bin"
    f.write_bytes(b"x" * 2**20)  # data ssdlab did not write
    refused = _safety("fill", "--drive", f"file:{f}:1M")
    assert refused["allowed"] is False and refused["writes"] is True
    assert refused["refusal"].startswith(f"refusing file:{f}:") and f"--destroy-data={f}" in refused["refusal"]
    assert _safety("fill", "--drive", f"file:{f}:1M", "--destroy-data", str(f)) == \
        {"allowed": True, "writes": True, "refusal": None}
    assert _safety("working-set", "--no-precondition", "--drive", f"file:{f}:1M") == \
        {"allowed": True, "writes": False, "refusal": None}


def test_a_simulated_plan_has_no_safety(tmp_path):
    r = CliRunner().invoke(app, ["run", "fill", "--drive", "sim:tlc-256", "--plan", "--json"])
    assert r.exit_code == 0 and "safety" not in json.loads(r.stdout)["plan"][0]
