"""A results store removed or replaced while a run goes on: the run's writes would land in
a file no command reads again, so the whole run (what was written to the old file too) goes
to a pending file, one line says where and how to import it, and the command fails."""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

import clirun
import pytest

from ssdlab.methodology import Options
from ssdlab.pending import read
from ssdlab.runner import Hooks, StoreWriteFailed, check_kept, run_test
from ssdlab.store import Store

pytest.importorskip("ssdlab._sim")

from drives import SMALL  # noqa: E402
from ssdlab.targets import open_target  # noqa: E402


class AfterPurge(Hooks):
    """Does `then` once the run's first phase (the purge) is stored."""

    def __init__(self, then):
        self.then = then

    def phase_end(self, result):
        if result is not None and result.phase.kind == "purge":
            self.then()


def run_losing_the_store(db: Path, then) -> StoreWriteFailed:
    store = Store(db)
    target = open_target("sim:tlc-256", overrides=SMALL)
    with pytest.raises(StoreWriteFailed) as e:
        run_test(store, "consistency", [("sim:tlc-256", target)], Options(seconds=2), {"test": "consistency"},
                 hooks=AfterPurge(then))
    store.close()
    return e.value


def test_a_store_removed_mid_run_saves_the_whole_run_to_a_pending_file(tmp_path):
    db = tmp_path / "r.sqlite"
    err = str(run_losing_the_store(db, lambda: [f.unlink() for f in tmp_path.glob("r.sqlite*")]))
    (pending,) = tmp_path.glob("r.sqlite.run1-*.pending.json")
    assert err.startswith(f"results store {db} was removed or moved away while run 1 went on: what the run "
                          f"recorded is saved to {pending}; once the store can be written, "
                          f"`ssdlab results import {pending}`"), err
    assert "\n" not in err
    assert not db.exists()  # not made again by the run
    doc = read(pending)
    assert doc["status"] == "failed" and doc["drives"][0]["status"] == "failed"
    # the purge went to the removed file before the removal: kept all the same
    assert [(seq, st, res.phase.name) for seq, st, res in doc["drives"][0]["phases"]] == [
        (0, "complete", "purge"), (1, "complete", "fill")]
    fill = doc["drives"][0]["phases"][1][2]
    r = clirun.cli("results", "import", str(pending), "--db", str(db), timeout=60)
    assert r.returncode == 0 and r.stdout == f"imported 2 phases into run 1 in {db}\n", r.stderr
    store = Store(db, create=False)
    ph = store.phases(store.run(1)["drives"][0]["id"])
    assert [x["name"] for x in ph] == ["purge", "fill"]
    assert ph[1]["segments"]["mbps"].tolist() == fill.segments["mbps"].tolist() and len(fill.segments["mbps"]) > 3
    assert ph[1]["totals"] == json.loads(json.dumps(fill.totals))


def test_a_store_replaced_mid_run_leaves_the_new_file_alone_and_saves_the_run(tmp_path):
    db, other = tmp_path / "r.sqlite", tmp_path / "other.sqlite"
    theirs = Store(other)
    theirs.create_run("fill", {}, "theirs")
    theirs.close()

    def replace() -> None:  # e.g. a new store made where the old one was removed
        for f in tmp_path.glob("r.sqlite*"):
            f.unlink()
        os.replace(other, db)

    err = str(run_losing_the_store(db, replace))
    (pending,) = tmp_path.glob("r.sqlite.run1-*.pending.json")
    assert f"results store {db} was replaced by another file while run 1 went on" in err, err
    store = Store(db, create=False)
    assert [(r["id"], r["testbed"]) for r in store.runs()] == [(1, "theirs")]  # untouched
    r = clirun.cli("results", "import", str(pending), "--db", str(db), timeout=60)
    assert r.returncode == 0 and r.stdout == f"imported 2 phases into run 2 in {db}\n", r.stderr


def test_the_command_of_a_run_whose_store_was_removed_fails_naming_the_pending_file(tmp_path):
    db = tmp_path / "r.sqlite"
    p = clirun.fake_cli(tmp_path / "ready", "run", "consistency", "--drive", "fake:a", "--seconds", "3",
                        "--db", str(db), env={"REMOVE": str(db)})
    with clirun.reaped(p):
        out, err = p.communicate(timeout=120)
    (pending,) = tmp_path.glob("r.sqlite.run1-*.pending.json")
    assert p.returncode == 1 and "stored as run" not in out, (out, err)
    assert err.count("\n") == 1 and "was removed or moved away while run 1 went on" in err, err
    assert f"saved to {pending}; once the store can be written, `ssdlab results import {pending}`" in err


def _intact(db: Path) -> list[tuple[int, str]]:
    """The runs of the store at `db` as a new reader sees them, once its integrity is checked
    (plain sqlite3: what any later program finds there)."""
    c = sqlite3.connect(db)
    try:
        assert c.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        return c.execute("SELECT id, testbed FROM runs ORDER BY id").fetchall()
    finally:
        c.close()


def test_a_store_file_moved_over_mid_run_is_not_given_the_runs_pages(tmp_path):
    """Only the main file replaced (`mv other.sqlite r.sqlite`): the run's -wal file stays,
    named for the path, and SQLite would read (and checkpoint) what it holds into the new file."""
    db, other = tmp_path / "r.sqlite", tmp_path / "other.sqlite"
    theirs = Store(other)
    theirs.create_run("fill", {}, "theirs")
    theirs.close()
    seen: list[list[tuple[int, str]]] = []
    store = Store(db)
    target = open_target("sim:tlc-256", overrides=SMALL)

    def replace() -> None:
        os.replace(other, db)
        seen.append(_intact(db))  # read at once, while the run's connection is open

    with pytest.raises(StoreWriteFailed) as e:
        run_test(store, "consistency", [("sim:tlc-256", target)], Options(seconds=2), {"test": "consistency"},
                 hooks=AfterPurge(replace))
    seen.append(_intact(db))  # the run has stopped, its connection still open
    store.close()
    seen.append(_intact(db))  # and once it is closed
    assert seen == [[(1, "theirs")]] * 3
    (pending,) = tmp_path.glob("r.sqlite.run1-*.pending.json")
    assert f"results store {db} was replaced by another file while run 1 went on" in str(e.value)
    doc = read(pending)
    assert [(seq, res.phase.name) for seq, _, res in doc["drives"][0]["phases"]] == [(0, "purge"), (1, "fill")]


@pytest.mark.parametrize("json_out", [False, True])
def test_a_store_removed_after_the_run_was_stored_is_not_said_to_hold_it(tmp_path, json_out):
    """Removed after the run's last write, while its metrics print: the command does not say
    `stored as run N` of a file no later command reads; the run goes to a pending file."""
    db = tmp_path / "r.sqlite"
    p = clirun.fake_cli(tmp_path / "ready", "run", "consistency", "--drive", "fake:a", "--seconds", "3",
                        "--db", str(db), *(["--json"] if json_out else []), env={"REMOVE_AT_END": str(db)})
    with clirun.reaped(p):
        out, err = p.communicate(timeout=120)
    (pending,) = tmp_path.glob("r.sqlite.run1-*.pending.json")
    assert p.returncode == 1 and "stored as run" not in out, (out, err)
    if json_out:  # the document, then the line that says the store is gone
        assert json.loads(out)["run_id"] == 1
    assert err.count("\n") == 1, err
    assert f"results store {db} was removed or moved away after run 1 was stored: what the run recorded is " \
           f"saved to {pending}; once the store can be written, `ssdlab results import {pending}`" in err, err
    doc = read(pending)
    assert doc["status"] == "complete" and doc["drives"][0]["status"] == "complete"
    assert doc["drives"][0]["metrics"] and len(doc["drives"][0]["phases"]) > 2
    r = clirun.cli("results", "import", str(pending), "--db", str(db), timeout=60)
    assert r.returncode == 0 and r.stdout.startswith("imported "), r.stderr
    assert Store(db, create=False).run(1)["status"] == "complete"


def _run_with_frames_left(db: Path) -> Store:
    """A store whose last write's pages stay in its -wal: a reader held it meanwhile, so the
    write's own checkpoint could not empty it (store_wal.settle)."""
    store = Store(db)
    reader = sqlite3.connect(db)
    reader.execute("BEGIN")
    reader.execute("SELECT count(*) FROM runs").fetchall()
    store.create_run("fill", {"ours": "x" * 20_000}, "ours")
    reader.close()
    assert os.path.getsize(f"{db}-wal") > 0
    return store


def test_a_store_replaced_before_its_connection_closes_leaves_no_pages_for_the_new_file(tmp_path):
    """SQLite does not checkpoint at close into a file that was moved, and leaves its -wal at
    the path: the next program to open the path would read its pages as the new file's."""
    db, other, old = tmp_path / "r.sqlite", tmp_path / "other.sqlite", tmp_path / "old.sqlite"
    theirs = Store(other)
    theirs.create_run("fill", {}, "theirs")
    theirs.close()
    store = _run_with_frames_left(db)
    os.link(db, old)  # the run's own file, still reachable to look at
    os.replace(other, db)
    assert store.gone() == "replaced by another file"
    store.close()
    assert os.path.getsize(f"{db}-wal") == 0  # (SQLite leaves it: the file it belongs to was moved)
    assert _intact(db) == [(1, "theirs")]
    assert _intact(old) == [(1, "ours")]  # what the run wrote went into its own file


def test_a_run_that_finds_its_store_replaced_empties_its_wal_into_its_own_file(tmp_path):
    """At once (a SIGKILL may come before the connection is closed)."""
    db, other = tmp_path / "r.sqlite", tmp_path / "other.sqlite"
    theirs = Store(other)
    theirs.create_run("fill", {}, "theirs")
    theirs.close()
    store = _run_with_frames_left(db)
    os.replace(other, db)
    with pytest.raises(StoreWriteFailed):
        check_kept(store, 1)
    assert os.path.getsize(f"{db}-wal") == 0
    assert _intact(db) == [(1, "theirs")]
    store.close()
