"""An SQLite error that escapes the store's own guards (cli/errors.py user_errors): one line,
exit status 2, that says what it is. A store that cannot be written now (read-only, locked,
full) is not called damaged, and the damaged store's line gives a command that can be run."""

import sqlite3

import pytest
import typer

from ssdlab.cli.errors import user_errors


def line_for(exc: Exception, capsys) -> str:
    with pytest.raises(typer.Exit) as e:
        with user_errors():
            raise exc
    assert e.value.exit_code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    return err


def test_a_store_that_cannot_be_written_is_not_called_damaged(capsys):
    err = line_for(sqlite3.OperationalError("attempt to write a readonly database"), capsys)
    assert err == ("ssdlab: error: the results store cannot be used: attempt to write a readonly database; "
                   "check --db (a store you may write, on a filesystem with room)\n")


def test_a_damaged_store_is_named_once_with_a_recovery_command(capsys):
    err = line_for(sqlite3.DatabaseError("database disk image is malformed"), capsys)
    assert err.startswith("ssdlab: error: the results store is damaged (database disk image is malformed); ")
    assert "`sqlite3 STORE .recover | sqlite3 recovered.sqlite` (STORE: the --db given" in err
    assert "results store the results store" not in err
