"""A profile file that is no profile's TOML (broken syntax, nesting no profile has, one
endless line) is one short line naming the file, whatever its size: never a quote of
its text (which a 100,000-deep line would fill)."""

from __future__ import annotations

import pytest

from clirun import cli
from ssdlab.targets.spec import parse_drive

SHORT = 200  # characters: the file's name and what is wrong, no quote of its text

BAD = [
    ("a = " + "[" * 100_000 + "]" * 100_000 + "\n", "nested too deeply"),
    ("a = " + "{ b = " * 100_000 + "1" + " }" * 100_000 + "\n", "nested too deeply"),
    # deep enough for no profile, shallow enough for a parser's recursion
    ("a = " + "[" * 100 + "]" * 100 + "\n", "nested too deeply"),
    ('name = "' + "x" * 100_000 + "\n", "not valid TOML"),
    ("[nand\nchannels = 8\n", "not valid TOML"),
]


@pytest.mark.parametrize("text, words", BAD, ids=["deep arrays", "deep tables", "100 deep", "endless string",
                                                  "broken header"])
def test_a_bad_profile_file_is_one_short_line_naming_it(tmp_path, text, words):
    p = tmp_path / "p.toml"
    p.write_text(text)
    with pytest.raises(ValueError) as e:
        parse_drive(str(p)).profile_text()
    msg = str(e.value)
    assert msg.startswith(f"profile file '{p}'") and words in msg, msg[:300]
    assert "\n" not in msg and len(msg) < SHORT + len(str(p)), msg[:300]


def test_the_command_says_it_in_one_line_exit_2(tmp_path):
    p = tmp_path / "deep.toml"
    p.write_text("a = " + "[" * 100_000 + "]" * 100_000 + "\n")
    r = cli("run", "fill", "--drive", str(p), "--db", str(tmp_path / "r.sqlite"), timeout=60)
    assert r.returncode == 2 and r.stdout == "", r.stderr[:300]
    assert r.stderr.count("\n") == 1 and len(r.stderr) < SHORT + len(str(p)), r.stderr[:300]
    assert f"profile file '{p}'" in r.stderr and "nested too deeply" in r.stderr
    assert not (tmp_path / "r.sqlite").exists()


def test_a_profile_file_of_a_built_in_reads_as_before(tmp_path):
    p = tmp_path / "mine.toml"
    text = parse_drive("sim:tlc-256").profile_text()
    p.write_text(text)
    assert parse_drive(str(p)).profile_text() == text
