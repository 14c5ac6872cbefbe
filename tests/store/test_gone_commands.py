"""Every command that says runs are stored (review, pts, sweep, as run does) checks first that
the store's path still names the file they were written to: a store removed after their last
write is not said to hold them; each run goes to a pending file, one line says where, exit 1."""

from __future__ import annotations

import json
import re
from pathlib import Path

import clirun
import pytest

from ssdlab.pending import read
from ssdlab.store import Store

pytest.importorskip("ssdlab._sim")

from drives import SMALL, set_flags  # noqa: E402

PTS = ["pts", "--drive", "fake:a", "--test", "iops", "--test", "throughput", "--quick", "--rounds", "1",
       "--round-seconds", "0.5", "--jobs", "1"]
SWEEP = ["sweep", "fill", "--drive", "sim:tlc-256", *set_flags(SMALL), "--spare", "0,25", "--jobs", "1"]


def _command(tmp_path: Path, args: list[str], json_out: bool, **env: str) -> tuple[int, str, str]:
    db = tmp_path / "r.sqlite"
    p = clirun.fake_cli(tmp_path / "ready", *args, "--db", str(db), *(["--json"] if json_out else []),
                        env={k: str(db) for k in env})
    with clirun.reaped(p):
        out, err = p.communicate(timeout=300)
    return p.returncode, out, err


def _pending(tmp_path: Path, err: str) -> list[Path]:
    """The pending files the one line names, each importable into a new store."""
    errors = [x for x in err.splitlines() if x.startswith("ssdlab: error: ")]
    assert len(errors) == 1 and err.splitlines()[-1] == errors[0], err  # one line, the last
    files = sorted(tmp_path.glob("r.sqlite.run*-*.pending.json"))
    assert files and all(str(f) in err for f in files), (files, err)
    for f in files:
        assert read(f)["status"] in ("complete", "failed")
        r = clirun.cli("results", "import", str(f), "--db", str(tmp_path / "new.sqlite"), timeout=120)
        assert r.returncode == 0 and r.stdout.startswith("imported "), r.stderr
    return files


def _runs(err: str) -> list[int]:
    m = re.search(r"after runs? ([\d, ]+) (?:was|were) stored", err)
    assert m, err
    return [int(x) for x in m.group(1).split(", ")]


@pytest.mark.parametrize("json_out", [False, True])
def test_review_does_not_say_runs_are_stored_in_a_store_removed_at_its_end(tmp_path, json_out):
    code, out, err = _command(tmp_path, ["review", "--drive", "fake:a", "-o", str(tmp_path / "rep"), "--seconds",
                                         "1", "--repeat", "1"], json_out, REMOVE_AT_END="")
    assert code == 1 and "report:" not in out, (out, err)
    ids = _runs(err)
    if json_out:  # the document (its runs), then the line that says the store is gone
        assert [d["run_id"] for d in json.loads(out)["runs"]] == ids
    assert "was removed or moved away after runs" in err, err
    assert len(_pending(tmp_path, err)) == len(ids) > 5


def test_review_does_not_say_a_test_is_stored_in_a_store_removed_after_it(tmp_path):
    """A real drive's review says `TEST stored as run N` as each test is stored."""
    code, out, err = _command(tmp_path, ["review", "--drive", "fake:a", "-o", str(tmp_path / "rep"), "--seconds",
                                         "1", "--repeat", "1"], False, REMOVE_AFTER_RUN="")
    assert code == 1 and "stored as run" not in err and "report:" not in out, (out, err)
    assert f"results store {tmp_path / 'r.sqlite'} was removed or moved away after run 1 was stored" in err, err
    assert _runs(err) == [1] and len(_pending(tmp_path, err)) == 1
    assert not (tmp_path / "r.sqlite").exists()


@pytest.mark.parametrize("json_out", [False, True])
def test_pts_does_not_say_a_test_is_stored_in_a_store_removed_after_it(tmp_path, json_out):
    code, out, err = _command(tmp_path, [*PTS, "-o", str(tmp_path / "rep")], json_out, REMOVE_AFTER_RUN="")
    assert code == 1 and "; run 1" not in err and "report.html" not in out, (out, err)
    assert _runs(err) == [1] and len(_pending(tmp_path, err)) == 1


def test_pts_does_not_say_its_tests_are_stored_in_a_store_removed_at_its_end(tmp_path):
    code, out, err = _command(tmp_path, [*PTS, "-o", str(tmp_path / "rep"), "--json"], False, REMOVE_AT_END="")
    assert code == 1 and [d["run_id"] for d in json.loads(out)["runs"]] == [1, 2], (out, err)
    assert _runs(err) == [1, 2] and len(_pending(tmp_path, err)) == 2


@pytest.mark.parametrize("json_out", [False, True])
def test_sweep_does_not_say_its_points_are_stored_in_a_store_removed_meanwhile(tmp_path, json_out):
    code, out, err = _command(tmp_path, SWEEP, json_out, REMOVE_AFTER_RUN="")
    assert code == 1 and " in " + str(tmp_path / "r.sqlite") not in out, (out, err)
    assert _runs(err) == [1] and len(_pending(tmp_path, err)) == 1


def test_sweep_does_not_say_its_points_are_stored_in_a_store_removed_at_its_end(tmp_path):
    code, out, err = _command(tmp_path, [*SWEEP, "--json"], False, REMOVE_AT_END="")
    assert code == 1 and [p["run_id"] for p in json.loads(out)["points"]] == [1, 2], (out, err)
    assert _runs(err) == [1, 2] and len(_pending(tmp_path, err)) == 2
    assert not (tmp_path / "r.sqlite").exists() and not list(tmp_path.glob("new.sqlite.run*"))
    assert len(Store(tmp_path / "new.sqlite", create=False).runs()) == 2


def test_a_run_that_finds_the_store_gone_saves_the_runs_stored_before_it_too(tmp_path):
    """A review's third test finds the store removed: its line names the pending files of the
    two before it (in the same lost file) too."""
    from ssdlab.runner import RunsNotKept, StoreWriteFailed, kept_before

    db = tmp_path / "r.sqlite"
    store = Store(db)
    ids = [store.create_run("fill", {"n": n}) for n in range(2)]
    for i in ids:
        store.finish_run(i, "complete")
    db.unlink()
    with pytest.raises(RunsNotKept) as e:
        with kept_before(store, lambda: ids):
            raise StoreWriteFailed("results store r was removed or moved away while run 3 went on: ...")
    err = str(e.value)
    assert err.startswith("results store r was removed or moved away while run 3 went on: ...; results store "
                          f"{db} was removed or moved away after runs 1, 2 were stored: what they recorded is saved to ")
    files = sorted(tmp_path.glob("r.sqlite.run*-*.pending.json"))
    assert len(files) == 2 and all(f"{f} (run {i})" in err for i, f in zip(ids, files))
    assert [read(f)["status"] for f in files] == ["complete", "complete"]
