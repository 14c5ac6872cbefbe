"""`ssdlab sweep pts-TEST` takes the PTS settings `ssdlab run pts-TEST` takes (--enterprise,
--rounds, --round-seconds, --quick, --response-ceiling): each point runs with them and is
stored with them as `run` stores them; a sweep of another test refuses them in one line."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

pytest.importorskip("ssdlab._sim")

from ssdlab import sweep as sw  # noqa: E402
from ssdlab.cli import app  # noqa: E402
from ssdlab.store import Store  # noqa: E402

# a 3 GB drive: a round of 0.5 s steps takes a fraction of a second
TINY = ["--drive", "sim:sn520-128", "--set", "user_capacity_gb=3", "--set", "nand.blocks_per_plane=40"]


def sweep(db, *args):
    r = CliRunner().invoke(app, ["sweep", *args, "--db", str(db), "--jobs", "1", "--json"])
    return r, (json.loads(r.stdout) if r.exit_code == 0 else None)


def test_each_point_runs_and_is_stored_with_the_pts_settings(tmp_path):
    db = tmp_path / "s.sqlite"
    grid = ["pts-iops", *TINY, "--set", "host.write_buffer_kib=1024,4096", "--enterprise",
            "--rounds", "1", "--round-seconds", "0.5"]
    r, doc = sweep(db, *grid)
    assert r.exit_code == 0, r.output
    assert [p["status"] for p in doc["points"]] == ["complete", "complete"]
    store = Store(db)
    for p in doc["points"]:
        cond = p["metrics"]["conditions"]
        assert (cond["segment"], cond["max_rounds"], cond["round_seconds"], cond["active_range_pct"]) == \
            ("enterprise", 1, 0.5, 100)
        assert p["metrics"]["rounds"] == 1
        args = store.run(p["run_id"])["args"]
        assert (args["segment"], args["rounds"], args["round_seconds"], args["sweep"]) == \
            ("enterprise", 1, 0.5, doc["sweep"])
        # as `run pts-iops` on a simulated drive: its 4 KiB logical blocks are known
        assert args["logical_block"] == 4096
    again, doc2 = sweep(db, *grid)  # the same grid resumes: nothing runs again
    assert again.exit_code == 0 and doc2["skipped"] == 2 and doc2["sweep"] == doc["sweep"]
    # other settings are another sweep, not the finished points of this one
    other, doc3 = sweep(db, *grid[:-1], "0.25")
    assert other.exit_code == 0 and doc3["sweep"] != doc["sweep"] and doc3["complete"] == 2, other.output


def test_settings_are_part_of_the_grid_only_when_given():
    """A grid without them keeps the id it had (a sweep run before resumes)."""
    plain = sw.make_grid("pts-iops", ["sim:sn520-128"], [], [])
    assert "options" not in plain.definition()
    given = sw.make_grid("pts-iops", ["sim:sn520-128"], [], [], own={"rounds": 3})
    assert given.definition()["options"] == {"rounds": 3} and given.id != plain.id


@pytest.mark.parametrize("argv, words", [
    (["pts-iops", *TINY, "--rounds", "30"], "--rounds 30: must be 1 to 25"),
    (["pts-iops", *TINY, "--round-seconds", "0"], "--round-seconds 0: must be above 0"),
    (["fill", *TINY, "--quick"], "--quick: only for `ssdlab sweep` of pts-"),
    (["consistency", *TINY, "--enterprise", "--rounds", "2"], "--enterprise, --rounds: only for `ssdlab sweep` of"),
])
def test_bad_or_unread_settings_are_refused_before_anything_is_stored(tmp_path, argv, words):
    db = tmp_path / "s.sqlite"
    r = CliRunner().invoke(app, ["sweep", *argv, "--db", str(db)])
    assert r.exit_code == 2 and words in r.stderr and "Traceback" not in r.output, r.output
    assert len(r.stderr.strip().splitlines()) == 1
    assert not db.exists()


def test_a_grid_file_gives_the_settings_as_the_flags_do(tmp_path):
    f = tmp_path / "g.toml"
    f.write_text("enterprise = true\nrounds = 1\nround_seconds = 0.5\nquick = false\n")
    g = sw.make_grid("pts-iops", ["sim:sn520-128"], [], [], f)
    flags = sw.make_grid("pts-iops", ["sim:sn520-128"], [], [], None,
                         own={"enterprise": True, "rounds": 1, "round_seconds": 0.5})
    assert g.id == flags.id  # the same grid however it was given
    assert (g.own.segment, g.own.max_rounds, g.own.round_seconds) == ("enterprise", 1, 0.5)
    same = sw.make_grid("pts-iops", ["sim:sn520-128"], [], [], f, own={"rounds": 1})
    assert same.id == g.id
    f.write_text("round_seconds = 1\n")  # a whole number of seconds, as --round-seconds 1 gives 1.0
    assert sw.make_grid("pts-iops", ["sim:sn520-128"], [], [], f).id == \
        sw.make_grid("pts-iops", ["sim:sn520-128"], [], [], None, own={"round_seconds": 1.0}).id


@pytest.mark.parametrize("text, own, test, words", [
    ("rounds = 30\n", None, "pts-iops", "grid file {f}: rounds = 30: must be 1 to 25"),
    ("round_seconds = 0\n", None, "pts-iops", "grid file {f}: round_seconds = 0: must be above 0"),
    ('rounds = "3"\n', None, "pts-iops", "grid file {f}: rounds = \"3\": must be a whole number"),
    ("enterprise = 1\n", None, "pts-iops", "grid file {f}: enterprise = 1: must be true or false"),
    ("rounds = 3\n", {"rounds": 4}, "pts-iops", "--rounds 4 and the grid file's rounds = 3 differ"),
    ("quick = true\n", None, "fill", "grid file {f}: quick: only for `ssdlab sweep` of pts-"),
])
def test_a_grid_files_settings_are_checked(tmp_path, text, own, test, words):
    f = tmp_path / "g.toml"
    f.write_text(text)
    with pytest.raises((ValueError, sw.UserError)) as e:
        sw.make_grid(test, ["sim:sn520-128"], [], [], f, own=own)
    assert words.format(f=f) in str(e.value) and "\n" not in str(e.value)
