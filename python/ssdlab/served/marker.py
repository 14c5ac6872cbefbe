"""The marker file beside a socket `ssdlab serve` serves: it tells `--drive nbd:` the
export is a simulated drive (so writing to it needs no --destroy-data), and it is trusted
only while it is the serving process's own."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

from .. import safe_path

MARKER_SUFFIX = ".ssdlab.json"


def marker_path(socket: Path) -> Path:
    return socket.with_name(socket.name + MARKER_SUFFIX)


FileId = tuple[int, int]  # (st_dev, st_ino): this very file, not whatever has its name now
MAX_MARKER = 1 << 16


def write_marker(socket: Path, doc: dict) -> FileId:
    """Create the marker: a new file (O_EXCL: never over an existing one; O_NOFOLLOW:
    never through a planted symlink). Returns its identity, for `remove_own`."""
    fd = safe_path.create(marker_path(socket), f"the marker of {socket}", 0o644)
    try:
        os.write(fd, json.dumps(doc).encode())
        st = os.fstat(fd)
    finally:
        os.close(fd)
    return st.st_dev, st.st_ino


def file_id(path: Path, kind: int) -> FileId | None:
    """The identity of `path` itself (not followed) when it is of `kind` (stat.S_IFSOCK,
    S_IFREG) and ours."""
    try:
        st = os.lstat(path)
    except OSError:
        return None
    if stat.S_IFMT(st.st_mode) != kind or st.st_uid != os.geteuid():
        return None
    return st.st_dev, st.st_ino


def private_socket(path: Path) -> FileId | None:
    """Make the socket at `path` (ours, as file_id checks) its owner's alone (connecting
    needs write permission; nbdkit makes it 0755) and return its identity; None when
    `path` is not our socket. The mode is changed through a descriptor of the file checked,
    never by name (a link put there meanwhile would be followed)."""
    try:
        fd = os.open(path, os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISSOCK(st.st_mode) or st.st_uid != os.geteuid():
            return None
        os.chmod(f"/proc/self/fd/{fd}", 0o600)  # the very inode (fchmod refuses O_PATH)
        return st.st_dev, st.st_ino
    finally:
        os.close(fd)


def remove_own(path: Path, ident: FileId | None) -> None:
    """Remove `path` only if it is still the file ssdlab created (`ident`): a file someone
    else put there since is left alone."""
    if ident is None:
        return
    try:
        st = os.lstat(path)
        if (st.st_dev, st.st_ino) == ident:
            os.unlink(path)
    except OSError:
        pass


def served_here(socket: str) -> dict | None:
    """The marker of a socket `ssdlab serve` is serving now, or None. Trusted only when
    the marker is a regular file (not a symlink) owned by root or this user, the socket
    is the very one it names (same inode, same owner) and the serving process is alive
    (same pid and start time)."""
    real = Path(os.path.realpath(socket))
    try:
        fd = os.open(marker_path(real), os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        mst = os.fstat(fd)
        if not stat.S_ISREG(mst.st_mode) or mst.st_uid not in (0, os.geteuid()) or mst.st_size > MAX_MARKER:
            return None
        doc = json.loads(os.read(fd, MAX_MARKER))
        sst = os.stat(real)
        if not (isinstance(doc, dict) and stat.S_ISSOCK(sst.st_mode) and sst.st_uid == mst.st_uid
                and doc.get("socket_id") == [sst.st_dev, sst.st_ino]
                and os.path.realpath(str(doc.get("socket", ""))) == str(real)):
            return None
        pid = doc.get("pid")
        if not isinstance(pid, int) or pid <= 0:
            return None
        from ..store import process_start

        os.kill(pid, 0)
        if doc.get("pid_start") != process_start(pid):
            return None
    except (OSError, ValueError, TypeError, OverflowError):
        return None
    finally:
        os.close(fd)
    return doc
