"""A review of a real drive runs for hours; Ctrl-C in one of its tests keeps the tests
stored, and says which they are, which were not run, and how to see and go on from them
(there is no report at that point)."""

from __future__ import annotations

import json
import os

import pytest
from fakes import FakeTarget, with_fake_drives
from typer.testing import CliRunner

import ssdlab.targets
from ssdlab.targets.guard import safety
from ssdlab.cli import app
from ssdlab.store import Store


@pytest.fixture
def db(tmp_path, monkeypatch):
    """`--drive fake:interrupt`: a drive whose consistency test is cut short (Ctrl-C)."""
    real_open = ssdlab.targets.open_target

    def open_target(drive, **kw):
        if str(drive) == "fake:interrupt":
            return FakeTarget(interrupt_at=("random", 3))
        return real_open(drive, **kw)

    monkeypatch.setattr(ssdlab.targets, "open_target", open_target)
    monkeypatch.setattr(ssdlab.targets, "parse_drive", with_fake_drives(ssdlab.targets.parse_drive))
    return str(tmp_path / "r.sqlite")


def test_an_interrupted_review_names_what_was_stored_and_how_to_go_on(db, tmp_path):
    out = str(tmp_path / "rep")
    r = CliRunner().invoke(app, ["review", "--drive", "fake:interrupt", "--seconds", "5",
                                 "-o", out, "--db", db])
    assert r.exit_code == 130, r.output
    runs = {x["id"]: x["status"] for x in Store(db).runs(10)}
    assert runs == {1: "complete", 2: "interrupted"}
    lines = r.stderr.splitlines()
    assert "ssdlab: review interrupted; tests stored: fill (run 1), consistency (run 2, interrupted); " \
           "not run: working-set, trim, idle, quick, copy" in lines[-2]
    assert lines[-1].startswith(f"ssdlab: their report: ssdlab report 1 2 -o {out} --db {db}; ")
    assert "ssdlab run TEST" in lines[-1]
    assert not os.listdir(out) if os.path.exists(out) else True  # no report was drawn


def test_an_interrupted_review_still_prints_its_json(db, tmp_path):
    r = CliRunner().invoke(app, ["review", "--drive", "fake:interrupt", "--seconds", "5",
                                 "-o", str(tmp_path / "rep"), "--db", db, "--json"])
    assert r.exit_code == 130, r.output
    doc = json.loads(r.stdout)
    assert doc["report"] is None
    assert [(d["run_id"], d["test"], d["drives"][0]["status"]) for d in doc["runs"]] == [
        (1, "fill", "complete"), (2, "consistency", "interrupted")]


def test_a_review_stopped_by_a_failed_test_names_what_was_stored(db, tmp_path, monkeypatch):
    real_open = ssdlab.targets.open_target
    monkeypatch.setattr(ssdlab.targets, "open_target", lambda drive, **kw: FakeTarget(fail_at="random")
                        if str(drive) == "fake:fails" else real_open(drive, **kw))
    out = str(tmp_path / "rep")
    r = CliRunner().invoke(app, ["review", "--drive", "fake:fails", "--seconds", "5", "-o", out, "--db", db])
    assert r.exit_code == 1, r.output
    assert "ssdlab: error: run 2 failed: " in r.stderr
    assert "ssdlab: review stopped; tests stored: fill (run 1), consistency (run 2, failed); " \
           "not run: working-set, trim, idle, quick, copy" in r.stderr
    assert f"ssdlab: their report: ssdlab report 1 2 -o {out} --db {db}; " in r.stderr


def test_a_review_stopped_by_a_failed_test_still_prints_its_json(db, tmp_path, monkeypatch):
    """A script learns the runs kept, the failed one with its drives' stored status, as from
    an interrupted review; the error's lines stay on stderr."""
    real_open = ssdlab.targets.open_target
    monkeypatch.setattr(ssdlab.targets, "open_target", lambda drive, **kw: FakeTarget(fail_at="random")
                        if str(drive) == "fake:fails" else real_open(drive, **kw))
    r = CliRunner().invoke(app, ["review", "--drive", "fake:fails", "--seconds", "5", "-o", str(tmp_path / "rep"),
                                 "--db", db, "--json"])
    assert r.exit_code == 1, r.output
    doc = json.loads(r.stdout)
    assert doc["report"] is None
    assert [(d["run_id"], d["test"], [x["status"] for x in d["drives"]]) for d in doc["runs"]] == [
        (1, "fill", ["complete"]), (2, "consistency", ["failed"])]
    assert doc["runs"][1]["drives"][0]["drive"] == "fake:fails"
    assert "ssdlab: review stopped; tests stored: fill (run 1), consistency (run 2, failed); " in r.stderr


class BusyAfterFill(FakeTarget):
    """A drive that another program mounts (or holds open) once the first test ended: the
    next test's checks refuse it, as a real drive's would."""

    def preflight(self, phases):
        if self.ran:
            raise safety.UnsafeTarget("refusing fake:busy: it is in use (mounted, part of a RAID/LVM/dm "
                                      "device, or held open exclusively by another program); stop that use first")


@pytest.mark.parametrize("json_out", [False, True])
def test_a_review_refused_between_two_tests_names_what_was_stored(db, tmp_path, monkeypatch, json_out):
    real_open = ssdlab.targets.open_target
    monkeypatch.setattr(ssdlab.targets, "open_target", lambda drive, **kw: BusyAfterFill()
                        if str(drive) == "fake:busy" else real_open(drive, **kw))
    out = str(tmp_path / "rep")
    r = CliRunner().invoke(app, ["review", "--drive", "fake:busy", "--seconds", "5", "-o", out, "--db", db,
                                 *(["--json"] if json_out else [])])
    assert r.exit_code == 2, r.output
    if json_out:  # the runs kept, as an interrupted review's document
        doc = json.loads(r.stdout)
        assert doc["report"] is None and [(d["run_id"], d["test"]) for d in doc["runs"]] == [(1, "fill")]
    lines = r.stderr.splitlines()
    assert lines[0] == "ssdlab: review: fill stored as run 1 (complete)"
    assert lines[1].startswith("ssdlab: error: refusing fake:busy: it is in use ")  # the refusal first
    assert lines[2] == ("ssdlab: review stopped; tests stored: fill (run 1); "
                        "not run: consistency, working-set, trim, idle, quick, copy")
    assert lines[3].startswith(f"ssdlab: their report: ssdlab report 1 -o {out} --db {db}; ")
    assert len(lines) == 4 and [x["id"] for x in Store(db).runs(10)] == [1]
