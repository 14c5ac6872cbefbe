"""`validate --drive` takes a profile as every other command names it, `sim:ID`, as well as
its bare id: `--drive sim:sn520-128` was "no figures for sim:sn520-128", whose list of the
profiles validate knows held sn520-128."""

import json

import pytest
from typer.testing import CliRunner

from ssdlab.cli import app

pytest.importorskip("ssdlab._sim")


def test_a_profile_named_sim_id_is_validated_as_its_id():
    r = CliRunner().invoke(app, ["validate", "--drive", "sim:sn520-128", "--figure", "peak", "--workers", "1",
                                 "--json"])
    assert r.exit_code == 0, r.stderr
    figures = json.loads(r.stdout)["figures"]
    assert [(f["drive"], f["figure"]) for f in figures] == [("sn520-128", "peak")]


def test_json_and_markdown_together_are_refused_before_anything_runs():
    """Each prints the whole result; --json took it and --markdown was dropped without a word."""
    r = CliRunner().invoke(app, ["validate", "--drive", "sn520-128", "--figure", "peak", "--workers", "1",
                                 "--json", "--markdown"])
    assert r.exit_code == 2 and r.stdout == ""
    assert r.stderr.startswith("ssdlab: error: --json and --markdown") and r.stderr.count("\n") == 1, r.stderr
