"""A file target with another name (a hard link) is never written, whatever
--destroy-data says: what is written through one name is written to the file of every
other, which may be another user's (with fs.protected_hardlinks=0 anyone may link to a
file they cannot write). One line naming the names and what to do, exit 2, before
anything runs; the drive host's agent refuses such a listed file the same way. Reading it
writes nothing and is fine."""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

import clirun
import pytest
from nbdserve import one_line_exit_2
from refusals import read_writes_nothing

from ssdlab import phase as P
from ssdlab.targets import open_target
from ssdlab.targets.guard import safety

MIB = 2**20
pytestmark = pytest.mark.skipif(not shutil.which("fio"), reason="fio not installed (a file target's target)")


def sha(p: Path) -> str:
    return hashlib.sha256(p.read_bytes()).hexdigest()


@pytest.fixture
def linked(tmp_path) -> tuple[Path, Path]:
    """A file of 1 MiB of data and a second name of it."""
    d = tmp_path / "d"
    d.mkdir()
    f = d / "t.bin"
    f.write_bytes(os.urandom(MIB))
    other = d / "notes"
    os.link(f, other)
    return f, other


def test_a_hard_linked_file_is_refused_even_with_consent(linked, tmp_path):
    f, other = linked
    before = sha(other)
    db = tmp_path / "r.sqlite"
    r = clirun.cli("run", "fill", "--drive", f"file:{f}:1M", "--destroy-data", str(f), "--db", str(db))
    one_line_exit_2(r, f"refusing file:{f}: {f} has 2 names (hard links)", "remove the other names")
    assert not db.exists() and sha(other) == before  # refused before the run was stored
    r = clirun.cli("run", "fill", "--drive", f"file:{f}:1M", "--db", str(db))
    one_line_exit_2(r, "has 2 names (hard links)")  # the flag would not help: said first
    r = clirun.cli("run", "fill", "--drive", f"file:{f}:1M", "--destroy-data", str(f), "--plan")
    assert r.returncode == 0 and "# safety: a run would be REFUSED" in r.stdout and "hard links" in r.stdout
    with open_target(f"file:{f}:1M", destroy_data=str(f)) as t:
        with pytest.raises(safety.UnsafeTarget, match="2 names"):
            t.preflight([P.purge()])
    assert sha(other) == before
    os.unlink(other)  # one name again: written as consented
    r = clirun.cli("run", "fill", "--drive", f"file:{f}:1M", "--destroy-data", str(f), "--db", str(db))
    assert r.returncode == 0, r.stderr


def test_a_file_ssdlab_made_is_refused_once_it_has_another_name(tmp_path):
    """ssdlab's own mark is no consent to write the file of another name either."""
    f = tmp_path / "t.bin"
    with open_target(f"file:{f}:1M") as t:
        t.run(P.seq_write("w", stop_bytes=MIB))
    assert safety.is_ours(str(f))
    other = tmp_path / "elsewhere"
    os.link(f, other)
    with open_target(f"file:{f}:1M") as t, pytest.raises(safety.UnsafeTarget, match="2 names"):
        t.run(P.seq_write("w", stop_bytes=MIB))


def test_reading_a_hard_linked_file_is_fine(linked):
    f, other = linked
    read_writes_nothing(f, other, MIB)


def test_serve_refuses_a_hard_linked_data_file(linked):
    """`serve --data` is written as a file target is."""
    from ssdlab.serve.server import check_data

    f, _ = linked
    with pytest.raises(ValueError, match=f"refusing --data {f}: {f} has 2 names"):
        check_data(f, MIB, str(f))
