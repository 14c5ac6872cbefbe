"""`--plan` without `--json`: the table of phases of a simulated drive, one row each, for
every kind of phase a test plans (docs/cli.md "--plan")."""

from __future__ import annotations

import clirun
import pytest

JOB = "[w]\nrw=randwrite\nbs=4k\niodepth=8\nsize=64m\n"


@pytest.mark.parametrize("test, kinds", [
    ("fio", {"purge": "whole drive", "fiojob": "1 job of"}),
    ("pts-iops", {"write_cache": "write cache on", "purge": "whole drive"}),
])
def test_every_kind_of_phase_has_a_row(tmp_path, test, kinds):
    (tmp_path / "j.fio").write_text(JOB)
    extra = [str(tmp_path / "j.fio")] if test == "fio" else []
    r = clirun.cli("run", test, *extra, "--drive", "sim:tlc-256", "--set", "user_capacity_gb=8",
                   "--plan", "--db", str(tmp_path / "r.sqlite"), check=False)
    assert r.returncode == 0, r.stderr
    rows = [line.split("\t") for line in r.stdout.splitlines() if not line.startswith("#")]
    got = {kind: what for _, _, kind, what in rows}
    for kind, what in kinds.items():
        assert what in got[kind], (kind, got[kind])
    assert not (tmp_path / "r.sqlite").exists()
