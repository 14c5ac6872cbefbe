"""The in-memory I/O stream every trace parser produces: four numpy arrays, one entry
per I/O, in the order of the trace.

- time_ns (int64): when the I/O was issued, nanoseconds from the trace's first I/O
  (all zeros when the format records no time: fio iolog v2 without `wait` lines)
- op (uint8): READ, WRITE, TRIM or FLUSH
- offset_bytes (int64): byte offset on the device (0 for a flush)
- length_bytes (int64): bytes moved (> 0 for reads, writes and trims; 0 for a flush)
- line (int64, or None for a generated stream): the file's line each I/O came from, so an
  error found after sorting by time names the line an editor shows
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

READ, WRITE, TRIM, FLUSH = 0, 1, 2, 3
OP_NAMES = ("read", "write", "trim", "flush")


class TraceError(ValueError):
    """A trace that cannot be replayed: one line naming the file, the line and the fix."""


def is_comment(line: str) -> bool:
    """A line starting with '#': a note a CSV or MSR trace may have before its header (and
    its I/Os), skipped as blank lines are."""
    return line.lstrip().startswith("#")


def bad_line(path: str, lineno: int, problem: str) -> TraceError:
    return TraceError(f"{path}: line {lineno}: {problem}")


@dataclass
class IoStream:
    time_ns: np.ndarray
    op: np.ndarray
    offset_bytes: np.ndarray
    length_bytes: np.ndarray
    format: str  # the parser that produced it (fio-v2, fio-v3, blkparse, msr, csv)
    has_time: bool  # the format recorded issue times (else time_ns is all zeros)
    source: str = ""  # file name, or how the stream was generated
    notes: list[str] = field(default_factory=list)  # what the parser decided (said once)
    default_qd: int = 1  # closed-loop depth when the stream has no times and no --qd
    line: np.ndarray | None = None  # the file's line of each I/O (1-based)

    def __len__(self) -> int:
        return int(self.op.size)

    def at(self, i: int) -> str:
        """Where I/O `i` (in this stream's order) is: its line in the file, else its number."""
        return f"line {int(self.line[i])}" if self.line is not None else f"I/O {i + 1}"

    @classmethod
    def from_lists(cls, t: list, op: list, off: list, ln: list, **kw) -> "IoStream":
        return cls(np.asarray(t, dtype=np.int64), np.asarray(op, dtype=np.uint8),
                   np.asarray(off, dtype=np.int64), np.asarray(ln, dtype=np.int64), **kw)

    def sorted_by_time(self) -> "IoStream":
        """Issue order by time (stable: equal times keep the trace's order). Traces merged
        from several CPUs (blkparse) can be slightly out of order."""
        if self.time_ns.size < 2 or bool(np.all(np.diff(self.time_ns) >= 0)):
            return self
        o = np.argsort(self.time_ns, kind="stable")
        return IoStream(self.time_ns[o], self.op[o], self.offset_bytes[o], self.length_bytes[o],
                        self.format, self.has_time, self.source,
                        self.notes + ["sorted by issue time (the trace was not in time order)"],
                        self.default_qd, None if self.line is None else self.line[o])

    def end_bytes(self) -> int:
        """Highest byte any I/O touches (0 for an empty stream)."""
        data = self.op != FLUSH
        return int((self.offset_bytes[data] + self.length_bytes[data]).max()) if data.any() else 0

    def summary(self) -> dict:
        """Counts and volumes as the Storage Bench descriptions give them."""
        n = len(self)
        out: dict = {"format": self.format, "ios": n}
        for code, name in enumerate(OP_NAMES):
            sel = self.op == code
            out[f"{name}_ios"] = int(sel.sum())
            if code != FLUSH:
                out[f"{name}_bytes"] = int(self.length_bytes[sel].sum())
        out["duration_s"] = float(self.time_ns[-1] - self.time_ns[0]) / 1e9 if n and self.has_time else 0.0
        if out["read_ios"] + out["write_ios"] == n:  # reads and writes only: no copies
            off, ln = self.offset_bytes, self.length_bytes
        else:
            data = np.flatnonzero(self.op <= WRITE)
            off, ln = self.offset_bytes[data], self.length_bytes[data]
        if off.size > 1:
            # sequential: starts where the previous read or write ended
            out["seq_pct"] = float((off[1:] == off[:-1] + ln[:-1]).mean() * 100.0)
        return out
