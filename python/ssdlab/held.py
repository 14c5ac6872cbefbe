"""A finished test that waits to be stored: a parallel review (or `pts`) stores its runs in
test order (review.run_parallel), so a test whose workers are done before an earlier test's
waits for it. Meanwhile it is held in a pending file (pending.py's format, next to the
store: `<store>.<test>-<time>.pending.json`), written at once and removed once the test is
stored. A review killed outright (SIGKILL, the machine going down) stores nothing more, but
its held files stay for `ssdlab results import FILE`.

The stored run takes the file's token (the secret only the file carries), so a file left by
a kill just after its run was stored adds nothing when imported, and one left by a kill
while the run was written completes that run (pending.import_file)."""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

from . import interrupts
from .methodology import Options
from .pending import Pending
from .phase import PhaseResult
from .runner import DriveOutcome, Hooks, Recorder, StoreWriteFailed, engine_versions, run_drive
from .store import Store, now
from .targets.base import Target


class _Holding(Recorder):
    """A run's writes (run_drive's, so the document is what run_test would store) into its
    pending document alone: nothing goes to the store, and the file is saved once, whole."""

    def __init__(self, store: Store, run: dict):
        super().__init__(store, 0, run)
        self.pending = Pending(store.path, dict(run, id=None))  # no run id until it is stored

    def _write(self, fn: Callable[[], Any], keep: Callable[[Pending], object], what: str,
               raise_: bool = True) -> Any:
        assert self.pending is not None
        keep(self.pending)
        return None

    def checkpoint(self, rd: int | None, seq: int, res: PhaseResult) -> None:
        pass  # its phases are finished already


@dataclass
class Held:
    token: str  # for the run that stores the test (run_test's `token`)
    file: Path | None  # None: no place took it (the test is held in memory alone)

    def release(self) -> None:
        """The test is stored (or the review ends without storing it, as it always did)."""
        if self.file is not None:
            try:
                self.file.unlink()
            except OSError:
                pass  # gone already: nothing to remove
            self.file = None


def hold(store: Store, test: str, drives: Sequence[tuple[str, Target]], opts: Options, args: dict,
         testbed: str | None) -> Held:
    """`test` on `drives` (targets that hand back what was computed elsewhere:
    detached.Replay), recorded as run_test would store it, into a new pending file."""
    token = secrets.token_hex(16)
    rec = _Holding(store, {"test": test, "created": now(), "token": token, "args": args, "testbed": testbed,
                           "engine_version": engine_versions([t for _, t in drives])})
    outcomes: list[DriveOutcome] = []
    with interrupts.shielded():  # a Ctrl-C stores the test instead: no file left half written
        try:
            for pos, (spec, target) in enumerate(drives):
                run_drive(rec, pos, spec, target, test, opts, Hooks(), outcomes)
        except Exception as e:  # as run_test records a failed run
            rec.finish_run("failed", f"{type(e).__name__}: {e}")
        else:
            rec.finish_run("complete")
        assert rec.pending is not None
        try:
            return Held(token, rec.pending.save())
        except OSError:  # no place for it: the review goes on as before
            return Held(token, None)


def keep_waiting(failure: StoreWriteFailed, waiting: dict[str, Held]) -> StoreWriteFailed:
    """The store failed (`failure` says where that run went): the tests that waited keep
    their files, and the line names them (the store cannot take them now either)."""
    kept = [(test, h.file) for test, h in waiting.items() if h.file is not None]
    if not kept:
        return failure
    for h in waiting.values():
        h.file = None  # kept: nothing removes it now
    files = ", ".join(f"{f} ({test})" for test, f in kept)
    one = len(kept) == 1
    return type(failure)(f"{failure}; the finished test{'' if one else 's'} that waited to be stored "
                         f"{'is' if one else 'are'} saved to {files}: once the store can be written, "
                         "`ssdlab results import FILE` for each")
