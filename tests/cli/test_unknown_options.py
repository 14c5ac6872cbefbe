"""An unknown option is one line naming it, the command it was given to and that command's
help, with a suggestion only when an option of the command is really close; exit status 2.
In a real process: the one line is the `ssdlab` command's, not click's."""

from __future__ import annotations

import pytest

from clirun import cli


def one_error_line(*args: str) -> str:
    p = cli(*args, timeout=60)
    assert p.returncode == 2 and p.stdout == "", p.stderr
    lines = p.stderr.splitlines()
    assert len(lines) == 1, p.stderr
    return lines[0]


@pytest.mark.parametrize("args, command", [
    (["run", "fill", "--bogus"], "run fill"),
    (["run", "--bogus", "--drive", "sim:tlc-256", "consistency"], "run consistency"),
    (["run", "--bogus"], "run"),
    (["sweep", "consistency", "--bogus"], "sweep consistency"),
    (["review", "--bogus"], "review"),
    (["fit", "--bogus"], "fit"),
    (["validate", "--bogus"], "validate"),
    (["drives", "--bogus"], "drives"),
    (["pts", "--bogus"], "pts"),
    (["results", "--bogus"], "results"),
    (["results", "list", "--bogus"], "results list"),
    (["--bogus"], ""),
])
def test_an_unknown_option_names_the_command_and_its_help(args, command):
    words = f"ssdlab {command}".strip()
    assert one_error_line(*args) == (f"ssdlab: error: no such option --bogus for `{words}`; "
                                     f"see `{words} --help`")


@pytest.mark.parametrize("args, command", [
    (["compare", "1", "--bogus"], "compare"),
    (["report", "--bogus", "-o", "{tmp}/rep"], "report"),
    (["results", "show", "--bogus"], "results show"),
    (["results", "export", "1", "--bogus"], "results export"),
])
def test_commands_taking_run_ids_name_it_the_same_before_the_store(tmp_path, args, command):
    """These let `-1` (the latest run) through as an argument; an unknown option is still
    named, whatever the store (here none)."""
    args = [a.replace("{tmp}", str(tmp_path)) for a in args]
    line = one_error_line(*args, "--db", str(tmp_path / "none.sqlite"))
    assert line == f"ssdlab: error: no such option --bogus for `ssdlab {command}`; see `ssdlab {command} --help`"
    assert not (tmp_path / "rep").exists()


@pytest.mark.parametrize("args, meant", [
    (["run", "fill", "--spar", "3"], "--spare"),
    (["run", "fill", "--seconds=5", "--round", "2"], "--rounds"),
    (["results", "show", "-1", "--jsn"], "--json"),
])
def test_a_close_option_is_suggested(tmp_path, args, meant):
    line = one_error_line(*args, "--db", str(tmp_path / "none.sqlite"))
    assert f"(did you mean {meant}?)" in line, line
    assert "Possible options" not in line


def test_no_unrelated_option_is_suggested():
    line = one_error_line("run", "fill", "--bogus")
    assert "did you mean" not in line and "Possible options" not in line, line


@pytest.mark.parametrize("args, line", [
    (["bogus"], "no such command bogus for `ssdlab`; see `ssdlab --help`"),
    (["reveiw"], "no such command reveiw for `ssdlab` (did you mean review?); see `ssdlab --help`"),
    (["results", "shwo", "1"],
     "no such command shwo for `ssdlab results` (did you mean show?); see `ssdlab results --help`"),
])
def test_an_unknown_command_reads_as_an_unknown_option_does(args, line):
    assert one_error_line(*args) == f"ssdlab: error: {line}"
