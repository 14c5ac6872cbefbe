"""`results import FILE` given a file of another kind (a CSV export, a text file) says it is
not a pending-results file, not only the JSON parser's complaint about its first byte."""

import pytest
from typer.testing import CliRunner

from ssdlab.cli import app


@pytest.mark.parametrize("content", [b"run_id,drive,phase_seq\n1,sim:x,0\n", b"\xff\xfe not text"])
def test_a_file_of_another_kind_is_named_as_not_a_pending_file(tmp_path, content):
    f = tmp_path / "run.csv"
    f.write_bytes(content)
    db = tmp_path / "r.sqlite"
    r = CliRunner().invoke(app, ["results", "import", str(f), "--db", str(db)])
    assert r.exit_code == 2 and r.stderr.count("\n") == 1 and not r.stdout, r.stderr
    assert r.stderr.startswith(f"ssdlab: error: cannot read {f}: ")
    assert r.stderr.endswith("; it is not an ssdlab pending-results file (the JSON file a run saves when its "
                             "store cannot be written)\n")
    assert not db.exists()
