"""`results export -o FILE` replaces an existing file, but never a results store: the one
it exports from (`-o results.sqlite` by mistake) or any other SQLite database."""

import os
import shutil
import tempfile
from pathlib import Path

import pytest
from otheruser import needs_other_user, ssdlab_as_nobody
from typer.testing import CliRunner

from ssdlab.cli import app
from ssdlab.store import Store

runner = CliRunner()


def invoke(*args):
    return runner.invoke(app, [str(a) for a in args])


@pytest.fixture(scope="module")
def stored(tmp_path_factory):
    """A store holding one small fill run."""
    db = tmp_path_factory.mktemp("export") / "r.sqlite"
    r = invoke("run", "fill", "--drive", "sim:sn520-128", "--set", "user_capacity_gb=1", "--db", db)
    assert r.exit_code == 0, r.stderr
    return db


def test_export_over_the_store_it_reads_is_refused_and_the_store_kept(stored):
    r = invoke("results", "export", "1", "-o", stored, "--db", stored)
    assert r.exit_code == 2 and r.stderr.count("\n") == 1, r.stderr
    assert f"-o {stored}: that is the results store the run is exported from" in r.stderr
    assert Store(stored, create=False).run(1)["test"] == "fill"  # every run still there


def test_export_over_another_sqlite_database_is_refused(stored, tmp_path):
    other = tmp_path / "other.sqlite"
    shutil.copy(stored, other)
    before = other.read_bytes()
    r = invoke("results", "export", "1", "--format", "csv", "-o", other, "--db", stored)
    assert r.exit_code == 2 and r.stderr.count("\n") == 1, r.stderr
    assert "an SQLite database (a results store?), which an export never replaces" in r.stderr
    assert other.read_bytes() == before


def test_export_replaces_an_existing_file_of_another_kind(stored, tmp_path):
    old = tmp_path / "run.csv"
    old.write_text("an earlier export\n")
    r = invoke("results", "export", "1", "--format", "csv", "-o", old, "--db", stored)
    assert r.exit_code == 0, r.stderr
    assert old.read_text().startswith("run_id,drive,phase_seq")


@needs_other_user
def test_export_into_a_directory_its_user_may_not_write_names_that_directory(stored, tmp_path):
    """Not the hidden temporary file the export is written to first (`.x.json.3a9e....tmp`)."""
    d = Path(tempfile.mkdtemp(prefix="ssdlab-export-", dir="/tmp"))
    try:
        os.chmod(d, 0o755)  # root's: the other user may not make a file in it
        store = d / "r.sqlite"
        shutil.copy(stored, store)
        os.chmod(store, 0o644)
        r = ssdlab_as_nobody("results", "export", "1", "-o", str(d / "x.json"), "--db", str(store))
        assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr
        assert r.stderr == (f"ssdlab: error: -o {d / 'x.json'}: cannot write {d / 'x.json'}: no file can be made in "
                            f"{d} (Permission denied)\n")
        assert sorted(p.name for p in d.iterdir()) == ["r.sqlite"]
    finally:
        shutil.rmtree(d, ignore_errors=True)
