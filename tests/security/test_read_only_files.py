"""A file target its owner made read-only is never written, whatever --destroy-data says,
as a read-only device is not: root's fio would open it for writing all the same. One line
naming the mode and what to do, exit 2, before anything runs; `serve --data` refuses such a
file the same way. Reading it writes nothing and is fine."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import clirun
import pytest
from nbdserve import one_line_exit_2
from refusals import read_writes_nothing, sha

MIB = 2**20
pytestmark = pytest.mark.skipif(not shutil.which("fio"), reason="fio not installed (a file target's target)")


@pytest.fixture
def kept(tmp_path) -> Path:
    """A file of 1 MiB of data, mode 0444."""
    f = tmp_path / "kept.bin"
    f.write_bytes(os.urandom(MIB))
    f.chmod(0o444)
    return f


def test_a_read_only_file_is_refused_even_with_consent(kept, tmp_path):
    before = sha(kept)
    db = tmp_path / "r.sqlite"
    r = clirun.cli("run", "fill", "--drive", f"file:{kept}:1M", "--destroy-data", str(kept), "--db", str(db))
    one_line_exit_2(r, f"refusing file:{kept}: {kept} is read-only (mode 0444)", f"chmod u+w {kept}")
    assert not db.exists() and sha(kept) == before  # refused before the run was stored
    r = clirun.cli("run", "fill", "--drive", f"file:{kept}:1M", "--db", str(db))
    one_line_exit_2(r, "is read-only (mode 0444)")  # the flag would not help: said first
    kept.chmod(0o644)  # writable by its owner again: written as consented
    r = clirun.cli("run", "fill", "--drive", f"file:{kept}:1M", "--destroy-data", str(kept), "--db", str(db))
    assert r.returncode == 0, r.stderr


def test_reading_a_read_only_file_is_fine(kept):
    read_writes_nothing(kept, kept, MIB)


def test_serve_refuses_a_read_only_data_file(kept):
    from ssdlab.serve.server import check_data

    with pytest.raises(ValueError, match=f"refusing --data {kept}: {kept} is read-only"):
        check_data(kept, MIB, str(kept))
