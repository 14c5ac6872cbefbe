"""NBD URIs, read the way libnbd's `nbd_connect_uri` reads them (the NBD URI format:
`nbd[s][+unix|+vsock]://[user@]host[:port][/export][?query]`), so that what ssdlab checks
(which socket, which host) is what fio's nbd engine connects to.

libnbd takes the *last* of repeated query parameters, ignores unknown ones, splits the
query on `&` or else `;`, and percent-decodes names and values. Anything where a reader
could differ is refused here: a repeated or unknown parameter, `;`, `#`, a malformed
`%` escape, a NUL, blanks and control characters, `$` and `\\` (fio's job-file expansion
and escape), a host on a Unix-socket URI, a relative socket path. The URI handed to fio
is rebuilt from the parsed parts (`NbdUri.text`), never the string as typed."""

from __future__ import annotations

import os
import re
import socket as _socket
from dataclasses import dataclass, field
from urllib.parse import quote, unquote_to_bytes

# scheme -> (transport, TLS)
SCHEMES = {"nbd": ("tcp", False), "nbds": ("tcp", True), "nbd+unix": ("unix", False),
           "nbds+unix": ("unix", True), "nbd+vsock": ("vsock", False), "nbds+vsock": ("vsock", True)}
PARAMS = ("socket", "tls-certificates", "tls-psk-file", "tls-verify-peer")  # libnbd 1.14
DEFAULT_PORT = 10809
_URI_CHARS = re.compile(r"[A-Za-z0-9\-._~!'()*+,=:@/?%&\[\]]")
_BAD_ESCAPE = re.compile(r"%(?![0-9A-Fa-f]{2})")
_USER = re.compile(r"[A-Za-z0-9\-._~]+")
_HOST = re.compile(r"[A-Za-z0-9\-._~]+|\[[0-9A-Fa-f:.]+\]")
FORM = "nbd+unix:///?socket=/ABS/PATH.sock or nbd://HOST:PORT"


@dataclass(frozen=True)
class NbdUri:
    scheme: str
    transport: str  # tcp | unix | vsock
    tls: bool
    user: str | None
    host: str  # "" for unix (and vsock without a CID)
    port: int | None
    export: str
    socket: str | None  # unix: the socket path (absolute)
    params: dict[str, str] = field(default_factory=dict)  # the tls-* ones

    @property
    def text(self) -> str:
        """The URI fio and nbdinfo get: rebuilt from the parts, every value escaped."""
        auth = f"{self.user}@" if self.user else ""
        if self.transport != "unix":
            auth += self.host + (f":{self.port}" if self.port is not None else "")
        q = [("socket", self.socket)] if self.socket is not None else []
        q += sorted(self.params.items())
        query = "&".join(f"{k}={quote(os.fsencode(v), safe='/')}" for k, v in q)
        return f"{self.scheme}://{auth}/{quote(os.fsencode(self.export), safe='')}" + (f"?{query}" if query else "")

    def key(self) -> str:
        """What the URI names, for one-run-per-drive: the socket's real path, or the host's
        address and port (localhost and 127.0.0.1 are one export)."""
        if self.socket is not None:
            return f"nbd:unix:{os.path.realpath(self.socket)}"
        host = self.host.strip("[]") or ("2" if self.transport == "vsock" else "localhost")
        if self.transport == "tcp":
            try:
                addrs = _socket.getaddrinfo(host, self.port or DEFAULT_PORT, type=_socket.SOCK_STREAM)
                host = min(str(a[4][0]) for a in addrs)
            except (OSError, UnicodeError):
                pass
        return f"nbd:{self.transport}:{host.lower()}:{self.port or DEFAULT_PORT}"


def _decode(raw: str, what: str) -> str:
    b = unquote_to_bytes(raw)
    if b"\x00" in b or any(c < 0x20 or c == 0x7F for c in b):
        raise ValueError(f"{what}: a control character (escaped as %XX) is not allowed")
    return os.fsdecode(b)


def parse(uri: str, spec: str | None = None) -> NbdUri:
    """The parts of an NBD URI; ValueError (one line, naming the fix) for anything libnbd
    could read differently or that ssdlab cannot check."""
    name = f"drive '{spec or uri}'"
    scheme, sep, rest = uri.partition("://")
    if not sep or scheme not in SCHEMES:
        raise ValueError(f"{name}: an NBD URI starts with {', '.join(s + '://' for s in SCHEMES)} "
                         f"(e.g. {FORM})")
    transport, tls = SCHEMES[scheme]
    for ch in uri:
        if not _URI_CHARS.fullmatch(ch):
            raise ValueError(f"{name}: character {ch!r} is not allowed in an NBD URI (inside a value "
                             "write it %-escaped, e.g. %24 for '$')")
    if _BAD_ESCAPE.search(uri):
        raise ValueError(f"{name}: a '%' must start an escape of two hex digits (%25 for '%' itself)")
    rest, _, query = rest.partition("?")
    auth, slash, path = rest.partition("/")
    user = None
    if "@" in auth:
        user, _, auth = auth.rpartition("@")
        if not _USER.fullmatch(user):
            raise ValueError(f"{name}: the user name before '@' must be letters, digits, '-', '.', '_' or '~'")
    host, port = auth, None
    m = re.fullmatch(r"(.*?):(\d*)", auth) if not auth.endswith("]") else None
    if m:
        host, digits = m.groups()
        if not digits or not 0 < int(digits) < 65536:
            raise ValueError(f"{name}: port '{digits}' must be 1 to 65535")
        port = int(digits)
    if host and not _HOST.fullmatch(host):
        raise ValueError(f"{name}: host '{host}' is not a host name or address ([...] around IPv6)")
    if transport == "unix" and (host or port is not None):
        raise ValueError(f"{name}: a Unix-socket URI has no host or port ({scheme}:///?socket=/PATH)")
    if transport == "vsock" and host and not host.isdigit():
        raise ValueError(f"{name}: the host of an {scheme} URI is the numeric CID of a VM")
    export = _decode(path, name) if slash else ""
    params: dict[str, str] = {}
    for part in query.split("&") if query else []:
        k, eq, v = part.partition("=")
        key = _decode(k, name)
        if not eq or not key:
            raise ValueError(f"{name}: query part '{part}' is not NAME=VALUE")
        if key not in PARAMS:
            raise ValueError(f"{name}: unknown URI parameter '{key}' (libnbd reads {', '.join(PARAMS)})")
        if key in params:
            raise ValueError(f"{name}: parameter '{key}' is given twice; give it once")
        params[key] = _decode(v, name)
    sock = params.pop("socket", None)
    if transport == "unix":
        if not sock:
            raise ValueError(f"{name}: a {scheme} URI needs ?socket=/PATH (the Unix socket)")
        if not sock.startswith("/"):
            raise ValueError(f"{name}: socket={sock} must be an absolute path")
    elif sock is not None:
        raise ValueError(f"{name}: socket= belongs to a Unix-socket URI (nbd+unix://), not {scheme}://")
    return NbdUri(scheme=scheme, transport=transport, tls=tls, user=user, host=host, port=port,
                  export=export, socket=sock, params=params)


def unix(path: str) -> NbdUri:
    """The URI of a Unix socket path (any characters: they are escaped)."""
    return NbdUri(scheme="nbd+unix", transport="unix", tls=False, user=None, host="", port=None,
                  export="", socket=os.path.abspath(path))


__all__ = ["PARAMS", "SCHEMES", "NbdUri", "parse", "unix"]
