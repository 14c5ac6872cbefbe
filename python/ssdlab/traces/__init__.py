"""Trace replay input: one parser per format, all producing one IoStream (stream.py).

`load(path, fmt=None)` detects the format when none is given (and says which it used in
`IoStream.format`); every problem is a TraceError (a ValueError) of one line naming the
file, the line and the fix. Units per format are in each parser's docstring and in
docs/methodology-trace.md.
"""

from __future__ import annotations

import gzip
import io
import os
import stat
import zlib
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO, Callable, Iterator, cast

from .. import safe_path
from ..errors import NOT_A_FILE
from ..fioformat import iolog as fio_iolog
from . import blkparse, msr, plain_csv
from .limits import MAX_LINE_CHARS, MAX_TEXT_BYTES
from .stream import FLUSH, OP_NAMES, READ, TRIM, WRITE, IoStream, TraceError, is_comment

__all__ = ["FORMATS", "IoStream", "TraceError", "load", "detect", "READ", "WRITE", "TRIM",
           "FLUSH", "OP_NAMES"]



def _fio_iolog(lines: Iterator[tuple[int, str]], path: str) -> IoStream:
    # looked up when called: fioformat.iolog reads into this package's IoStream, so when it
    # is imported first this package is loaded while it is still half made
    return fio_iolog.parse(lines, path)


# --format names -> parser; fio-v2 and fio-v3 both read by fioformat/iolog.py (the header says which)
FORMATS = {"fio": _fio_iolog, "fio-v2": _fio_iolog, "fio-v3": _fio_iolog,
           "blkparse": blkparse.parse, "msr": msr.parse, "csv": plain_csv.parse}
SNIFF_LINES = 50


@contextmanager
def _open(path: Path) -> Iterator[BinaryIO]:
    """The trace's text, gunzipped when it is gzip. Opened by its checked path with no link
    followed that another user owns (one planted in /tmp could make root read, and quote in
    an error, a file only root may read) and none put there since the check."""
    fd = safe_path.open_file(path, os.O_RDONLY | os.O_NONBLOCK, what=f"--trace {path}")
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(fd).st_mode):  # a FIFO or device swapped in since
            raise TraceError(f"--trace {path}: {NOT_A_FILE}")
        gz = f.read(2) == b"\x1f\x8b"
        f.seek(0)
        if not gz:
            yield f
            return
        with gzip.GzipFile(fileobj=f, mode="rb") as g:
            yield cast(BinaryIO, g)


Progress = Callable[[int, int], None]  # (bytes of the file read, its size)


CHUNK = 1 << 20
BOM = b"\xef\xbb\xbf"  # what spreadsheets put before a "UTF-8 CSV": not part of its header
# a blktrace record's first bytes (magic 0x656174, version 6 or 7; either byte order): the
# binary that blkparse reads, given in place of its text
BLKTRACE_MAGIC = {bytes([v]) + b"tae" for v in (6, 7)} | {b"eat" + bytes([v]) for v in (6, 7)}


def _lines(path: Path, progress: Progress | None = None) -> Iterator[tuple[int, str]]:
    """The trace's non-blank lines with their numbers, each at most MAX_LINE_CHARS long, at
    most MAX_TEXT_BYTES of text in all (after gzip); `progress` hears how much of the file
    has been read. Runs of blank lines cost no Python work per line."""
    n, text = 0, 0
    try:
        with _open(path) as raw:
            disk = getattr(raw, "fileobj", None) or raw  # the file's own position
            size = os.fstat(disk.fileno()).st_size
            rest = b""
            while chunk := raw.read(CHUNK):
                if text == 0 and chunk.startswith(BOM):
                    chunk = chunk[len(BOM):]
                if text == 0 and chunk[:4] in BLKTRACE_MAGIC:
                    dev = path.name.split(".blktrace.")[0] if ".blktrace." in path.name else "DEV"
                    raise TraceError(f"{path}: blktrace's binary output: give blkparse's text "
                                     f"(blkparse -i {dev} > trace.txt)")
                text += len(chunk)
                if text > MAX_TEXT_BYTES:
                    raise TraceError(f"{path}: more than {MAX_TEXT_BYTES >> 30} GiB of text (after "
                                     f"gzip) by line {n + 1}: a trace holds at most that (split it)")
                if progress is not None:
                    progress(disk.tell(), size)
                if not chunk.strip() and not rest.strip():  # only blank lines
                    n += chunk.count(b"\n")
                    rest = b""
                    continue
                lines = (rest + chunk).split(b"\n")
                rest = lines.pop()
                for line in lines:
                    n += 1
                    if line.strip():
                        if len(line) > MAX_LINE_CHARS:
                            _too_long(path, n)
                        yield n, line.decode("utf-8")
                if len(rest) > MAX_LINE_CHARS:
                    _too_long(path, n + 1)
            if rest.strip():
                n += 1  # the last line, with no newline after it
                yield n, rest.decode("utf-8")
    except UnicodeDecodeError as e:
        raise TraceError(f"{path}: line {n}: not a text trace (byte {e.object[e.start]:#04x} is not "
                         "UTF-8)") from None
    except (EOFError, gzip.BadGzipFile, zlib.error) as e:
        raise TraceError(f"{path}: a damaged gzip file ({e})") from None


def _too_long(path: Path, n: int) -> None:
    raise TraceError(f"{path}: line {n} is longer than {MAX_LINE_CHARS} characters: not a trace "
                     "line (a trace line is about 100)")


FAST_TEXT_BYTES = 1 << 30  # a CSV trace of up to this much text is read whole, at native speed


def _csv_text(path: Path, progress: Progress | None) -> IoStream | None:
    """A CSV trace read whole and parsed at native speed (plain_csv.parse_text), or None
    for the line-by-line way (a larger or damaged file, or a line it must judge)."""
    try:
        with _open(path) as raw:
            disk = getattr(raw, "fileobj", None) or raw  # the file's own position
            size = os.fstat(disk.fileno()).st_size
            if raw is disk:
                # a plain file: _open gave open(path, "rb")
                text: bytes | bytearray | None = _read_into(cast(io.BufferedReader, raw), size, progress)
            else:
                chunks, n = [], 0
                while n <= FAST_TEXT_BYTES and (chunk := raw.read(CHUNK)):
                    chunks.append(chunk)
                    n += len(chunk)
                    if progress is not None:
                        progress(disk.tell(), size)
                text = b"".join(chunks) if n <= FAST_TEXT_BYTES else None
    except (EOFError, gzip.BadGzipFile, zlib.error):
        return None
    if isinstance(text, bytearray) and text.startswith(BOM):
        del text[:len(BOM)]  # in place: no second copy of a large text
    elif text is not None and text.startswith(BOM):
        text = text[len(BOM):]
    return None if text is None else plain_csv.parse_text(text, str(path))


def _read_into(raw: io.BufferedReader, size: int, progress: Progress | None) -> bytearray | None:
    """A plain file's text read into one buffer of its size (no chunks joined: a copy of
    the whole text saved), or None past FAST_TEXT_BYTES."""
    if size > FAST_TEXT_BYTES:
        return None
    buf = bytearray(size)
    n = 0
    with memoryview(buf) as view:
        while n < size and (k := raw.readinto(view[n:n + CHUNK])):
            n += k
            if progress is not None:
                progress(n, size)
    del buf[n:]  # shorter than it was
    buf += raw.read(FAST_TEXT_BYTES + 1 - n)  # or longer
    return buf if len(buf) <= FAST_TEXT_BYTES else None


def detect(head: list[str]) -> str | None:
    """The format of a trace from its first non-empty lines, or None if it cannot be told.
    A CSV or MSR header (or first I/O) may follow '#' comments; fio's header is its first line."""
    lines = [x for x in head if x.strip()]
    if not lines:
        return None
    first = lines[0].strip()
    if first in fio_iolog.HEADERS:
        return f"fio-v{fio_iolog.HEADERS[first]}"
    first = next((x.strip() for x in lines if not is_comment(x)), "")
    if plain_csv.looks_like(first):
        return "csv"
    if msr.looks_like(first):
        return "msr"
    if any(blkparse.is_event(x) for x in lines):
        return "blkparse"
    return None


def load(path: str | Path, fmt: str | None = None, progress: Progress | None = None) -> IoStream:
    p = Path(path)
    if not p.is_file():
        raise TraceError(f"trace file '{path}' not found")
    if fmt is not None and fmt not in FORMATS:
        raise TraceError(f"--format {fmt}: choose one of {', '.join(FORMATS)}")
    try:
        if fmt is None:
            head = []
            for _, line in _lines(p):
                head.append(line)
                if len(head) >= SNIFF_LINES:
                    break
            fmt = detect(head)
            if not head:
                raise TraceError(f"{path}: the file has no lines: give a trace")
            if fmt is None:
                raise TraceError(f"{path}: cannot tell the trace format from its first lines: "
                                 f"give --format ({', '.join(FORMATS)})")
        s = (_csv_text(p, progress) if fmt == "csv" else None) or FORMATS[fmt](_lines(p, progress), str(path))
    except safe_path.UnsafePath as e:
        raise TraceError(str(e)) from None
    except OSError as e:
        raise TraceError(f"trace file '{path}': {e.strerror or e}") from None
    if fmt in ("fio-v2", "fio-v3") and s.format != fmt:
        raise TraceError(f"{path}: --format {fmt} but the header says {s.format}")
    if len(s) == 0:
        raise TraceError(f"{path}: no I/Os in the trace ({s.format})")
    s = s.sorted_by_time()
    if s.time_ns[0] != 0:  # (a copy of the whole array otherwise for nothing)
        s.time_ns = s.time_ns - s.time_ns[0]
    return s
