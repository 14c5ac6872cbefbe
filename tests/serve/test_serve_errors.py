"""When nbdkit fails, what it said is kept whole: an error of several lines is stored
(and printed) as one line holding its last lines, bounded in size and with control
characters shown as '?', whether nbdkit stops before serving or while it serves."""

from __future__ import annotations

import json
import os
import sqlite3
import sys
from pathlib import Path

import clirun
import pytest

from ssdlab.serve import nbdkit
from nbdserve import needs_nbd

ERROR = ["nbdkit: ssdsim[1]: error: the profile is not valid:",
         "  nand.channels: must be at least 1 (given 0)",
         "  slc.dynamic_max_gb: larger than the drive",
         "nbdkit: error: ssdsim: plugin failed to load"]

FAKE = """#!{python}
import os, socket, sys, time
if "--version" in sys.argv:
    print("nbdkit 1.32.5"); sys.exit(0)
if os.environ["FAKE_NBDKIT"] == "serving":  # serve, then fail
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(sys.argv[sys.argv.index("-U") + 1])
    sock.listen()
    with open(sys.argv[sys.argv.index("-P") + 1], "w") as f:
        f.write(str(os.getpid()))
    time.sleep(1.5)
sys.stderr.write("nbdkit: starting\\n" + {error!r} + "\\n")
sys.exit(1)
"""


def fake_nbdkit(tmp_path: Path) -> Path:
    d = tmp_path / "bin"
    d.mkdir()
    f = d / "nbdkit"
    f.write_text(FAKE.format(python=sys.executable, error="\n".join(ERROR)))
    f.chmod(0o755)
    return d


def stored_error(db: Path) -> str:
    with sqlite3.connect(db) as c:
        return c.execute("SELECT error FROM runs").fetchone()[0]


@needs_nbd
@pytest.mark.parametrize("when", ["starting", "serving"])
def test_a_multi_line_nbdkit_error_is_kept_whole(tmp_path, when):
    env = clirun.environ(PATH=f"{fake_nbdkit(tmp_path)}:{os.environ['PATH']}", FAKE_NBDKIT=when)
    db = tmp_path / "r.sqlite"
    r = clirun.cli("serve", "sim:sn520-128", "--socket", str(tmp_path / "d.sock"), "--db", str(db), "--json",
                   env=env, timeout=120)
    assert r.returncode != 0
    said = " / ".join(x.strip() for x in ERROR)
    error = stored_error(db)
    assert said in error and "\n" not in error, error
    if when == "starting":
        assert error == f"nbdkit did not start: nbdkit stopped before serving: nbdkit: starting / {said}"
        assert r.stderr.count("\n") == 1 and said in r.stderr, r.stderr
    else:
        assert error.startswith("nbdkit exited (1): "), error
        doc = json.loads(r.stdout.splitlines()[-1])
        assert doc.get("status") == "failed", doc


def test_what_is_kept_is_bounded_and_printable(tmp_path):
    log = tmp_path / "nbdkit.log"
    log.write_bytes(b"x" * 10_000_000 + b"\n" + b"\n".join(f"line {i} \x1b[31mred".encode() for i in range(20)) + b"\n\n")
    words = nbdkit.last_words(log)
    assert words == " / ".join(f"line {i} ?[31mred" for i in range(20 - nbdkit.LAST_LINES, 20))
    log.write_bytes(b"y" * 100_000)  # one endless line: its end
    words = nbdkit.last_words(log)
    assert len(words) == nbdkit.LAST_CHARS and words.endswith("y" * 100) and words.startswith("...")
    assert nbdkit.last_words(tmp_path / "none.log") == ""
