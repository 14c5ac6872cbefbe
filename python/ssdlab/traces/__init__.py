"""Trace replay input: one parser per format, all producing one IoStream (stream.py).

`load(path, fmt=None)` detects the format when none is given (and says which it used in
`IoStream.format`); every problem is a TraceError (a ValueError) of one line naming the
file, the line and the fix. Units per format are in each parser's docstring and in
docs/methodology.md.
"""

from __future__ import annotations

import gzip
import io
from pathlib import Path
from typing import Iterator

from . import blkparse, fio_iolog, msr, plain_csv
from .stream import FLUSH, OP_NAMES, READ, TRIM, WRITE, IoStream, TraceError

__all__ = ["FORMATS", "IoStream", "TraceError", "load", "detect", "READ", "WRITE", "TRIM",
           "FLUSH", "OP_NAMES"]

# --format names -> parser; fio-v2 and fio-v3 both read by fio_iolog (the header says which)
FORMATS = {"fio": fio_iolog.parse, "fio-v2": fio_iolog.parse, "fio-v3": fio_iolog.parse,
           "blkparse": blkparse.parse, "msr": msr.parse, "csv": plain_csv.parse}
SNIFF_LINES = 50


def _open(path: Path) -> io.TextIOBase:
    with open(path, "rb") as f:
        gz = f.read(2) == b"\x1f\x8b"
    raw = gzip.open(path, "rb") if gz else open(path, "rb")
    return io.TextIOWrapper(raw, encoding="utf-8", newline=None)


def _lines(path: Path) -> Iterator[str]:
    try:
        with _open(path) as f:
            yield from f
    except UnicodeDecodeError as e:
        raise TraceError(f"{path}: not a text trace (byte {e.object[e.start]:#04x} is not UTF-8)") from None
    except (EOFError, gzip.BadGzipFile) as e:
        raise TraceError(f"{path}: a damaged gzip file ({e})") from None


def detect(head: list[str]) -> str | None:
    """The format of a trace from its first non-empty lines, or None if it cannot be told."""
    lines = [x for x in head if x.strip()]
    if not lines:
        return None
    first = lines[0].strip()
    if first in fio_iolog.HEADERS:
        return f"fio-v{fio_iolog.HEADERS[first]}"
    if plain_csv.looks_like(first):
        return "csv"
    if msr.looks_like(first):
        return "msr"
    if any(blkparse.is_event(x) for x in lines):
        return "blkparse"
    return None


def load(path: str | Path, fmt: str | None = None) -> IoStream:
    p = Path(path)
    if not p.is_file():
        raise TraceError(f"trace file '{path}' not found")
    if fmt is not None and fmt not in FORMATS:
        raise TraceError(f"--format {fmt}: choose one of {', '.join(FORMATS)}")
    try:
        if fmt is None:
            head = []
            for line in _lines(p):
                head.append(line)
                if len(head) >= SNIFF_LINES:
                    break
            fmt = detect(head)
            if fmt is None:
                raise TraceError(f"{path}: cannot tell the trace format from its first lines: "
                                 f"give --format ({', '.join(FORMATS)})")
        s = FORMATS[fmt](_lines(p), str(path))
    except OSError as e:
        raise TraceError(f"trace file '{path}': {e.strerror or e}") from None
    if fmt in ("fio-v2", "fio-v3") and s.format != fmt:
        raise TraceError(f"{path}: --format {fmt} but the header says {s.format}")
    if len(s) == 0:
        raise TraceError(f"{path}: no I/Os in the trace ({s.format})")
    s = s.sorted_by_time()
    s.time_ns = s.time_ns - s.time_ns[0]
    return s
