"""Ctrl-C in `run --fleet`: each member's own line says what its run kept (`[DRIVE] ssdlab: run
N interrupted; what was recorded is kept`), and the fleet adds no `ssdlab: interrupted` after
them, the line of a command that stored nothing."""

import contextlib
import os
import re
import signal
import sqlite3
import time

import clirun
import pytest

from ssdlab.store import Store

pytest.importorskip("ssdlab._sim")


def _runs(db) -> int:
    """The runs in the store, read without making or changing anything (0 before it exists)."""
    if not db.exists():
        return 0
    with contextlib.closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5)) as c:
        try:
            return c.execute("SELECT count(*) FROM runs").fetchone()[0]
        except sqlite3.OperationalError:  # the schema not made yet
            return 0


def _until_python_takes_sigint(pid: int) -> None:
    """Until process `pid` has a SIGINT handler: Python is up (the signal no longer kills it
    outright) and about to import."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            caught = next(x for x in open(f"/proc/{pid}/status") if x.startswith("SigCgt:"))
        except (OSError, StopIteration):
            return  # gone already
        if int(caught.split()[1], 16) & (1 << (signal.SIGINT - 1)):
            return
        time.sleep(0.002)
    raise AssertionError(f"process {pid} took no SIGINT handler within 30 s")


def test_an_interrupted_fleet_ends_with_its_members_lines(tmp_path):
    db = tmp_path / "r.sqlite"
    p = clirun.start("run", "consistency", "--drive", "sim:tlc-256", "--drive", "sim:sn520-128", "--fleet",
                     "--db", str(db))
    with clirun.reaped(p):
        started = [p.stderr.readline() for _ in range(2)]
        assert all(": started (pid " in line for line in started), started
        # both members have made their runs (a member stopped before that stored nothing and
        # says so: `ssdlab: interrupted`); a loaded machine takes seconds to import them
        deadline = time.monotonic() + 60
        while _runs(db) < 2:
            assert time.monotonic() < deadline, "the members made no runs within 60 s"
            time.sleep(0.2)
        time.sleep(0.5)
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=120)
    assert p.returncode == 130, err
    lines = err.splitlines()
    members = sorted(x for x in lines if x.startswith("["))
    assert [m.split("]")[0] for m in members] == ["[sim:sn520-128", "[sim:tlc-256"], err
    assert all(re.fullmatch(r"\[[^]]+\] ssdlab: run [12] interrupted; what was recorded is kept", m) for m in members), err
    assert "ssdlab: interrupted" not in lines, err
    assert {r["status"] for r in Store(db).runs(5)} == {"interrupted"}


def test_a_fleet_stopped_while_its_members_start_ends_each_in_one_line(tmp_path):
    """Ctrl-C while the members still start: each ends as the `ssdlab` command does then
    (`ssdlab: interrupted` while it imports, its run's line if it got that far), never with
    a traceback."""
    p = clirun.start("run", "consistency", "--drive", "sim:tlc-256", "--drive", "sim:sn520-128", "--fleet",
                     "--db", str(tmp_path / "r.sqlite"))
    with clirun.reaped(p):
        started = [p.stderr.readline() for _ in range(2)]
        assert all(": started (pid " in line for line in started), started
        pids = [int(re.search(r"pid (\d+)", line)[1]) for line in started]
        for pid in pids:
            _until_python_takes_sigint(pid)  # then it imports the CLI for a few tenths of a second
        for pid in [*pids, p.pid]:  # as a terminal's Ctrl-C reaches them all at once
            os.kill(pid, signal.SIGINT)
        out, err = p.communicate(timeout=120)
    assert p.returncode == 130, err
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err
    members = [x for x in err.splitlines() if x.startswith("[")]
    assert all(re.fullmatch(r"\[sim:[^]]+\] ssdlab: (interrupted|run [12] interrupted; what was recorded is kept)", m)
               for m in members), err
