"""`ssdlab run pts-TEST` takes the PTS settings `ssdlab pts` takes (--enterprise, --rounds,
--round-seconds, --quick, --response-ceiling): it ran the client specification's 25 rounds
of 60 s steps whatever was wanted. Other tests refuse them in one line."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from ssdlab.cli import app
from ssdlab.store import Store

TINY = ["--drive", "sim:sn520-128", "--set", "user_capacity_gb=3", "--set", "nand.blocks_per_plane=40"]


def test_run_pts_takes_the_pts_settings_and_stores_them(tmp_path):
    db = tmp_path / "r.sqlite"
    r = CliRunner().invoke(app, ["run", "pts-iops", *TINY, "--enterprise", "--rounds", "1",
                                 "--round-seconds", "0.5", "--db", str(db), "--json"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    cond = doc["drives"][0]["metrics"]["conditions"]
    assert (cond["segment"], cond["round_seconds"], cond["max_rounds"], cond["active_range_pct"]) == \
        ("enterprise", 0.5, 1, 100)
    args = Store(db).run(doc["run_id"])["args"]
    assert (args["segment"], args["rounds"], args["round_seconds"]) == ("enterprise", 1, 0.5)


def test_the_pts_settings_are_checked_and_refused_elsewhere(tmp_path):
    db = tmp_path / "r.sqlite"
    for argv, words in ((["run", "pts-iops", *TINY, "--rounds", "30"], "--rounds 30: must be 1 to 25"),
                        (["run", "fill", *TINY, "--quick"], "--quick: only for `ssdlab run` of pts-iops")):
        r = CliRunner().invoke(app, [*argv, "--db", str(db)])
        assert r.exit_code == 2 and words in r.stderr, r.output
        assert not db.exists()
