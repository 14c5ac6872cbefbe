"""Ctrl-C in `run --fleet`: each member's own line says what its run kept (`[DRIVE] ssdlab: run
N interrupted; what was recorded is kept`), and the fleet adds no `ssdlab: interrupted` after
them, the line of a command that stored nothing."""

import re
import signal
import time

import clirun
import pytest

from ssdlab.store import Store

pytest.importorskip("ssdlab._sim")


def test_an_interrupted_fleet_ends_with_its_members_lines(tmp_path):
    db = tmp_path / "r.sqlite"
    p = clirun.start("run", "consistency", "--drive", "sim:tlc-256", "--drive", "sim:sn520-128", "--fleet",
                     "--db", str(db))
    with clirun.reaped(p):
        started = [p.stderr.readline() for _ in range(2)]
        assert all(": started (pid " in line for line in started), started
        time.sleep(1)
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=120)
    assert p.returncode == 130, err
    lines = err.splitlines()
    members = sorted(x for x in lines if x.startswith("["))
    assert [m.split("]")[0] for m in members] == ["[sim:sn520-128", "[sim:tlc-256"], err
    assert all(re.fullmatch(r"\[[^]]+\] ssdlab: run [12] interrupted; what was recorded is kept", m) for m in members), err
    assert "ssdlab: interrupted" not in lines, err
    assert {r["status"] for r in Store(db).runs(5)} == {"interrupted"}
