"""An input path that is no file to read is said so one way everywhere: "not a regular
file" when something else is there (a directory, FIFO or device), the input's own "no such
file" when nothing is; one helper (errors.file_problem) decides which."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from ssdlab.errors import NOT_A_FILE, UserError, file_problem

PKG = Path(__file__).resolve().parents[2] / "python" / "ssdlab"


def test_file_problem_tells_a_missing_path_from_one_that_is_no_file(tmp_path):
    f = tmp_path / "f.toml"
    f.write_text("")
    (tmp_path / "link").symlink_to(f)
    (tmp_path / "dangling").symlink_to(tmp_path / "gone")
    assert file_problem(f) is None and file_problem(tmp_path / "link") is None
    assert file_problem(tmp_path) == NOT_A_FILE
    assert file_problem(tmp_path / "gone") == "no such file"
    assert file_problem(tmp_path / "dangling", "not found") == "not found"


def test_every_input_says_it_through_the_helper(tmp_path):
    from ssdlab.methodology import fio_run, trace
    from ssdlab.targets.spec import parse_drive

    gone = tmp_path / "gone.toml"
    (tmp_path / "dir.toml").mkdir()
    with pytest.raises(ValueError, match="not a regular file"):
        parse_drive(str(tmp_path / "dir.toml"))
    with pytest.raises(ValueError, match=f"profile file '{gone}' not found"):
        parse_drive(str(gone))
    for options, values, missing in ((trace.TraceFlags(), {"trace": None}, "no such file"),
                                     (fio_run.FioFlags(), {"job": None}, "no such job file")):
        key = next(iter(values))
        defaults = {o.name: o.default for o in options.cli}
        for path, said in ((tmp_path, NOT_A_FILE), (gone, missing)):
            with pytest.raises(UserError, match=re.escape(said)):
                options.parse({**defaults, key: path}, console=None)


def test_no_module_but_errors_chooses_between_the_two_lines():
    """The choice is the helper's: no other module tests a path's existence to pick
    NOT_A_FILE."""
    for path in PKG.rglob("*.py"):
        if path.name == "errors.py" and path.parent == PKG:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.IfExp) and "NOT_A_FILE" in ast.unparse(node):
                raise AssertionError(f"{path.relative_to(PKG)}:{node.lineno}: use errors.file_problem")
