"""The drives an agent may test: the drive host decides, never the client (remote/agent.py).

Two places hold the list, both written by whoever owns the drive host:
- the agent's command line, `ssdlab agent --drives /dev/nvme1n1,file:/srv/ssdlab/`: put in
  authorized_keys (`restrict,command="ssdlab agent --drives ..."`), sshd runs exactly
  that whatever the key's holder asks;
- the configuration file /etc/ssdlab/agent.toml (`--config` names another), a line
  `drives = ["/dev/nvme1n1", "file:/srv/ssdlab/"]`; read only when it and every directory
  above it belong to root (or the agent's own account) and no one else can write them.
When both are there, a drive must be in both. With neither, the agent tests nothing.

An entry is a block device (`/dev/...`: that device by its device number, whatever link
names it), a file (`file:/srv/t.bin`: that file) or a directory (`file:/srv/ssdlab/`,
with the trailing slash: any file in it or below it). A listed drive is the host's consent
to overwrite it: the agent passes it as --destroy-data itself and ignores what the client
sends; every other rule of guard/safety.py still holds (mounted, in use, read-only, root).

How large a file may be is the host's too: `file:/srv/t.bin:64G` and `file:/srv/ssdlab/:64G`
let the agent make (or grow) a file of up to that size; without a size the agent never
makes a file larger than it is, nor a new one. A listed file it writes must be its own
account's and have no other name (a hard link another user made to a file of root's is
not the host's consent to overwrite that file)."""

from __future__ import annotations

import os
import stat
import tomllib
from dataclasses import dataclass
from typing import Iterable

from ... import safe_path, units
from ..guard.safety import UnsafeTarget
from ..spec import FILE_MIN, listed, listed_with_size

CONFIG = "/etc/ssdlab/agent.toml"
HOW = ("the drive host's owner lists the drives its agent may test in "
       f"`ssdlab agent --drives ...` (authorized_keys' command=) or in {CONFIG} (docs/real-drives-remote.md)")


class BadList(ValueError):
    """The agent's own list is wrong: it refuses to start."""


@dataclass(frozen=True)
class Entry:
    kind: str  # "block" | "file" | "dir"
    path: str
    size: int | None = None  # file, dir: the largest file the agent may make there (None: none larger than it is)

    @property
    def text(self) -> str:
        if self.kind == "block":
            return self.path
        return f"file:{self.path}" + ("/" if self.kind == "dir" else "") + (f":{self.size}" if self.size else "")


def parse_entry(text: str, where: str) -> Entry:
    text = text.strip()
    sized = listed_with_size(text)  # file:/PATH:SIZE, file:/DIR/:SIZE
    if sized is not None:
        head, tail = sized
        found = listed(head)
        assert found is not None
        try:
            size = units.parse_size(tail, minimum=FILE_MIN)
        except ValueError as e:
            raise BadList(f"{where}: {text!r}: {e}") from None
        return Entry(*found, size=size - size % 4096)
    found = listed(text)
    if found is not None:
        return Entry(*found)
    raise BadList(f"{where}: {text!r} is not a drive the agent may test; write /dev/X (a block "
                  "device), file:/PATH[:SIZE] (one file) or file:/DIR/[:SIZE] (files in that directory, "
                  "each of up to SIZE), without '..' or '//'")


def parse_drives(value: str, where: str = "--drives") -> list[Entry]:
    entries = [parse_entry(x, where) for x in value.split(",") if x.strip()]
    if not entries:
        raise BadList(f"{where}: name at least one drive, e.g. --drives /dev/nvme1n1")
    return entries


def read_config(path: str, required: bool) -> list[Entry] | None:
    """The file's entries; None when it does not exist and is not `required`."""
    what = f"the agent's configuration {path}"
    if not os.path.lexists(path):
        if required:
            raise BadList(f"{what} does not exist; give the file that lists the drives (drives = [...])")
        return None
    try:
        text = safe_path.read_trusted(path, what).decode()
        doc = tomllib.loads(text)
    except safe_path.UnsafePath as e:
        raise BadList(str(e)) from None
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as e:
        raise BadList(f"{what}: not TOML text ({e}); write drives = [\"/dev/X\", ...]") from None
    drives = doc.get("drives")
    if set(doc) - {"drives"}:
        raise BadList(f"{what}: unknown keys {', '.join(sorted(set(doc) - {'drives'}))}; it holds drives = [...] only")
    if not isinstance(drives, list) or not all(isinstance(x, str) for x in drives):
        raise BadList(f"{what}: write drives = [\"/dev/X\", \"file:/DIR/\", ...] (a list of strings)")
    return [parse_entry(x, what) for x in drives]


class AllowList:
    """The drives this agent may test (every source present must name the drive)."""

    def __init__(self, sources: Iterable[tuple[str, list[Entry]]]):
        self.sources = list(sources)

    @classmethod
    def load(cls, drives: str | None, config: str | None) -> AllowList:
        sources = []
        if drives is not None:
            sources.append(("--drives", parse_drives(drives)))
        listed = read_config(config or CONFIG, required=config is not None)
        if listed is not None:
            sources.append((config or CONFIG, listed))
        return cls(sources)

    def check(self, kind: str, path: str, name: str, size: int | None = None) -> str:
        """Raise UnsafeTarget unless every source allows the drive (a file: of `size` bytes);
        return its path as --destroy-data names it (the host's consent)."""
        if not self.sources:
            raise UnsafeTarget(f"refusing {name}: this host's ssdlab agent may test no drive; {HOW}")
        if os.path.normpath(path) != path or not path.startswith("/"):
            raise UnsafeTarget(f"refusing {name}: give the drive's absolute path without '..' or '//'")
        try:
            key = _key(kind, path, name)
        except (UnsafeTarget, safe_path.UnsafePath):
            for where, entries in self.sources:  # why, only of a path the host named
                if not any(_names(e, kind, path) for e in entries):
                    raise _unlisted(name, where) from None
            raise
        matching = []
        for where, entries in self.sources:
            matching.append((where, [e for e in entries if _matches(e, kind, key)]))
            if not matching[-1][1]:
                raise _unlisted(name, where)
        if kind == "file":  # the file is looked at once the host has named it
            found = _file_found(key, name)
            for where, entries in matching:
                _check_size(entries, where, found, size or 0, name)
        return path


def _unlisted(name: str, where: str) -> UnsafeTarget:
    """The one refusal of a drive the list does not name: the same whether the path exists,
    what it is and whose (the client learns nothing of the host's other files)."""
    return UnsafeTarget(f"refusing {name}: this host's ssdlab agent may not test it (not in {where}); {HOW}")


def _names(e: Entry, kind: str, path: str) -> bool:
    """Whether the entry names `path` as written (before any link is followed)."""
    if (e.kind == "block") != (kind == "block"):
        return False
    return path.startswith(e.path.rstrip("/") + "/") if e.kind == "dir" else path == e.path


def _key(kind: str, path: str, name: str) -> str:
    """What a drive is, to compare with the entries: a device number, a file's real path."""
    real = safe_path.real(path, name)
    if kind == "file":
        return real
    try:
        st = os.stat(real)
    except OSError as e:
        raise UnsafeTarget(f"{name}: {e.strerror}; list block devices with `lsblk`") from None
    if not stat.S_ISBLK(st.st_mode):
        raise UnsafeTarget(f"{name} is not a block device")
    return f"{os.major(st.st_rdev)}:{os.minor(st.st_rdev)}"


def _file_found(real: str, name: str) -> int | None:
    """A listed file's size (None: there is none yet), refused when writing it could write
    anything but a file of the agent's own that only this name leads to."""
    try:
        st = os.lstat(real)
    except FileNotFoundError:
        return None
    except OSError as e:
        raise UnsafeTarget(f"refusing {name}: cannot look at {real}: {e.strerror}") from None
    if not stat.S_ISREG(st.st_mode):
        raise UnsafeTarget(f"refusing {name}: not a regular file")
    if st.st_uid != os.geteuid():
        raise UnsafeTarget(f"refusing {name}: {real} belongs to uid {st.st_uid}, not to the account this "
                           f"agent runs as (uid {os.geteuid()}); the drive host's owner removes it or "
                           "lists another file")
    if st.st_nlink != 1:
        raise UnsafeTarget(f"refusing {name}: {real} has {st.st_nlink} names (hard links): writing it "
                           "would write a file listed nowhere; the drive host's owner removes the other "
                           "names or lists another file")
    return st.st_size


def _check_size(matching: list[Entry], where: str, found: int | None, size: int, name: str) -> None:
    """Refuse a file larger than the largest that one of a source's matching entries allows:
    its SIZE, or without one the file's own size (no new file)."""
    def cap(e: Entry) -> int:
        return max(e.size or 0, found or 0)

    best = max(matching, key=cap)
    if size <= cap(best):
        return
    if cap(best) == 0:
        raise UnsafeTarget(f"refusing {name}: this host's ssdlab agent may not create it ({best.text} in "
                           f"{where} gives no size); the drive host's owner lists "
                           f"{_with_size(best)} to let it make files of up to SIZE")
    why = f"{best.text} in {where}" if best.size and best.size >= (found or 0) else (
        f"the file's own size: {best.text} in {where} gives {'no larger size' if not best.size else 'less'}")
    raise UnsafeTarget(f"refusing {name}: this host's ssdlab agent lets it be at most {cap(best)} bytes "
                       f"({why}), not {size}; ask for a smaller SIZE")


def _with_size(e: Entry) -> str:
    return f"file:{e.path}" + ("/" if e.kind == "dir" else "") + ":SIZE"


def _matches(e: Entry, kind: str, key: str) -> bool:
    if kind == "block":
        if e.kind != "block":
            return False
        try:
            st = os.stat(e.path)  # the host's own entry: its links (by-id) are followed
        except OSError:
            return False
        return stat.S_ISBLK(st.st_mode) and key == f"{os.major(st.st_rdev)}:{os.minor(st.st_rdev)}"
    if e.kind == "block":
        return False
    try:
        where = safe_path.real(e.path)
    except safe_path.UnsafePath:
        return False
    return key == where if e.kind == "file" else key.startswith(where.rstrip("/") + "/")


__all__ = ["CONFIG", "AllowList", "BadList", "Entry", "parse_drives", "read_config"]
