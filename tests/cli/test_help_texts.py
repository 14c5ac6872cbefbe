"""What `ssdlab COMMAND --help` says an option does matches what the command does with it
(docs/cli.md): every test a command runs that reads --seconds is named with its default,
and a subcommand group names every subcommand."""

from __future__ import annotations

from typing import Any

import typer

from ssdlab import methodology
from ssdlab.cli import app

COMMAND = typer.main.get_command(app)


def command(*path: str) -> Any:
    """A command of the CLI as click sees it (typer's own copy of click)."""
    cmd: Any = COMMAND
    for name in path:
        cmd = cmd.commands[name]
    return cmd


def option_help(cmd: Any, flag: str) -> str:
    for p in cmd.params:
        if flag in p.opts:
            return p.help or ""
    raise AssertionError(f"{cmd.name} has no {flag}")


def timed(tests: dict[str, methodology.Test]) -> dict[str, float]:
    return {n: t.default_seconds for n, t in tests.items() if t.default_seconds is not None}


def test_run_and_sweep_name_the_timed_step_of_every_test_they_run():
    # low-qd-write (180 s) and fingerprint (1800 s) are run by `run` and `sweep`, not `review`
    assert {"low-qd-write", "fingerprint"} <= set(timed(methodology.ALL))
    for name in ("run", "sweep"):
        text = option_help(command(name), "--seconds")
        for test, default in timed(methodology.ALL).items():
            assert f"{test}: " in text and f"(default {default} s)" in text, (name, test, text)


def test_review_names_the_timed_step_of_its_own_tests_only():
    text = option_help(command("review"), "--seconds")
    for test in timed(methodology.TESTS):
        assert f"{test}: " in text
    not_reviewed = set(methodology.ALL) - set(methodology.TESTS)
    assert "fingerprint" in not_reviewed
    for test in not_reviewed:
        assert f"{test}: " not in text, test
        assert f"{test}: " not in option_help(command("review"), "--interval"), test
    assert "fingerprint: " in option_help(command("run"), "--interval")


def test_the_results_group_names_every_subcommand():
    group = command("results")
    assert group.commands
    for name in group.commands:
        assert name in (group.help or ""), name


def test_serve_says_its_destroy_data_is_for_the_data_file():
    text = option_help(command("serve"), "--destroy-data")
    assert "--data" in text and "--drive" not in text
