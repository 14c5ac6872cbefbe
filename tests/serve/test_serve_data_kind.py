"""`serve --data` naming a directory or a device: one line saying the data is kept in a file.
It said `not a regular file (use /dev/... for a block device)`, a file target's line, though
--data takes no device."""

import pytest
from typer.testing import CliRunner

from ssdlab.cli import app

pytest.importorskip("ssdlab._sim")


@pytest.mark.parametrize("kind", ["directory", "device"])
def test_data_that_is_no_file_is_refused_as_data(tmp_path, kind):
    data = tmp_path / "d" if kind == "directory" else "/dev/null"
    if kind == "directory":
        data.mkdir()
    db = tmp_path / "r.sqlite"
    r = CliRunner().invoke(app, ["serve", "sim:sn520-128", "--set", "user_capacity_gb=1", "--data", str(data),
                                 "--db", str(db)])
    assert r.exit_code == 2 and not r.stdout, r.output
    assert r.stderr == (f"ssdlab: error: --data {data}: not a regular file; the data of a served drive is kept "
                        "in a file\n")
    assert not db.exists()
