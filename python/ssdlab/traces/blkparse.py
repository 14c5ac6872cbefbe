"""blkparse text output (blktrace's default `blkparse -i TRACE` format), e.g.

      8,0    3       11     0.009507758   697  D   W 223490 + 8 [kjournald]

Units: sectors of **512 bytes** (blktrace's unit whatever the device's block size) for
the start and the count after '+'; time in **seconds** with nanosecond decimals.

Which events: `D` (issued to the device: what the drive saw, after merging), or `Q`
(queued by the application) when the trace has no `D` event; the one used is said in the
notes. A request the driver gave back (`R`, requeue) is dispatched again by a later `D`:
the dispatch it undid is dropped, so each request is replayed once (a dispatch can be undone
until its completion, C; the latest IN_FLIGHT are remembered; of two dispatches of the same
sectors in flight, a completion ends the older and a requeue undoes the later). RWBS: D = discard (trim), R = read, W = write, F with no data = flush, F before W (a
preflush: a journal commit's) = a flush and then the write, both at the event's time. Other
events (G, I, M, C, P, U, m ...) are skipped; the summary blkparse prints at the end
("CPU0 (8,0):", "Total (8,0):") ends the events. Every event must be of one device.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from typing import Iterable

import numpy as np

from .limits import Collector
from .stream import FLUSH, READ, TRIM, WRITE, IoStream, bad_line

SECTOR = 512
# dispatches that may still be requeued: those not completed (C), at most this many of the
# latest (more than a device's queues hold), so a trace without C events stays bounded
IN_FLIGHT = 1 << 16
# dispatches of the same sectors in flight at once (a rewritten block): kept, the latest
SAME_IN_FLIGHT = 256
EVENT = re.compile(r"\s*(\d+),(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\.(\d{1,9})\s+(\d+)\s+(\S+)\s+(\S+)"
                   r"(?:\s+(-?\d+)\s+\+\s+(-?\d+))?(?:\s|$)")
SUMMARY = re.compile(r"(CPU\d+|Total) \(")
# lines that look like events: a device "maj,min" first
LOOKS_LIKE_EVENT = re.compile(r"\s*\d+,\d+\s")


def is_event(line: str) -> bool:
    return EVENT.match(line) is not None


# per request (op, offset, bytes, preflush): the index in D of its dispatch in flight, or
# of each, oldest first, when several of the same sectors are
InFlight = OrderedDict[tuple[int, int, int, bool], "int | list[int]"]


def _put(dispatched: InFlight, key: tuple[int, int, int, bool], i: int) -> None:
    v = dispatched.get(key)
    if v is None:
        dispatched[key] = i  # one in flight, the usual case: no list
    elif isinstance(v, int):
        dispatched[key] = [v, i]
    else:
        v.append(i)
        if len(v) > SAME_IN_FLIGHT:
            del v[0]
    dispatched.move_to_end(key)


def _take(dispatched: InFlight, key: tuple[int, int, int, bool], latest: bool) -> int | None:
    """The dispatch of `key` a completion ends (the oldest) or a requeue undoes (the latest,
    as a driver gives back what it was just handed), no longer in flight."""
    v = dispatched.get(key)
    if v is None or isinstance(v, int):
        dispatched.pop(key, None)
        return v
    i = v.pop() if latest else v.pop(0)
    if len(v) == 1:
        dispatched[key] = v[0]
    return i


def parse(lines: Iterable[tuple[int, str]], path: str) -> IoStream:
    # per action (D, Q): times, ops, offsets, lengths
    got = {"D": Collector(path), "Q": Collector(path)}
    # requeues: the latest dispatch of each request (op, sector, bytes, preflush) in flight -> its
    # index in D (the write's, a preflush write's flush just before it)
    dispatched: InFlight = OrderedDict()
    requeued: list[int] = []  # indices in D (a preflush write: its flush's too)
    requeues = 0
    dev = None
    events, first, queued_or_issued = 0, 0, False
    for n, line in lines:
        if not line.strip():
            continue
        m = EVENT.match(line)
        if m is None:
            if SUMMARY.match(line):
                break
            what = "a malformed event" if LOOKS_LIKE_EVENT.match(line) else "not a blkparse event"
            raise bad_line(path, n, f"{what}: expected 'MAJ,MIN CPU SEQ SECONDS PID ACTION RWBS "
                           "[SECTOR + COUNT]' (blkparse's default output)")
        action, rwbs = m.group(8), m.group(9)
        events += 1
        first = first or n
        if action not in got and action not in ("R", "C"):
            continue
        queued_or_issued = queued_or_issued or action in got
        if action == "Q" and len(got["D"]):
            continue  # the D events are replayed: its Q events need not be kept
        d = (m.group(1), m.group(2))
        if dev is None:
            dev = d
        elif d != dev:
            raise bad_line(path, n, f"events of two devices ({','.join(dev)} and {','.join(d)}): "
                           "give the trace of one device (blkparse -i DEV)")
        ns = int(m.group(5)) * 1_000_000_000 + int(m.group(6).ljust(9, "0"))
        sector, count = m.group(10), m.group(11)
        if sector is not None and (int(sector) < 0 or int(count) < 0):
            raise bad_line(path, n, f"sector {sector} + {count}: sectors and counts are >= 0")
        nbytes = int(count) * SECTOR if count is not None else 0
        if "D" in rwbs:
            op = TRIM
        elif "R" in rwbs:
            op = READ
        elif "W" in rwbs:
            op = WRITE
        elif rwbs.startswith("F"):
            op = FLUSH
        else:
            continue  # no data, no flush (N): nothing for the drive to do
        if op != FLUSH and nbytes == 0:
            if "F" in rwbs:
                op = FLUSH  # a preflush with no data
            else:
                raise bad_line(path, n, f"{rwbs} event without 'SECTOR + COUNT' (or of 0 sectors)")
        offset = int(sector) * SECTOR if op != FLUSH and sector is not None else 0
        # a flush before the data (F first: a journal commit's preflush): the device is
        # asked to flush, then to write
        preflush = op == WRITE and rwbs.startswith("F")
        key = (op, offset, nbytes if op != FLUSH else 0, preflush)
        if action in ("R", "C"):
            i = _take(dispatched, key, latest=action == "R")
            if i is not None and action == "R":
                requeued.extend((i - 1, i) if preflush else (i,))
                requeues += 1
            continue
        if action == "D":
            if not len(got["D"]):
                got["Q"] = Collector(path)  # the Q events so far: not replayed
            _put(dispatched, key, len(got["D"]) + preflush)  # the write's index
            if len(dispatched) > IN_FLIGHT:
                dispatched.popitem(last=False)
        if preflush:
            got[action].add(n, ns, FLUSH, 0, 0)
        got[action].add(n, ns, op, offset, key[2])
    if events and not queued_or_issued:  # e.g. `blkparse -a complete`
        raise bad_line(path, first, f"{events} events, none is D (issued) or Q (queued): nothing "
                       "to replay; give blkparse's default output (no -a filter), which has them")
    action = "D" if len(got["D"]) or not len(got["Q"]) else "Q"
    out = got[action]
    if action == "D" and requeued:
        keep = np.ones(len(out), dtype=bool)
        keep[requeued] = False
        out.drop(keep)
    s = out.stream(format="blkparse", has_time=True)
    if action == "D" and requeued:
        s.notes.append(f"blkparse: {requeues} requeued dispatches (R) replayed once, when "
                       "dispatched again")
    s.notes.append(f"blkparse: replaying the {action} events ("
                   + ("issued to the device)" if action == "D" else "queued: the trace has no D events)"))
    return s
