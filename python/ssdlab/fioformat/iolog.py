"""fio iolog, versions 2 and 3 (what fio's `write_iolog` writes and `read_iolog` reads).

Units: offsets and lengths in **bytes**. Version 3 starts each line with a timestamp in
**microseconds** since the job started (fio's `utime_since_now`). Version 2 has no
timestamps; its `wait` action delays the next I/O by the given **microseconds** (version 3
ignores `wait`, as fio does). Lines:

    fio version 2 iolog                  fio version 3 iolog
    FILE add|open|close                  USEC FILE add|open|close
    FILE read|write|trim OFFSET LENGTH   USEC FILE read|write|trim OFFSET LENGTH
    FILE sync|datasync                   USEC FILE sync|datasync
    FILE wait USEC

File actions (add, open, close) are skipped; sync and datasync become flushes. I/Os of
several files all go to the one drive replayed on (as fio's `replay_redirect` does). Jobs
that share one `write_iolog` file each append their own log, header included: a header
again starts the next job's log, its times (v2: its waits) counted from its own start, and
the jobs' I/Os are merged by time.
Written (`v3_lines`, a trace replayed on a real drive through fio) as version 3, one file.
"""

from __future__ import annotations

from typing import Iterable, Iterator

import numpy as np

from ..traces.limits import MAX_SPAN_NS, MAX_SPAN_S, Collector
from ..traces.stream import FLUSH, READ, TRIM, WRITE, IoStream, bad_line

HEADERS = {"fio version 2 iolog": 2, "fio version 3 iolog": 3}
DATA_OPS = {"read": READ, "write": WRITE, "trim": TRIM}
FLUSH_OPS = ("sync", "datasync")
FILE_OPS = ("add", "open", "close")
ACTIONS = {**{op: name for name, op in DATA_OPS.items()}, FLUSH: FLUSH_OPS[0]}  # what v3_lines writes


def parse(lines: Iterable[tuple[int, str]], path: str) -> IoStream:
    it = iter(lines)
    first = next(it, (1, ""))[1].strip()
    version = HEADERS.get(first)
    if version is None:
        raise bad_line(path, 1, f"'{first[:60]}' is not a fio iolog header "
                       "('fio version 2 iolog' or 'fio version 3 iolog')")
    out = Collector(path, timed=version == 3)
    clock = 0  # v2: microseconds of `wait` so far
    files: set[str] = set()
    jobs = 1
    for n, line in it:
        f = line.split()
        if not f:
            continue
        again = HEADERS.get(" ".join(f)) if f[1:2] == ["version"] else None
        if again is not None:
            # jobs sharing one write_iolog file each write their own log, header and all
            if again != version:
                raise bad_line(path, n, f"a fio version {again} iolog header in a version {version} "
                               "log: give one log per file")
            jobs += 1
            clock = 0  # v2: the next job's waits count from its own start (v3: its own times)
            continue
        if version == 3:
            if len(f) < 3:
                raise bad_line(path, n, "expected 'USEC FILE ACTION [OFFSET LENGTH]'")
            try:
                clock = int(f[0])
            except ValueError:
                raise bad_line(path, n, f"timestamp '{f[0][:40]}' is not a whole number of "
                               "microseconds") from None
            if clock < 0:
                raise bad_line(path, n, f"timestamp {clock} is negative")
            f = f[1:]
        if len(f) < 2:
            raise bad_line(path, n, "expected 'FILE ACTION [OFFSET LENGTH]'")
        name, act = f[0], f[1]
        if act in FILE_OPS:
            files.add(name)
            continue
        if act == "wait":
            if version == 2:
                clock += _num(f, 2, path, n, "wait time (microseconds)")
                if clock * 1000 > MAX_SPAN_NS:
                    raise bad_line(path, n, f"the waits add up to {clock / 1e6:.3g} s: a trace spans "
                                   f"at most {MAX_SPAN_S:g} s (116 days)")
            continue
        if act in FLUSH_OPS:
            op, off, ln = FLUSH, 0, 0
        elif act in DATA_OPS:
            if len(f) != 4:
                raise bad_line(path, n, f"'{act}' needs OFFSET and LENGTH (bytes)")
            op = DATA_OPS[act]
            off = _num(f, 2, path, n, "offset (bytes)")
            ln = _num(f, 3, path, n, "length (bytes)")
            if ln == 0:
                raise bad_line(path, n, f"{act} of length 0")
        else:
            raise bad_line(path, n, f"unknown action '{act[:40]}' (expected read, write, trim, "
                           "sync, datasync, wait, add, open or close)")
        out.add(n, clock * 1000, op, off, ln)
    has_time = version == 3 or any(out.t)
    s = out.stream(format=f"fio-v{version}", has_time=has_time)
    if jobs > 1:
        s.notes.append(f"the logs of {jobs} jobs in one file: replayed together, each job's "
                       "times from its start")
    if len(files) > 1:
        s.notes.append(f"{len(files)} files in the log: all replayed on the one drive")
    if version == 2 and not has_time:
        s.notes.append("fio iolog v2 records no times: replayed closed-loop (--qd, default 1)")
    return s


def _num(f: list[str], i: int, path: str, n: int, what: str) -> int:
    if i >= len(f):
        raise bad_line(path, n, f"missing {what}")
    try:
        v = int(f[i], 0) if f[i].startswith("0x") else int(f[i])
    except ValueError:
        raise bad_line(path, n, f"{what} '{f[i][:40]}' is not a whole number") from None
    if v < 0:
        raise bad_line(path, n, f"{what} {v} is negative")
    return v


def v3_lines(time_ns: np.ndarray, s: IoStream, file: str) -> Iterator[str]:
    """`s` as a version 3 iolog of one file: its header, the file added and opened at 0,
    each I/O at `time_ns` (whole microseconds), the file closed at the last I/O's time."""
    us = (time_ns // 1000).astype(np.int64)
    yield next(h for h, v in HEADERS.items() if v == 3) + "\n"
    yield f"0 {file} {FILE_OPS[0]}\n0 {file} {FILE_OPS[1]}\n"
    for t, op, off, ln in zip(us.tolist(), s.op.tolist(), s.offset_bytes.tolist(),
                              s.length_bytes.tolist()):
        if op == FLUSH:
            yield f"{t} {file} {ACTIONS[op]}\n"
        else:
            yield f"{t} {file} {ACTIONS[op]} {off} {ln}\n"
    yield f"{int(us[-1]) if us.size else 0} {file} {FILE_OPS[2]}\n"
