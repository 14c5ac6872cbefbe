"""A second local account (`nobody`, through runuser) playing another user: the tests that
plant links or make directories as someone else, and the sticky and root-only directories
they work in."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

NOBODY = "nobody"
needs_other_user = pytest.mark.skipif(
    os.geteuid() != 0 or not shutil.which("runuser"), reason="needs root and runuser (a second account)")


def as_nobody(*cmd: str) -> None:
    subprocess.run(["runuser", "-u", NOBODY, "--", *cmd], check=True, capture_output=True, timeout=60)


@pytest.fixture
def sticky():
    """A directory anyone may add to, as /tmp (mode 1777)."""
    d = Path(tempfile.mkdtemp(prefix="ssdlab-sticky-", dir="/tmp"))
    os.chmod(d, 0o1777)
    try:
        yield d
    finally:
        shutil.rmtree(d, ignore_errors=True)


@pytest.fixture
def secrets_dir(tmp_path) -> Path:
    """A directory only root may enter, holding a file."""
    d = tmp_path / "root-only"
    d.mkdir(mode=0o700)
    (d / "key").write_text("ROOT")
    return d
