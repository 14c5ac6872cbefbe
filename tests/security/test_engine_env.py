"""SSDLAB_FIO_ENGINE goes into fio's job file as `ioengine=`: a value with a newline added
any job option there (`exec_prerun=` ran a command before the I/O). Only an engine's name
is taken; anything else is one line, exit 2, before anything runs or is stored."""

from __future__ import annotations

from pathlib import Path

import pytest

import clirun
from bounded import refused, stored_runs


def test_an_engine_that_is_not_a_name_is_refused_before_anything_runs(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    env = clirun.environ(SSDLAB_FIO_ENGINE=f"libaio\nexec_prerun=touch {marker}")
    db = tmp_path / "r.sqlite"
    for extra in (["--plan"], ["--seconds", "1", "--repeat", "1", "--db", str(db)]):
        r = clirun.cli("run", "quick", "--drive", f"file:{tmp_path}/t.bin:64M", *extra, env=env)
        line = refused(r, "SSDLAB_FIO_ENGINE", "not the name of an fio I/O engine")
        assert "exec_prerun" not in r.stdout, line
    assert not marker.exists()
    assert stored_runs(db) == 0


@pytest.mark.parametrize("name", ["io_uring", "libaio", "psync"])
def test_an_engines_name_is_taken(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from ssdlab.targets.fio import jobs

    monkeypatch.setenv("SSDLAB_FIO_ENGINE", name)
    assert jobs.pick_engine("fio") == name
