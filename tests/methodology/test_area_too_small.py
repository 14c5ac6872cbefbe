"""A test that needs more of the area than `--spare` leaves it is refused before it runs with
one line that names the area, the --spare that made it and what to change: it said "drive
of 256000000000 bytes is too small for the quick tests" of a 256 GB drive at --spare 99.9995."""

import pytest
from typer.testing import CliRunner

from ssdlab.cli import app

pytest.importorskip("ssdlab._sim")


@pytest.mark.parametrize("args, line", [
    (["quick", "--drive", "sim:tlc-256", "--spare", "99.9995"],
     "the quick tests (two test files of at least 1 MiB): 2097152 bytes needed, and --spare 99.9995 leaves "
     "1048576 of the drive's 256000000000; use less --spare or a larger drive"),
    (["copy", "--drive", "sim:sn520-128", "--spare", "99.999"],
     "the large-file copy: 50331648 bytes needed, and --spare 99.999 leaves 1048576 of the drive's "
     "128000000000; use less --spare or a larger drive"),
    (["copy", "--drive", "sim:sn520-128", "--set", "user_capacity_gb=0.04"],
     "the large-file copy: 50331648 bytes needed, more than the drive's 39997440; use a larger drive"),
])
def test_an_area_too_small_for_the_test_names_spare_and_the_drive(tmp_path, args, line):
    db = tmp_path / "r.sqlite"
    r = CliRunner().invoke(app, ["run", *args, "--db", str(db)])
    assert r.exit_code == 2 and r.stderr == f"ssdlab: error: {line}\n" and not r.stdout
    assert not db.exists()
