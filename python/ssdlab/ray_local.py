"""A local Ray instance of ssdlab's own (`--ray` without an address: executor.RayExecutor),
its user's alone.

- Its files in a private directory (mode 0700, made new for the run in the temporary
  directory, or in /tmp when that one's path is too long for Ray's sockets, and removed
  after the run): Ray keeps its sessions, logs and the raylet's and object store's Unix sockets in
  its temporary directory, which it makes mode 0777, by default `$TMPDIR/ray`, shared by
  every user and used as it is found, another user's included.
- A directory a killed run (SIGKILL: no chance to remove its own) left behind is removed by
  the next instance: a run holds a lock (flock) on its directory for as long as it lives.
- A token of its own: Ray's ports listen on every interface and answer whoever holds the
  cluster's token (running any code as this user). Left to itself Ray reads, or writes
  mode 0644, `~/.ray/auth_token`, readable by anyone who may enter the home directory and
  shared with every cluster of that user; the instance gets a new secret in the
  environment instead (RAY_AUTH_TOKEN, seen by its own processes only), and no file is
  read or written in the home directory.
- Not the working directory: Ray puts the driver's on every worker's module path, before
  the standard library and ssdlab itself, so a module another user left there (in /tmp,
  say) would be imported by the workers as the user who runs ssdlab. ray.init runs in /
  (`outside_working_dir`), for a local instance and a cluster alike."""

from __future__ import annotations

import contextlib
import fcntl
import os
import secrets
import shutil
import tempfile
import time
from typing import Any, Iterator

_TOKEN = secrets.token_hex(32)  # one per process: Ray keeps the first token it reads
# Ray's sockets are DIR/r/session_<date>_<time>_<us>_<pid>/sockets/plasma_store, at most
# 107 bytes: DIR in the temporary directory when that leaves room, else in /tmp
MAX_TMPDIR = 16
_ENV = ("RAY_AUTH_MODE", "RAY_AUTH_TOKEN", "RAY_AUTH_TOKEN_PATH")
PREFIX = "ssdlab-ray-"
# seconds: a directory is locked the moment after it is made, so one unlocked and older than
# this is no live run's
STALE_AFTER = 60.0


class LocalInstance:
    """What ray.init needs to start the instance (`init_kwargs`), and the environment it
    runs in, until `close()` (after ray.shutdown) puts back what was there."""

    def __init__(self) -> None:
        base = tempfile.gettempdir()
        base = base if len(base) <= MAX_TMPDIR else "/tmp"
        remove_stale(base)
        # 0700: Ray's 0777 directories are inside it
        self.dir = tempfile.mkdtemp(prefix=PREFIX, dir=base)
        self.held = _locked(self.dir, wait=True)
        self.saved = {k: os.environ.get(k) for k in _ENV}
        os.environ.pop("RAY_AUTH_TOKEN_PATH", None)
        os.environ.update(RAY_AUTH_MODE="token", RAY_AUTH_TOKEN=_TOKEN)
        _reload()

    def init_kwargs(self) -> dict[str, Any]:
        return {"_temp_dir": os.path.join(self.dir, "r")}

    def close(self) -> None:
        for k, v in self.saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        _reload()
        with contextlib.suppress(OSError):
            shutil.rmtree(self.dir)
        if self.held is not None:
            os.close(self.held)
            self.held = None


@contextlib.contextmanager
def outside_working_dir() -> Iterator[None]:
    """In / for the block (ray.init: what Ray gives its workers as the driver's directory),
    then back in the very directory this process was in, whatever its name is now."""
    here = os.open(".", os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        os.chdir("/")
        yield
    finally:
        os.fchdir(here)
        os.close(here)


def _locked(path: str, wait: bool = False) -> int | None:
    """An open descriptor of the directory `path` holding its lock, or None (a link, not a
    directory, or held by a live run when not waiting)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX if wait else fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return None
    return fd


def remove_stale(base: str) -> None:
    """Remove the private directories of this user's killed runs in `base`: this user's own
    (never another's, nor a link), older than STALE_AFTER, whose lock no live run holds.
    Another user cannot swap such an entry in a sticky directory; shutil.rmtree itself
    follows no link inside."""
    try:
        names = [n for n in os.listdir(base) if n.startswith(PREFIX)]
    except OSError:
        return
    for name in names:
        path = os.path.join(base, name)
        fd = _locked(path)
        if fd is None:
            continue
        try:
            st = os.fstat(fd)
            if st.st_uid == os.geteuid() and time.time() - st.st_mtime >= STALE_AFTER:
                with contextlib.suppress(OSError):
                    shutil.rmtree(path)
        finally:
            os.close(fd)


def _reload() -> None:
    """Make Ray (imported already, perhaps) read the environment's mode and token again:
    it reads them once (Ray 2.60's own `_enable_token_auth` does the same)."""
    from ray._raylet import AuthenticationTokenLoader, Config  # type: ignore[attr-defined]

    Config.initialize("")
    AuthenticationTokenLoader.instance().reset_cache()


__all__ = ["LocalInstance", "outside_working_dir", "remove_stale"]
