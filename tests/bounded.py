"""The `ssdlab` command in a child process under a memory limit: for inputs that must be
refused (or run) without exhausting memory. The child's address space is capped with
RLIMIT_AS, so a command that would grow without bound fails there (MemoryError, or an
abort) instead of taking the machine; a time limit stops one that would spin."""

from __future__ import annotations

import resource
import sqlite3
import subprocess
from pathlib import Path

import clirun

MiB = 2**20
# Python, numpy and the simulator's tables of a small profile fit well within this
DEFAULT_LIMIT = 1536 * MiB


def run_cli(*args: str, limit: int = DEFAULT_LIMIT, timeout: float = 240,
            cwd: Path | None = None) -> subprocess.CompletedProcess:
    """`ssdlab ARGS` with its address space capped at `limit` bytes. A command still
    running after `timeout` seconds raises subprocess.TimeoutExpired (the test fails)."""

    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    return clirun.cli(*args, env=clirun.environ(COLUMNS="200"), timeout=timeout, preexec_fn=cap, cwd=cwd)


def refused(r: subprocess.CompletedProcess, *words: str) -> str:
    """Assert `r` is one error line, exit status 2, no traceback, naming `words`."""
    err = r.stderr.strip()
    assert r.returncode == 2, (r.returncode, err[-2000:])
    assert "Traceback" not in err, err[-2000:]
    lines = [x for x in err.splitlines() if x.startswith("ssdlab: error:")]
    assert len(lines) == 1, err[-2000:]
    for w in words:
        assert w in lines[0], (w, lines[0])
    return lines[0]


def stored_runs(db: Path) -> int:
    """Runs in the store at `db` (0 when it was never created)."""
    if not db.exists():
        return 0
    c = sqlite3.connect(db)
    try:
        return c.execute("SELECT count(*) FROM runs").fetchone()[0]
    except sqlite3.OperationalError:
        return 0
    finally:
        c.close()
