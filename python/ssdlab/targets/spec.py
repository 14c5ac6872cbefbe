"""A `--drive` as given, parsed once (at the CLI's edge, or by the agent for what its
client sends) into a DriveSpec: what kind of drive it names and where. Nothing after the
parse reads the string again: targets.open_target builds the drive from the spec, callers
ask the spec (or the target's capabilities) what it is.

  sim:PROFILE               a built-in simulated drive        kind "sim"
  PATH.toml, sim:PATH.toml  a simulated drive from a profile   kind "profile"
  /dev/X                    a block device                     kind "device"
  file:PATH:SIZE            a file as a drive                  kind "file"
  nbd:SOCKET, nbd:URI       an NBD export (a served drive)     kind "nbd"
  [user@]HOST[:PORT]:/dev/X a drive on another host, over ssh  kind "remote"
  (HOST:/path/file:SIZE     a file there)
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from .. import safe_path, units
from ..errors import file_problem
from .fio import nbd_uri
from ..fioformat.jobfile import check_path

Kind = Literal["sim", "profile", "device", "file", "nbd", "remote"]
FILE_MIN = 4096 * 16  # a file target of at least 64 KiB
MAX_PROFILE_BYTES = 1 << 20  # a profile file (the built-ins are a few KiB)

_USER = r"(?:(?P<user>[A-Za-z0-9_][A-Za-z0-9._-]*)@)?"
_HOST = r"(?:\[(?P<v6>[0-9A-Fa-f:.]+)\]|(?P<host>[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?))"
_REMOTE = re.compile(_USER + _HOST + r"(?::(?P<port>[0-9]+))?:(?P<path>/.*)")
_LOCAL_PREFIXES = ("/", "file:", "nbd:", "sim:")
_PROFILE_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
_OVERRIDES = re.compile(r"(?P<id>[A-Za-z0-9][A-Za-z0-9._-]*)[?&;,](?P<sets>.*=.*)")


@dataclass(frozen=True)
class DriveSpec:
    text: str  # the --drive as given (the label runs are stored under)
    kind: Kind
    path: str = ""  # profile id (sim), profile file, device, file, socket or URI (nbd), path on HOST
    size: int | None = None  # a file target's size (local or remote)
    host: str | None = None  # remote: name or address (IPv6 without brackets)
    user: str | None = None
    port: int | None = None  # remote: ssh's port (None: ssh's configuration decides)
    ipv6: bool = False
    nbd: nbd_uri.NbdUri | None = None  # nbd: the export, read as libnbd reads it

    def __str__(self) -> str:
        return self.text

    @property
    def simulated(self) -> bool:
        return self.kind in ("sim", "profile")

    @property
    def real(self) -> bool:
        return not self.simulated

    @property
    def remote(self) -> bool:
        return self.kind == "remote"

    @property
    def local_text(self) -> str:
        """A drive on another host as a run on that host names it (its agent's spec)."""
        return f"file:{self.path}:{self.size}" if self.size is not None else self.path

    @property
    def where(self) -> str:
        """A drive on another host: how ssh reaches it, for messages."""
        h = f"[{self.host}]" if self.ipv6 else str(self.host)
        return (f"{self.user}@" if self.user else "") + h + (f" port {self.port}" if self.port else "")

    def profile_text(self) -> str:
        """A simulated drive's profile (TOML text). ValueError with one line otherwise."""
        if self.kind == "sim":
            from ..profiles import load_text

            return load_text(self.path)
        if self.kind != "profile":
            raise ValueError(f"{self.text}: not a simulated drive (sim:PROFILE or a profile .toml)")
        # through no link another user owns: the parser's error would quote the file's text
        data = safe_path.read_input(self.path, f"profile file '{self.text}'", MAX_PROFILE_BYTES)
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as e:
            raise ValueError(f"profile file '{self.text}' is not UTF-8 text (byte {e.object[e.start]:#04x} "
                             f"at offset {e.start}); save it as UTF-8") from None
        from ..profiles import check_text

        check_text(text, f"profile file '{self.text}'")
        return text

    def key(self) -> str:
        """What the spec names, whatever names it (a drive given twice in one run): a
        device's number, a file's real path, an export's socket or address."""
        if self.kind in ("device", "file"):
            from .guard.locks import drive_key

            try:
                return drive_key("block" if self.kind == "device" else "file", self.path)
            except ValueError:
                return self.text  # opening it says what is wrong
        if self.nbd is not None:
            return self.nbd.key()
        return self.text


def parse_size(s: str) -> int:
    """A file target's size (units.parse_size), at least FILE_MIN."""
    return units.parse_size(s, minimum=FILE_MIN)


def parse_drive(text: str) -> DriveSpec:
    """The drive `text` names. ValueError with one line saying how to write it."""
    if text.startswith("sim:") and text.endswith(".toml"):  # sim:./twin.toml: a profile file
        return _profile(text, text[4:])
    if text.startswith("sim:"):
        return _sim(text)
    if text.startswith("file:"):
        path, sep, size = text[5:].rpartition(":")
        if not sep or not path:
            raise ValueError(f"drive '{text}': write file:PATH:SIZE, e.g. file:/mnt/ssd/test.bin:8G")
        check_path(path)
        n = parse_size(size)
        return DriveSpec(text, "file", path, n - n % 4096)
    if text.startswith("/dev/"):
        return DriveSpec(text, "device", check_path(text))
    if text.startswith("nbd:"):
        return _nbd(text)
    if looks_remote(text):
        return parse_remote(text)
    if Path(text).suffix == ".toml":
        return _profile(text, text)
    from ..profiles import builtin_ids

    if text in builtin_ids():  # --drive tlc-256
        raise ValueError(f"unknown drive '{text}': the built-in profile {text} is the drive sim:{text}")
    raise ValueError(
        f"unknown drive '{text}': use sim:PROFILE (see `ssdlab drives`), a profile .toml file, "
        "a block device /dev/..., file:PATH:SIZE, nbd:SOCKET (a served drive), or HOST:/dev/... "
        "(a drive on another host, reached over ssh)")


def profile_id(text: str) -> str:
    """A built-in profile as `validate --drive` takes it: its id, or sim:ID as --drive names it."""
    return text[4:] if text.startswith("sim:") else text


def parse_local(text: object) -> DriveSpec:
    """A drive of this host that fio reaches (a device or a file): what a drive host's
    agent accepts from its client."""
    if not isinstance(text, str) or not (text.startswith("/dev/") or text.startswith("file:")):
        raise ValueError(f"the agent drives a block device /dev/... or file:PATH:SIZE, not {text!r}")
    return parse_drive(text)


def listed(text: str) -> tuple[Literal["block", "file", "dir"], str] | None:
    """A drive as a host's list of allowed drives names it (remote/allowlist.py): /dev/X, file:/PATH
    (one file) or file:/DIR/ (the files in it), absolute and normalised; None otherwise."""
    if text.startswith("/dev/") and os.path.normpath(text) == text:
        return "block", text
    if text.startswith("file:/"):
        p = text[5:]
        norm = os.path.normpath(p)
        if p.endswith("/") and norm + "/" == p and norm != "/":
            return "dir", norm
        if norm == p:
            return "file", p
    return None


_LISTED_SIZE = re.compile(r"[0-9]+(?:\.[0-9]+)?[A-Za-z]*")


def listed_with_size(text: str) -> tuple[str, str] | None:
    """A host's list entry with a size, `file:/PATH:SIZE` or `file:/DIR/:SIZE`: the entry
    without it (as `listed` reads it) and the size's text; None when it has none (a ':'
    followed by no size is part of the file's name)."""
    head, sep, tail = text.rpartition(":")
    if text.startswith("file:") and sep and _LISTED_SIZE.fullmatch(tail) and listed(head) is not None:
        return head, tail
    return None


def _profile(text: str, path: str) -> DriveSpec:
    why = file_problem(path, "not found")
    if why is not None:
        raise ValueError(f"profile file '{path}'" + (" not found" if why == "not found" else f": {why}"))
    return DriveSpec(text, "profile", path)


def _sim(text: str) -> DriveSpec:
    from ..profiles import builtin_ids, load_text

    pid = text[4:]
    tail = _OVERRIDES.fullmatch(pid)
    if tail and tail["id"] in builtin_ids():  # sim:tlc-256?nand.channels=4: a URL's query, which no --drive reads
        sets = " ".join(f"--set {kv}" for kv in re.split(r"[?&;,]", tail["sets"]) if kv)
        raise ValueError(f"drive '{text}': a profile's overrides are given with --set, not in the drive's name: "
                         f"sim:{tail['id']} {sets}")
    if not _PROFILE_ID.fullmatch(pid):  # a name, not a path
        raise ValueError(f"unknown profile '{pid}': built-in profiles are "
                         f"{', '.join(builtin_ids())} (or give a path to a .toml profile file)")
    load_text(pid)  # an unknown profile: one line now
    return DriveSpec(text, "sim", pid)


def _nbd(text: str) -> DriveSpec:
    rest = text[4:]
    if not rest:
        raise ValueError(f"drive '{text}': write nbd:SOCKET (a Unix socket path) or nbd:nbd://HOST:PORT")
    if "://" in rest:
        uri = nbd_uri.parse(rest, text)
    else:
        path = os.path.abspath(rest)
        if not os.path.exists(path):
            raise ValueError(f"drive '{text}': no socket {path}; start one with "
                             f"`ssdlab serve sim:PROFILE --socket {rest}`")
        uri = nbd_uri.unix(path)
    return DriveSpec(text, "nbd", uri.socket or uri.text, nbd=uri)


def looks_remote(text: str) -> bool:
    """[user@]HOST[:PORT]:/path (a local spec never matches: those start with '/',
    file:, nbd: or sim:)."""
    return not text.startswith(_LOCAL_PREFIXES) and ":/" in text and bool(
        re.match(_USER + _HOST + r"(?::[0-9]*)?:/", text))


def parse_remote(text: str) -> DriveSpec:
    """[user@]HOST[:PORT]:/path[:SIZE]: a drive on another host."""
    m = _REMOTE.fullmatch(text)
    if not m:
        raise ValueError(f"drive '{text}': a drive on another host is HOST:/dev/X, user@HOST:/dev/X, "
                         "HOST:SSHPORT:/dev/X or [IPv6]:/dev/X (a file: HOST:/path/file:SIZE)")
    port = int(m.group("port")) if m.group("port") else None
    if port is not None and not 0 < port < 65536:
        raise ValueError(f"drive '{text}': ssh port {port} is not 1..65535")
    path, size = m.group("path"), None
    if not path.startswith("/dev/"):
        head, sep, tail = path.rpartition(":")
        try:
            size = parse_size(tail) if sep and head.startswith("/") else None
        except ValueError as e:
            raise ValueError(f"drive '{text}': {e}") from None
        if size is None:
            raise ValueError(f"drive '{text}': a file on another host needs its size, e.g. "
                             f"{text}:8G (a block device is /dev/...)")
        path, size = head, size - size % 4096
    if path != os.path.normpath(path) or path.endswith("/"):
        raise ValueError(f"drive '{text}': write the path on the remote host without '..', '//' or "
                         f"a trailing '/' (e.g. {os.path.normpath(path)})")
    check_path(path)
    return DriveSpec(text, "remote", path, size, m.group("v6") or m.group("host"), m.group("user"),
                     port, bool(m.group("v6")))


__all__ = ["DriveSpec", "FILE_MIN", "Kind", "listed", "looks_remote", "parse_drive", "parse_local", "parse_remote",
           "parse_size"]
