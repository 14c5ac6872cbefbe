"""Ctrl-C (SIGINT) and SIGTERM while a command runs.

- The first one stops the work: a KeyboardInterrupt where the code is (fio gets SIGINT
  and writes its logs, the simulator hands back its partial phase).
- Later ones are noted and ignored: the cleanup that follows (stopping fio, storing the
  partial phase, marking the run `interrupted`) is never cut short, so the exit is
  130/143 with nothing lost, however often the key is pressed. SIGKILL still stops
  everything; such a run then reads as `stale` (store.py).
- Inside `shielded()` (a result being recorded) even the first one waits: it takes
  effect when the block ends, so a finished phase is stored whole.
Python runs signal handlers in the main thread only, so this holds whatever other
threads (fio's output pumps, progress bars) exist. Without `handled()` (library use),
`shielded()` blocks the two signals in the calling thread instead (best effort).
"""

from __future__ import annotations

import signal
import sys
import threading
from contextlib import contextmanager
from typing import Iterator

SIGNALS = (signal.SIGINT, signal.SIGTERM)
_state = {"installed": False, "stopping": False, "terminated": False, "shield": 0,
          "pending": False}


def _handler(signum, frame) -> None:
    if signum == signal.SIGTERM:
        _state["terminated"] = True
    if _state["stopping"]:
        return  # already stopping: let the cleanup finish
    if _state["shield"]:
        _state["pending"] = True
        return
    _state["stopping"] = True
    raise KeyboardInterrupt


def raise_if_stopping() -> None:
    """Before a phase starts: a stop whose KeyboardInterrupt Python swallowed (it landed in a
    destructor: "Exception ignored in ...") still stops the work, here. Main thread only."""
    if _state["stopping"] and not _state["shield"] and threading.current_thread() is threading.main_thread():
        raise KeyboardInterrupt


def terminated() -> bool:
    """Was the stop a SIGTERM (exit status 143 rather than 130)?"""
    return bool(_state["terminated"])


def stopping() -> bool:
    return bool(_state["stopping"])


@contextmanager
def handled(ignore_after_stop: bool = False) -> Iterator[None]:
    """Install the handlers for the duration (main thread only; nested calls are no-ops).
    `ignore_after_stop` (the command's process): once stopping, the signals stay ignored
    after the block, so a late one cannot kill the exit with a traceback."""
    if _state["installed"]:
        yield
        return
    try:
        old = {s: signal.signal(s, _handler) for s in SIGNALS}
    except ValueError:  # not the main thread (embedded use): leave the signals alone
        yield
        return
    _state.update(installed=True, stopping=False, terminated=False, shield=0, pending=False)
    hook = sys.unraisablehook

    def unraisable(u) -> None:
        # the stop landed where Python cannot raise (a destructor): no "Exception ignored"
        # traceback; `raise_if_stopping` stops the work at the next phase instead
        if not (isinstance(u.exc_value, KeyboardInterrupt) and _state["stopping"]):
            hook(u)
    sys.unraisablehook = unraisable
    try:
        yield
    finally:
        sys.unraisablehook = hook
        if ignore_after_stop and _state["stopping"]:
            ignore(SIGNALS)
        else:
            for s, h in old.items():
                signal.signal(s, h)
        # the stop belonged to this block: code run after it in the same process (a library
        # caller, the next test) starts unstopped; `terminated()` stays for the exit status
        _state.update(installed=False, stopping=False, shield=0, pending=False)


def ignore(signals: tuple[signal.Signals, ...]) -> None:
    """Ignore `signals` from now on. One that arrives as its handler changes is reported by
    CPython ("Signal 2 ignored due to race condition", an unraisable error on stderr) where the
    handler would have run; it is ignored, as asked, without that report."""
    late = {f"Signal {int(s)} ignored due to race condition" for s in signals}
    hook = sys.unraisablehook

    def unraisable(u) -> None:
        if not (isinstance(u.exc_value, OSError) and str(u.exc_value) in late):
            hook(u)
    sys.unraisablehook = unraisable
    for s in signals:
        signal.signal(s, signal.SIG_IGN)


@contextmanager
def shielded() -> Iterator[None]:
    """No interrupt inside: one that arrives takes effect when the block ends."""
    if not _state["installed"]:
        try:
            old = signal.pthread_sigmask(signal.SIG_BLOCK, SIGNALS)
        except (ValueError, OSError, AttributeError):
            old = None
        try:
            yield
        finally:
            if old is not None:
                signal.pthread_sigmask(signal.SIG_SETMASK, old)
        return
    _state["shield"] += 1
    try:
        yield
    except BaseException:
        _state["shield"] -= 1
        if not _state["shield"] and _state["pending"]:
            _state["pending"] = False
            _state["stopping"] = True  # the block failed anyway; the error goes on up
        raise
    _state["shield"] -= 1
    if not _state["shield"] and _state["pending"]:
        _state["pending"] = False
        _state["stopping"] = True
        raise KeyboardInterrupt
