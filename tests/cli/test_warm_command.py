"""The test suite's warm command (tests/warm_command.py): a command forked from a process
that has imported ssdlab answers as the same command in a fresh interpreter does."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import time

import clirun
import pytest
import warm_command

SMALL = [x for s in ("user_capacity_gb=0.25", "nand.channels=1", "nand.blocks_per_plane=16", "slc.dynamic_max_gb=0.05")
         for x in ("--set", s)]
CASES = [
    ("--help",),
    ("run", "fill", "--drive", "sim:nope"),
    ("run", "fill", "--drive", "sim:sn520-128", "--seconds", "x"),
    ("run", "quick", "--drive", "sim:sn520-128", *SMALL, "--repeat", "1", "--seconds", "0.2", "--interval", "0",
     "--plan"),
]


def fresh(monkeypatch, *args: str, **kw) -> subprocess.CompletedProcess:
    with monkeypatch.context() as m:
        m.setenv("SSDLAB_TEST_FRESH_CLI", "1")
        return clirun.cli(*args, **kw)


@pytest.mark.parametrize("args", CASES, ids=[" ".join(a)[:40] for a in CASES])
def test_a_warm_command_answers_as_a_fresh_one(monkeypatch, args):
    monkeypatch.delenv("SSDLAB_TEST_FRESH_CLI", raising=False)
    warm = clirun.cli(*args)
    assert warm_command._server is not None and warm_command._server.poll() is None  # it did run warm
    cold = fresh(monkeypatch, *args)
    assert (warm.returncode, warm.stdout, warm.stderr) == (cold.returncode, cold.stdout, cold.stderr)


def test_a_warm_command_has_its_own_directory_environment_and_a_complete_store(monkeypatch, tmp_path):
    """The store is whole once the command has ended (its connection closed at the
    interpreter's shutdown: nothing left only in the write-ahead log), the run read its
    working directory and environment (COLUMNS) as given."""
    monkeypatch.delenv("SSDLAB_TEST_FRESH_CLI", raising=False)
    r = clirun.cli("run", "fill", "--drive", "sim:sn520-128", *SMALL, "--db", "rel.sqlite", "--json",
                   cwd=tmp_path, env=clirun.environ(COLUMNS="33"))
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["drives"][0]["metrics"]
    assert not (tmp_path / "rel.sqlite-wal").exists() or (tmp_path / "rel.sqlite-wal").stat().st_size == 0
    copy = tmp_path / "copy.sqlite"
    copy.write_bytes((tmp_path / "rel.sqlite").read_bytes())  # the main file alone
    with sqlite3.connect(copy) as c:
        assert c.execute("SELECT status FROM runs").fetchall() == [("complete",)]
    width = clirun.cli("--help", env=clirun.environ(COLUMNS="33")).stdout
    assert max(len(x) for x in width.splitlines()) <= 33


def test_a_warm_command_past_its_timeout_is_killed_as_subprocess_run_does(tmp_path):
    with pytest.raises(subprocess.TimeoutExpired):
        clirun.cli("run", "consistency", "--drive", "sim:tlc-256", "--db", str(tmp_path / "r.sqlite"),
                   timeout=0.5)
    assert clirun.cli("--help").returncode == 0  # and the server goes on


def test_what_a_fork_could_change_runs_fresh(monkeypatch):
    monkeypatch.delenv("SSDLAB_TEST_FRESH_CLI", raising=False)
    base = clirun.environ()
    assert warm_command.usable(dict(base), base)
    assert not warm_command.usable(dict(base, PYTHONPATH="/elsewhere"), base)
    assert not warm_command.usable(dict(base, LD_PRELOAD="x.so"), base)
    assert not warm_command.usable(dict(base), base, preexec_fn=lambda: None)
    monkeypatch.setenv("SSDLAB_TEST_FRESH_CLI", "1")
    assert not warm_command.usable(dict(base), base)


def test_an_answer_that_came_with_the_one_before_is_read_at_once():
    """A command that ends before its pid is read: the server's two answers arrive together,
    and the second is in the reader's buffer, not in the pipe, when it is waited for."""
    p = subprocess.Popen(["sh", "-c", 'printf \'{"pid": 1}\\n{"status": 0}\\n\'; sleep 30'],
                         stdout=subprocess.PIPE, text=True)
    with clirun.reaped(p):
        time.sleep(0.5)  # both lines are in the pipe before the first read
        assert warm_command._read(p) == {"pid": 1}
        assert warm_command._read(p, timeout=5) == {"status": 0}


@pytest.mark.parametrize("safe", ["1", ""])
def test_the_safe_path_variable_forks_and_leaves_the_directory_off_the_path_as_at_start_up(monkeypatch, tmp_path,
                                                                                           safe):
    """PYTHONSAFEPATH (a test process that made a worker pool has it set from then on) acts
    at start-up: the forked command applies it itself, so a module in its working directory
    (a stand-in for gzip, which `results list` imports late) is imported exactly when a
    fresh `python -m ssdlab.cli` would import it."""
    monkeypatch.delenv("SSDLAB_TEST_FRESH_CLI", raising=False)
    (tmp_path / "gzip.py").write_text("open('planted', 'w').close()\nraise ImportError('planted')\n")
    env = clirun.environ(PYTHONSAFEPATH=safe)
    args = ("results", "list", "--db", str(tmp_path / "none.sqlite"))

    def ran_fresh(*a, **kw):
        raise AssertionError("ran in a fresh process, not forked")

    with monkeypatch.context() as m:
        m.setattr(clirun.subprocess, "run", ran_fresh)
        warm = clirun.cli(*args, cwd=tmp_path, env=env)
    warm_planted = (tmp_path / "planted").exists()
    (tmp_path / "planted").unlink(missing_ok=True)
    cold = fresh(monkeypatch, *args, cwd=tmp_path, env=env)
    assert warm_planted == (tmp_path / "planted").exists() == (not safe)
    assert warm.returncode == cold.returncode == (2 if safe else 1), (warm.stderr, cold.stderr)
