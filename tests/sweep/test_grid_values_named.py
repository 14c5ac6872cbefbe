"""A bad value in a grid file is named by the file and its key (`grid file g.toml: seconds =
-1: ...`), not as the flag the user never typed; the same value on the command line is
named as the flag."""

from __future__ import annotations

import pytest

from clirun import cli
from ssdlab import sweep as sw


@pytest.mark.parametrize("text, line", [
    ("seconds = -1", "seconds = -1: must be above 0"),
    ("repeat = 0", "repeat = 0: must be 1 to 100"),
    ("interval = 99999", "interval = 99999: must be 0 to 3600"),
    ("spare = [150]", "spare = [150]: must be at least 0 and below 100"),
    ("spare = [5, 5.0]", "spare = [5, 5.0]: "),
    ("seed = -5", "seed = -5: must be 0 to 2**64-1"),
    ('testbed = "a\\nb"', 'testbed = "a\\nb": a tag is one line'),
])
def test_a_grid_files_bad_value_is_named_by_its_key(tmp_path, text, line):
    grid = tmp_path / "g.toml"
    grid.write_text(text + "\n")
    with pytest.raises(ValueError) as e:
        sw.check(sw.make_grid("quick", ["sim:tlc-256"], [], [], grid))
    assert str(e.value).startswith(f"grid file {grid}: {line}"), str(e.value)


def test_the_same_value_on_the_command_line_is_named_as_the_flag(tmp_path):
    with pytest.raises(ValueError, match=r"^--seconds -1: must be above 0"):
        sw.check(sw.make_grid("quick", ["sim:tlc-256"], [], [], None, seconds=-1))


def test_the_command_says_it_in_one_line_and_stores_nothing(tmp_path):
    grid = tmp_path / "g.toml"
    grid.write_text("seconds = -1\n")
    r = cli("sweep", "fill", "--drive", "sim:tlc-256", "--grid", str(grid), "--db", str(tmp_path / "r.sqlite"))
    assert r.returncode == 2
    assert r.stderr.strip().splitlines() == [
        f"ssdlab: error: grid file {grid}: seconds = -1: must be above 0 and at most 1e+07 (116 days)"]
    assert not (tmp_path / "r.sqlite").exists()
