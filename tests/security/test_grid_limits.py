"""Sweep grids that must be refused before anything is built, run or stored: a grid too
large to build (its points are counted first), and grid files whose values have the wrong
types or nest too deeply (checked against the grid file's schema). Each is one line, exit
status 2, no store, within a bounded memory."""

from __future__ import annotations

from pathlib import Path

import pytest

from bounded import refused, run_cli, stored_runs

SWEEP = ["sweep", "quick", "--drive", "sim:sn520-128", "--jobs", "1"]


def test_billion_point_grid_is_counted_not_built(tmp_path: Path) -> None:
    values = ",".join(str(i) for i in range(1, 1001))
    db = tmp_path / "r.sqlite"
    r = run_cli(*SWEEP, "--set", f"nand.channels={values}", "--set", f"nand.dies_per_channel={values}",
                "--set", f"nand.planes={values}", "--db", str(db), timeout=60)
    refused(r, "1000000000 points", "at most 10000")
    assert stored_runs(db) == 0


GRID_FILES = [
    ('seconds = "abc"\n', ["seconds", "must be a number"]),
    ("seconds = 1979-05-27T07:32:00Z\n", ["seconds", "must be a number"]),
    ('seed = "x"\n', ["seed", "whole number"]),
    ("repeat = 1.5\n", ["repeat = 1.5", "whole number"]),
    ("testbed = [1, 2]\n", ["testbed", "must be a string"]),
    ("interval = true\n", ["interval = true", "must be a number"]),
    ("seconds = -1\n", ["g.toml: seconds = -1"]),
    ("[set]\nnand.channels = [{ a = 1 }]\n", ["set.nand.channels", "string, number or boolean"]),
    ("[set.a.b.c.d.e.f.g.h.i]\nx = 1\n", ["nests deeper"]),
    ("a = " + "[" * 5000 + "]" * 5000 + "\n", ["nested too deeply"]),
    ("[set]\na = " + "{ x = " * 3000 + "1" + " }" * 3000 + "\n", ["nested too deeply"]),
]


@pytest.mark.parametrize("text, words", GRID_FILES, ids=[t[:30] for t, _ in GRID_FILES])
def test_grid_file_of_wrong_types_is_one_line(tmp_path: Path, text: str, words: list[str]) -> None:
    (tmp_path / "g.toml").write_text(text)
    db = tmp_path / "r.sqlite"
    r = run_cli(*SWEEP, "--grid", str(tmp_path / "g.toml"), "--db", str(db), timeout=60)
    refused(r, *words)
    assert stored_runs(db) == 0


def test_grid_file_that_is_no_file_is_one_line(tmp_path: Path) -> None:
    """/dev/zero never ends and a FIFO waits for a writer: neither is read."""
    import os

    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    big = tmp_path / "big.toml"
    big.write_text("# " + "x" * (1 << 20) + "\n")
    db = tmp_path / "r.sqlite"
    for f, words in (("/dev/zero", ["not a regular file"]), (str(fifo), ["not a regular file"]),
                     (str(big), ["more than the 1048576"])):
        r = run_cli(*SWEEP, "--grid", f, "--db", str(db), timeout=60)
        refused(r, f"grid file {f}", *words)
    assert stored_runs(db) == 0
