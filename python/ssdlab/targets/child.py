"""The processes a real-drive run starts (fio, blkdiscard, nvme format): they die with
ssdlab, stop the way fio likes, and leave no work directory behind. And the Pythons ssdlab
starts (a fleet's runs, serve's keeper, worker processes): never with the working
directory on their module path (`python_module`, SAFE_PATH_ENV)."""

from __future__ import annotations

import glob
import os
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
from typing import Callable

WORKDIR_PREFIX = "ssdlab-fio-"
# Python puts the working directory first on the module path of `python -m` and `-c` (as
# multiprocessing's spawned workers are started): a module another user left there (in
# /tmp, say) would be imported first, as whoever runs ssdlab, root included. -P, or this
# variable in the child's environment, leaves it out (Python 3.11).
SAFE_PATH_ENV = "PYTHONSAFEPATH"


def python_module(module: str, *args: str) -> list[str]:
    """The command running `python -m module args` in this interpreter, without the
    working directory on its module path."""
    return [sys.executable, "-P", "-m", module, *args]

_prctl: Callable[..., int] | None
try:
    import ctypes

    _prctl = ctypes.CDLL(None, use_errno=True).prctl
except (OSError, AttributeError):  # not Linux
    _prctl = None


def die_with_parent() -> Callable[[], None]:
    """A preexec_fn for the child: SIGTERM when ssdlab dies (PR_SET_PDEATHSIG). Called in
    ssdlab, so the child knows its parent's pid: if ssdlab was killed between the fork and
    the prctl, no signal would ever come, so the child exits instead of running fio."""
    parent = os.getpid()

    def preexec() -> None:
        if _prctl is not None:
            _prctl(1, signal.SIGTERM, 0, 0, 0)
            if os.getppid() != parent:
                os._exit(1)
    return preexec


def run_to_completion(cmd: list[str]) -> tuple[subprocess.CompletedProcess, bool]:
    """Run a command to completion even across Ctrl-C (a half-done discard or format is
    worse than a late stop); returns (result, interrupted)."""
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         start_new_session=True)
    interrupted = False
    while True:
        try:
            out, err = p.communicate()
            break
        except KeyboardInterrupt:
            interrupted = True
    return subprocess.CompletedProcess(cmd, p.returncode, out, err), interrupted


def stop(proc: subprocess.Popen, grace_s: float = 20.0) -> None:
    """Stop fio the way it likes (SIGINT: it finishes its logs and prints its report),
    then harder if it does not exit."""
    if proc.poll() is not None:
        return
    for sig, wait in ((signal.SIGINT, grace_s), (signal.SIGTERM, 5.0), (signal.SIGKILL, 5.0)):
        try:
            proc.send_signal(sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=wait)
            return
        except subprocess.TimeoutExpired:
            continue
        except KeyboardInterrupt:
            continue


def clean_workdirs() -> None:
    """Remove the fio work directories of ssdlab processes that are gone (SIGKILLed): our
    own (made by mkdtemp, mode 0700); a directory of that name another user made in a
    shared /tmp is theirs, and left alone."""
    for d in glob.glob(os.path.join(tempfile.gettempdir(), f"{WORKDIR_PREFIX}*-*")):
        pid = os.path.basename(d)[len(WORKDIR_PREFIX):].split("-", 1)[0]
        if not pid.isdigit() or os.path.exists(f"/proc/{pid}"):
            continue
        try:
            st = os.lstat(d)
        except OSError:
            continue
        if stat.S_ISDIR(st.st_mode) and st.st_uid == os.geteuid():
            shutil.rmtree(d, ignore_errors=True)
