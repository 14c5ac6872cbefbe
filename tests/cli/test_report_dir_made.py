"""`review`, `pts` and `sweep -o` make their report directory before any test runs (so a
directory that cannot be written is said at once, not after hours): when the command is then
refused (a --db that cannot be a store) or stops before a report is drawn, the directory it
made is removed again while empty; one that was there before is left as it was."""

import pytest
from typer.testing import CliRunner

from ssdlab.cli import app

pytest.importorskip("ssdlab._sim")
SMALL = ["--drive", "sim:sn520-128", "--set", "user_capacity_gb=1"]


@pytest.mark.parametrize("command", [["review", *SMALL], ["pts", *SMALL, "--quick"], ["sweep", "fill", *SMALL]])
def test_a_refused_command_leaves_no_report_directory(tmp_path, command):
    (tmp_path / "db").mkdir()  # --db names a directory: refused once the report directory is made
    out = tmp_path / "a" / "rep"
    r = CliRunner().invoke(app, [*command, "-o", str(out), "--db", str(tmp_path / "db")])
    assert r.exit_code == 2 and "is a directory; give --db a file" in r.stderr, r.output
    assert not out.exists()
    out.mkdir()  # a directory that was there: kept
    r = CliRunner().invoke(app, [*command, "-o", str(out), "--db", str(tmp_path / "db")])
    assert r.exit_code == 2 and out.is_dir()
