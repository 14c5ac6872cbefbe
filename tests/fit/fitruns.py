"""What the fit tests share: a fingerprint run of a small simulated drive in a store, and
a fit stopped from inside by a signal, as Ctrl-C or SIGTERM stop it."""

from __future__ import annotations

import contextlib
import json
import os
import signal
from pathlib import Path
from typing import Any, Iterator, NoReturn

from clirun import cli
from drives import set_flags


def fingerprint_run(tmp_path_factory, drive: list[str], interval: str) -> tuple[Path, int]:
    """(store, run id) of a 10 s fingerprint of sim:tlc-256 with the overrides `drive`."""
    d = tmp_path_factory.mktemp("fp")
    db = d / "r.sqlite"
    r = cli("run", "fingerprint", "--drive", "sim:tlc-256", *set_flags(drive), "--seconds", "10", "--interval",
            interval, "--db", str(db), "--json", check=True)
    return db, json.loads(r.stdout)["run_id"]


def evidence_of(fingerprint: tuple[Path, int]) -> Any:
    """The fit's evidence of a stored run (`fingerprint_run`'s (store, run id))."""
    from ssdlab.fit import evidence
    from ssdlab.store import Store

    db, rid = fingerprint
    store = Store(db)
    try:
        return evidence.from_runs(store, [rid])
    finally:
        store.close()


def signal_self(signum: int) -> NoReturn:
    """Deliver `signum` to this process and wait for its handler to end the call."""
    os.kill(os.getpid(), signum)
    while True:
        pass


@contextlib.contextmanager
def handlers_kept() -> Iterator[None]:
    """The SIGINT and SIGTERM handlers as they were, after a CLI call in this process."""
    handlers = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for s, h in handlers.items():
            signal.signal(s, h)
