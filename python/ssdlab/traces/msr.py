"""MSR Cambridge block traces (SNIA IOTTA), one CSV line per I/O:

    Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime
    128166372003061629,wdev,0,Read,6832128,4096,4202

Units: Timestamp in Windows **FILETIME** ticks (**100 ns** since 1601-01-01), Offset and
Size in **bytes**, ResponseTime (the latency recorded on the original server, not used
for replay) in **100 ns** ticks. Type is Read or Write. A header line naming the columns
is allowed, after blank lines and '#' comments if any. Every line must be of one disk (the
files are one per host and disk).
"""

from __future__ import annotations

from typing import Iterable

from .limits import Collector
from .stream import READ, WRITE, IoStream, bad_line, is_comment

TICK_NS = 100
TYPES = {"read": READ, "write": WRITE}


def looks_like(line: str) -> bool:
    f = line.strip().split(",")
    return (len(f) == 7 and f[3].strip().lower() in TYPES) or line.startswith("Timestamp,Hostname,")


def parse(lines: Iterable[tuple[int, str]], path: str) -> IoStream:
    out = Collector(path)
    disk = None
    preamble = True  # before the first I/O or the header: comments may come
    for n, line in lines:
        line = line.strip()
        if not line or (preamble and is_comment(line)):
            continue
        if preamble:
            preamble = False
            if line.startswith("Timestamp,"):
                continue  # the header
        f = line.split(",")
        if len(f) != 7:
            raise bad_line(path, n, f"{len(f)} fields, expected 7: Timestamp,Hostname,DiskNumber,"
                           "Type,Offset,Size,ResponseTime")
        op = TYPES.get(f[3].strip().lower())
        if op is None:
            raise bad_line(path, n, f"Type '{f[3][:20]}': expected Read or Write")
        try:
            ts, off, size = int(f[0]), int(f[4]), int(f[5])
        except ValueError:
            raise bad_line(path, n, "Timestamp (100 ns FILETIME ticks), Offset and Size (bytes) "
                           "must be whole numbers") from None
        if ts < 0 or off < 0 or size <= 0:
            raise bad_line(path, n, "Timestamp and Offset must be >= 0 and Size > 0")
        d = (f[1].strip(), f[2].strip())
        if disk is None:
            disk = d
        elif d != disk:
            raise bad_line(path, n, f"disk {'/'.join(d)} after disk {'/'.join(disk)}: give the "
                           "trace of one disk (the MSR files are one per host and disk)")
        out.add(n, ts * TICK_NS, op, off, size)
    return out.stream(format="msr", has_time=True)
