"""A local Ray instance of ssdlab's own (`--ray` without an address: executor.RayExecutor),
its user's alone.

- Its files in a private directory (mode 0700, made new for the run in the temporary
  directory, or in /tmp when that one's path is too long for Ray's sockets, and removed
  after the run): Ray keeps its sessions, logs and the raylet's and object store's Unix sockets in
  its temporary directory, which it makes mode 0777, by default `$TMPDIR/ray`, shared by
  every user and used as it is found, another user's included.
- A token of its own: Ray's ports listen on every interface and answer whoever holds the
  cluster's token (running any code as this user). Left to itself Ray reads, or writes
  mode 0644, `~/.ray/auth_token`, readable by anyone who may enter the home directory and
  shared with every cluster of that user; the instance gets a new secret in the
  environment instead (RAY_AUTH_TOKEN, seen by its own processes only), and no file is
  read or written in the home directory."""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import tempfile
from typing import Any

_TOKEN = secrets.token_hex(32)  # one per process: Ray keeps the first token it reads
# Ray's sockets are DIR/r/session_<date>_<time>_<us>_<pid>/sockets/plasma_store, at most
# 107 bytes: DIR in the temporary directory when that leaves room, else in /tmp
MAX_TMPDIR = 16
_ENV = ("RAY_AUTH_MODE", "RAY_AUTH_TOKEN", "RAY_AUTH_TOKEN_PATH")


class LocalInstance:
    """What ray.init needs to start the instance (`init_kwargs`), and the environment it
    runs in, until `close()` (after ray.shutdown) puts back what was there."""

    def __init__(self) -> None:
        base = tempfile.gettempdir()
        # 0700: Ray's 0777 directories are inside it
        self.dir = tempfile.mkdtemp(prefix="ssdlab-ray-", dir=base if len(base) <= MAX_TMPDIR else "/tmp")
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


def _reload() -> None:
    """Make Ray (imported already, perhaps) read the environment's mode and token again:
    it reads them once (Ray 2.60's own `_enable_token_auth` does the same)."""
    from ray._raylet import AuthenticationTokenLoader, Config  # type: ignore[attr-defined]

    Config.initialize("")
    AuthenticationTokenLoader.instance().reset_cache()


__all__ = ["LocalInstance"]
