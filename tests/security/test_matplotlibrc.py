"""matplotlib reads a `matplotlibrc` in the working directory before any other: one another
user left in /tmp restyled (or could hide the lines of, or break) the PNG figures of a
report whoever ran ssdlab there drew, root included. The figures are drawn from
matplotlib's own defaults and ssdlab's style only."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import clirun
from otheruser import as_nobody, needs_other_user, sticky  # noqa: F401 (fixtures)

pytestmark = needs_other_user
RED = (255, 0, 0)


def test_a_matplotlibrc_in_the_working_directory_is_not_read(sticky: Path, tmp_path: Path) -> None:
    pytest.importorskip("ssdlab._sim")
    image = pytest.importorskip("PIL.Image")
    command = Path(sys.executable).with_name("ssdlab")
    if not command.exists():
        pytest.skip("needs the installed `ssdlab` command")
    src = sticky / "rc.src"
    src.write_text("figure.facecolor: ff0000\naxes.facecolor: ff0000\n")
    as_nobody("cp", str(src), str(sticky / "matplotlibrc"))
    db, out = tmp_path / "r.sqlite", tmp_path / "out"

    def ssdlab(*args: str) -> None:
        r = subprocess.run([str(command), *args], capture_output=True, text=True, timeout=300, cwd=sticky,
                           env=clirun.environ())
        assert r.returncode == 0, r.stderr[-2000:]

    ssdlab("run", "quick", "--drive", "sim:sn520-128", "--seconds", "1", "--repeat", "1", "--db", str(db))
    ssdlab("report", "1", "--db", str(db), "-o", str(out))
    pngs = sorted(out.glob("*.png"))
    assert pngs
    for p in pngs:
        assert image.open(p).convert("RGB").getpixel((2, 2)) != RED, p
