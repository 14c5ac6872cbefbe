"""Plain CSV: one I/O per line, a header naming the columns and their units.

    time_us,op,offset_sectors,length_bytes
    0,write,2048,4096
    125.5,read,0,65536

Columns (any order, extra columns ignored): `time_<unit>` with unit s, ms, us or ns
(decimals allowed, read exactly to the ns); `op`: read, write, trim or flush (or R, W, T, F; any case);
`offset_<unit>` and `length_<unit>` with unit bytes, sectors (512 bytes) or kib
(1024 bytes), whole numbers. The units are the user's to name: a column without one
(`time`, `offset`) is refused, since guessing sectors for bytes or µs for 100 ns is how
replays go wrong. Blank lines and '#' comments may come before the header.
"""

from __future__ import annotations

import re
from typing import Iterable

from . import limits
from .limits import Collector
from .stream import FLUSH, READ, TRIM, WRITE, IoStream, TraceError, bad_line, is_comment

TIME_UNITS = {"s": 1e9, "ms": 1e6, "us": 1e3, "ns": 1.0}
PLAIN = re.compile(r"([0-9]*)(?:\.([0-9]*))?")  # digits, a point, digits: read exactly
MAX_NS = 2**63
SIZE_UNITS = {"bytes": 1, "b": 1, "sectors": 512, "sector": 512, "kib": 1024}
OPS = {"read": READ, "r": READ, "write": WRITE, "w": WRITE, "trim": TRIM, "t": TRIM,
       "discard": TRIM, "flush": FLUSH, "f": FLUSH}


def header_columns(line: str) -> list[str]:
    return [c.strip().lower() for c in line.strip().split(",")]


def looks_like(line: str) -> bool:
    cols = header_columns(line)
    return "op" in cols and any(c == "time" or c.startswith("time_") for c in cols)


def _unit(cols: list[str], name: str, units: dict, path: str, at: int) -> tuple[int, float]:
    """The column `name`_<unit> of the header (on line `at`) and its unit's scale."""
    for i, c in enumerate(cols):
        if c == name or c.startswith(name + "_"):
            u = c[len(name) + 1:]
            if u not in units:
                raise TraceError(f"{path}: line {at}: column '{c}' needs a unit: name it "
                                 + " or ".join(f"{name}_{x}" for x in units))
            return i, units[u]
    raise TraceError(f"{path}: line {at}: no '{name}_<unit>' column (header: time_<unit>,op,"
                     "offset_<unit>,length_<unit>)")


def exact_ns(text: str, unit_ns: int) -> int | None:
    """A time written as plain digits with an optional fraction, in ns exactly (rounded
    half to even): a float holds ns since the epoch only to 256 ns. None for any other
    form (an exponent, a sign), which float() reads."""
    m = PLAIN.fullmatch(text.strip())
    if m is None or not (m.group(1) or m.group(2)):
        return None
    frac = m.group(2) or ""
    q, r = divmod(int(frac or "0") * unit_ns, 10 ** len(frac))
    q += int(m.group(1) or "0") * unit_ns
    return q + 1 if 2 * r > 10 ** len(frac) or (2 * r == 10 ** len(frac) and q % 2) else q


def parse(lines: Iterable[tuple[int, str]], path: str) -> IoStream:
    it = iter(lines)
    at, head = next(((n, x) for n, x in it if x.strip() and not is_comment(x)), (1, ""))
    cols = header_columns(head)
    if "op" not in cols:
        raise TraceError(f"{path}: line {at}: the header must name the columns: time_<unit>,op,"
                         "offset_<unit>,length_<unit> (e.g. time_us,op,offset_bytes,length_bytes)")
    it_, tu = _unit(cols, "time", TIME_UNITS, path, at)
    io_ = cols.index("op")
    oi, ou = _unit(cols, "offset", SIZE_UNITS, path, at)
    li, lu = _unit(cols, "length", SIZE_UNITS, path, at)
    need = max(it_, io_, oi, li) + 1
    out = Collector(path)
    for n, line in it:
        if not line.strip():
            continue
        f = line.strip().split(",")
        if len(f) < need:
            raise bad_line(path, n, f"{len(f)} fields, expected {len(cols)} ({','.join(cols)})")
        op = OPS.get(f[io_].strip().lower())
        if op is None:
            raise bad_line(path, n, f"op '{f[io_][:20]}': expected read, write, trim or flush")
        ns = exact_ns(f[it_], int(tu))
        try:
            tv = float(f[it_]) if ns is None else 0.0
            ov, lv = int(f[oi]), int(f[li])
        except ValueError:
            raise bad_line(path, n, f"time must be a number, offset and length whole numbers "
                           f"(units {cols[it_]}, {cols[oi]}, {cols[li]})") from None
        if tv < 0 or ov < 0 or lv < 0:
            raise bad_line(path, n, "time, offset and length must be >= 0")
        if ns is None and tv * tu < MAX_NS:
            ns = round(tv * tu)
        if ns is None or ns >= MAX_NS:  # NaN, infinite, or past what a time in ns holds
            raise bad_line(path, n, f"time {f[it_].strip()[:30]} ({cols[it_]}): not a finite time below "
                           "2**63 ns (292 years)")
        if op != FLUSH and lv == 0:
            raise bad_line(path, n, f"{f[io_].strip()} of length 0")
        out.add(n, ns, op, int(ov * ou) if op != FLUSH else 0, int(lv * lu) if op != FLUSH else 0)
    return out.stream(format="csv", has_time=True)


def parse_text(text: bytes | bytearray, path: str) -> IoStream | None:
    """The whole text of a CSV trace read at native speed (`_sim.plain_csv_arrays`), giving
    what `parse` gives; None when a line needs `parse` (which then reads the file and names
    any problem), so both ways give the same stream or the same error."""
    from .. import _sim

    pos = 0
    while True:  # the header: the first line that is not blank
        end = text.find(b"\n", pos)
        line = text[pos:] if end < 0 else text[pos:end]
        if line.strip() or end < 0:
            break
        pos = end + 1
    if line.lstrip().startswith(b"#"):
        return None  # comments before the header: `parse` skips them
    try:
        cols = header_columns(line.decode("ascii"))
        if "op" not in cols:
            return None
        it_, tu = _unit(cols, "time", TIME_UNITS, path, 0)
        oi, ou = _unit(cols, "offset", SIZE_UNITS, path, 0)
        li, lu = _unit(cols, "length", SIZE_UNITS, path, 0)
    except (TraceError, UnicodeDecodeError):
        return None
    got = _sim.plain_csv_arrays(text, (it_, cols.index("op"), oi, li), (tu, int(ou), int(lu)),
                                (limits.MAX_LINE_CHARS, limits.MAX_IOS, limits.MAX_SPAN_NS))
    if got is None:
        return None
    t, op, off, ln, lineno = got
    s = IoStream(t, op, off, ln, source=path, format="csv", has_time=True, line=lineno)
    if len(s) and (first := s.time_ns.min()) != 0:  # times from the earliest I/O's
        s.time_ns = s.time_ns - first
    return s
