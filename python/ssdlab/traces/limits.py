"""What a trace may hold, checked as it is read so that no input exhausts memory or time;
each limit is named in the error that enforces it (docs/methodology-trace.md).

- a line: at most MAX_LINE_CHARS characters (a trace line is about 100);
- the text read, after gzip: at most MAX_TEXT_BYTES (a gzip bomb stops there);
- I/Os: at most MAX_IOS (33 bytes each in memory: 25 of the I/O, 8 of its line);
- time: the I/Os span at most MAX_SPAN_S as recorded, and a replay at most MAX_SPAN_S of
  simulated time (after --speed and --idle-cap);
- bytes: offset + length below 2**63 (8 EiB; then compared with the drive's capacity).
"""

from __future__ import annotations

from array import array

import numpy as np

from .stream import IoStream, bad_line

MAX_LINE_CHARS = 4096
MAX_TEXT_BYTES = 16 * 2**30
MAX_IOS = 50_000_000
MAX_SPAN_S = 1e7  # 116 days, the longest timed step of any test
MAX_SPAN_NS = int(MAX_SPAN_S * 1e9)
MAX_END_BYTES = 2**63 - 1


class Span:
    """The earliest and latest issue time (ns) seen so far: a line that would make the
    trace span more than MAX_SPAN_S is refused with its line number."""

    def __init__(self) -> None:
        self.lo: int | None = None
        self.hi: int | None = None

    def check(self, ns: int, path: str, n: int) -> int:
        """`ns` (the line's time in ns, on the format's own clock) relative to the first
        time checked: what the stream stores."""
        if self.lo is None or self.hi is None:
            self.lo = self.hi = self.first = ns
        elif ns < self.lo or ns > self.hi:
            lo, hi = min(self.lo, ns), max(self.hi, ns)
            if hi - lo > MAX_SPAN_NS:
                raise bad_line(path, n, f"time {ns / 1e9:.9g} s is {(hi - lo) / 1e9:.3g} s from the "
                               f"trace's other I/Os: a trace spans at most {MAX_SPAN_S:g} s (116 days)")
            self.lo, self.hi = lo, hi
        return ns - self.first


def check_extent(path: str, n: int, offset: int, length: int) -> None:
    """Byte offset and length of one I/O (in bytes, >= 0) within what a device can have."""
    if offset + length > MAX_END_BYTES:
        raise bad_line(path, n, f"offset {offset} + length {length} bytes is past 2**63 bytes "
                       "(8 EiB), beyond any device")


def check_count(path: str, n: int, ios: int) -> None:
    if ios >= MAX_IOS:
        raise bad_line(path, n, f"more than {MAX_IOS:,} I/Os: a trace holds at most "
                       f"{MAX_IOS:,} (split it)")


class Collector:
    """The I/Os of a trace as a parser reads them, checked against the limits above and
    kept in typed arrays (33 bytes an I/O with its line) until they become an IoStream."""

    def __init__(self, path: str, timed: bool = True) -> None:
        self.path = path
        self.span = Span() if timed else None
        self.t, self.op = array("q"), array("B")
        self.off, self.ln = array("q"), array("q")
        self.lines = array("q")  # each I/O's line: errors found after sorting name it

    def add(self, n: int, ns: int, op: int, offset: int, length: int) -> None:
        """One I/O from line `n`: `ns` its time on the format's clock (ns), offset and
        length in bytes (>= 0)."""
        check_count(self.path, n, len(self.op))
        check_extent(self.path, n, offset, length)
        self.t.append(self.span.check(ns, self.path, n) if self.span is not None else ns)
        self.op.append(op)
        self.off.append(offset)
        self.ln.append(length)
        self.lines.append(n)

    def __len__(self) -> int:
        return len(self.op)

    def drop(self, keep: "np.ndarray") -> None:
        """Keep only the I/Os where `keep` is true."""
        for name in ("t", "op", "off", "ln", "lines"):
            a = getattr(self, name)
            setattr(self, name, array(a.typecode, np.frombuffer(a, dtype=a.typecode)[keep].tobytes()))

    def stream(self, **kw) -> IoStream:
        s = IoStream(np.frombuffer(self.t, dtype=np.int64).copy(), np.frombuffer(self.op, dtype=np.uint8).copy(),
                     np.frombuffer(self.off, dtype=np.int64).copy(), np.frombuffer(self.ln, dtype=np.int64).copy(),
                     source=self.path, line=np.frombuffer(self.lines, dtype=np.int64).copy(), **kw)
        if len(s):
            s.time_ns = s.time_ns - s.time_ns.min()
        return s
