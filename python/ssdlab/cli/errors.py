"""How the `ssdlab` command reports problems: a user error is one line and exit status 2
(checked before anything runs); a run that failed after it started is exit 1 with the run
named; warnings are `ssdlab: warning: ...` lines; an interrupted run exits 130 or 143.
docs/cli.md "Errors" is the contract."""

from __future__ import annotations

import os
import sqlite3
import sys
from contextlib import contextmanager
from typing import Iterator

import typer
from .. import interrupts
from ..errors import UserError, one_line, printable
from ..runner import RunFailed, RunInterrupted, StoreWriteFailed
from ..store import StoreError

EXIT_USER = 2
EXIT_INTERRUPTED = 130  # Ctrl-C (SIGINT)
EXIT_TERMINATED = 143  # SIGTERM: stopped the same way as Ctrl-C


@contextmanager
def warnings_as_lines() -> Iterator[None]:
    """Python warnings (unreadable fio or telemetry fields, ...) as `ssdlab: warning: ...`
    lines on stderr, each once."""
    import warnings

    def show(message, category, filename, lineno, file=None, line=None) -> None:
        typer.echo(f"ssdlab: warning: {printable(one_line(Exception(str(message))))}", err=True)

    with warnings.catch_warnings():  # the default filters: each ssdlab warning once
        warnings.showwarning = show
        yield


def fail(msg: str, code: int = EXIT_USER) -> None:
    # an error may quote a device's or a drive host's words, or a stored run's: no control
    # character of theirs reaches the terminal
    typer.echo(f"ssdlab: error: {printable(msg, keep=chr(10))}", err=True)
    raise typer.Exit(code)


@contextmanager
def user_errors() -> Iterator[None]:
    """User mistakes become one line on stderr and exit status 2, never a traceback."""
    try:
        yield
    except RunFailed as e:  # a run that started: not the user's input (that was checked)
        if os.environ.get("SSDLAB_DEBUG") and e.exit_code != EXIT_USER:
            raise e.error from None
        fail(run_failed_line(e), e.exit_code)
    except StoreWriteFailed as e:
        fail(one_line(e), 1)
    except (ValueError, StoreError, UserError) as e:
        fail(one_line(e))
    except sqlite3.OperationalError as e:  # not damage: a store that cannot be written now (read-only, locked, full)
        fail(f"the results store cannot be used: {one_line(e)}; check --db (a store you may write, "
             "on a filesystem with room)")
    except sqlite3.DatabaseError as e:  # a read of a damaged store outside Store's guards
        fail(f"the results store is damaged ({one_line(e)}); recover what is left with "
             "`sqlite3 STORE .recover | sqlite3 recovered.sqlite` (STORE: the --db given, or the default "
             "store) and use --db recovered.sqlite")
    except ImportError as e:
        hint = " (is the simulator built? run `make build`)" if "_sim" in str(e) else ""
        fail(f"{one_line(e)}{hint}")
    except RunInterrupted as e:
        typer.echo(f"ssdlab: {e}", err=True)
        raise typer.Exit(interrupted_status())
    except (typer.Exit, typer.Abort, SystemExit):
        raise
    except KeyboardInterrupt:  # Ctrl-C or SIGTERM before a run began (a run's is RunInterrupted)
        typer.echo("ssdlab: interrupted", err=True)
        raise typer.Exit(interrupted_status())
    except BrokenPipeError:  # `ssdlab ... | head`: the reader left; stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        raise typer.Exit(141)
    except Exception as e:
        if os.environ.get("SSDLAB_DEBUG"):
            raise
        fail(unexpected_line(e), 1)


def unexpected_line(e: BaseException) -> str:
    """The line of an error nothing expected (a bug, a worker process that died)."""
    return f"{type(e).__name__}: {one_line(e)} (set SSDLAB_DEBUG=1 for the traceback)"


def run_failed_line(e: RunFailed) -> str:
    hint = "" if e.exit_code == EXIT_USER else " (set SSDLAB_DEBUG=1 for the traceback)"
    return f"{one_line(e)}{hint}"


_told = {"interrupted": False}


def interrupted_status() -> int:
    """The exit status of a command whose interruption it has just reported in its line."""
    _told["interrupted"] = True
    return EXIT_TERMINATED if interrupts.terminated() else EXIT_INTERRUPTED


def told_interruption() -> None:
    """The interruption was reported by the command's own lines (a fleet's members, each its
    `run N interrupted; ...`): no `ssdlab: interrupted` after them."""
    _told["interrupted"] = True


def untold_interruption(rv: object) -> bool:
    """typer turns a Ctrl-C in its own code (parsing the arguments, before a command
    begins) into a bare status 130; the command then reported nothing."""
    return rv in (EXIT_INTERRUPTED, EXIT_TERMINATED) and not _told["interrupted"]


def new_command() -> None:
    _told["interrupted"] = False


# SIGTERM (`kill`, systemd, a CI job's timeout) stops a run the way Ctrl-C does: the
# running phase is cut short (fio gets SIGINT and writes its logs), what was recorded is
# kept, the run is `interrupted`, and the exit status is 143 (interrupts.py).
sigterm_interrupts = interrupts.handled
