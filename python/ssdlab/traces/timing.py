"""From a parsed trace to what a drive replays: offsets fitted to the drive (refused past
its end, or wrapped with --wrap) and issue times (recorded gaps divided by --speed, each
gap capped at --idle-cap), or a closed loop at a fixed queue depth.

Units here: times in ns, offsets and lengths in bytes, like the stream itself.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np

from ..phase import Replay
from . import load, workloads
from .limits import MAX_SPAN_NS, MAX_SPAN_S
from .stream import FLUSH, IoStream, TraceError

SLOT = 4096
MAX_IO = 64 << 20  # the simulator's largest read or write
_cache: dict[tuple, IoStream] = {}
CACHED = 3  # streams kept (drives of different capacities get their own generated one)
# prepared replays, per (replay, capacity), with the stream each was made from: a run
# prepares the same replay for its check, its plan and the replay itself
_prepared: dict[tuple, tuple[IoStream, "Prepared"]] = {}


@dataclass
class Prepared:
    stream: IoStream  # offsets fitted to the drive
    time_ns: np.ndarray  # uint64 issue times (zeros in closed loop)
    queue_depth: int  # 0: open loop (as timed)
    mode: str  # "open loop x1 (idle cap 25 ms)", "closed loop QD4"
    notes: list[str]


def stream_of(path: str, fmt: str | None, capacity: int | None = None,
              progress=None) -> IoStream:
    """The parsed trace, cached per file version (a run prepares it for every drive); a
    built-in workload (`builtin:NAME[@SCALE]`) generated for a drive of `capacity` bytes
    (None: the one generated last, for its counts and volumes)."""
    if workloads.is_builtin(path):
        if capacity is None:
            last = [v for k, v in _cache.items() if k[0] == path]
            if last:
                return last[-1]
            capacity = 2**40
        key: tuple[str | int | None, ...] = (path, fmt, capacity)
        if key not in _cache:
            _remember(key, workloads.generate(path, capacity))
        return _cache[key]
    try:
        st = os.stat(path)
    except OSError:
        raise TraceError(f"trace file '{path}' not found") from None
    key = (os.path.abspath(path), fmt, st.st_mtime_ns, st.st_size)
    if key not in _cache:
        _remember(key, load(path, fmt, progress))
    return _cache[key]


def _remember(key: tuple, s: IoStream) -> None:
    while len(_cache) >= CACHED:  # the oldest goes
        _cache.pop(next(iter(_cache)))
    _cache[key] = s


def fit(s: IoStream, capacity: int, wrap: bool) -> IoStream:
    """Offsets within the drive's `capacity` bytes: refused past the end, or with `wrap`
    taken modulo the capacity (an I/O that would then cross the end starts earlier)."""
    cap = capacity - capacity % SLOT
    data = s.op != FLUSH
    big = data & (s.op != 2) & (s.length_bytes > MAX_IO)
    if big.any():
        i = int(np.flatnonzero(big)[0])
        raise TraceError(f"{s.source}: {s.at(i)}: {int(s.length_bytes[i])} bytes in one I/O: "
                         f"reads and writes are limited to {MAX_IO >> 20} MiB")
    end = s.end_bytes()
    if end <= cap:
        return s
    if not wrap:
        i = int(np.flatnonzero(data & (s.offset_bytes + s.length_bytes > cap))[0])
        raise TraceError(f"{s.source}: {s.at(i)}: the I/O reaches byte {int(s.offset_bytes[i] + s.length_bytes[i])}, "
                         f"past the drive's {cap} bytes (the trace spans {end} bytes): use a larger "
                         "drive, or --wrap to fold offsets into the drive")
    ln = np.minimum(s.length_bytes, cap)
    off = s.offset_bytes % cap
    cross = off + ln > cap
    off = np.where(cross, (cap - ln) // SLOT * SLOT, off)
    off = np.where(data, off, 0)
    out = IoStream(s.time_ns, s.op, off, ln, s.format, s.has_time, s.source,
                   s.notes + [f"--wrap: offsets past {cap} bytes folded into the drive "
                              f"({int((data & (s.offset_bytes + s.length_bytes > cap)).sum())} I/Os)"],
                   line=s.line)
    return out


def issue_times(t: np.ndarray, speed: float, idle_cap_ns: int | None, source: str = "") -> np.ndarray:
    """Open-loop issue times: each gap between consecutive I/Os divided by `speed`, then
    capped at `idle_cap_ns` (the Storage Bench rule: idle time is cut to 25 ms). The replay
    spans at most MAX_SPAN_S of simulated time."""
    gaps = np.diff(t.astype(np.float64), prepend=float(t[0]) if t.size else 0.0) / speed
    if idle_cap_ns is not None:
        gaps = np.minimum(gaps, float(idle_cap_ns))
    times = np.cumsum(gaps)
    if times.size and not times[-1] <= MAX_SPAN_NS:
        raise TraceError(f"{source}: replayed at --speed {speed:g} the trace spans {times[-1] / 1e9:.3g} s "
                         f"of simulated time; at most {MAX_SPAN_S:g} s (116 days): give a higher "
                         "--speed or an --idle-cap")
    return np.round(times).astype(np.uint64)


def mode(r: Replay, s: IoStream) -> tuple[int, str, list[str]]:
    """(queue depth, 0 for open loop; the mode in words; notes) for replaying `s`."""
    notes = list(s.notes)
    qd = r.queue_depth
    if qd is None and not s.has_time:
        qd = s.default_qd
    if qd is not None:
        if r.speed != 1.0 or r.idle_cap_s is not None:
            notes.append("--speed and --idle-cap do not apply to a closed loop (fixed QD)")
        return qd, f"closed loop QD{qd}", notes
    cap = "" if r.idle_cap_s is None else f", idle cap {r.idle_cap_s * 1e3:g} ms"
    return 0, f"open loop, speed x{r.speed:g}{cap}", notes


def prepare(r: Replay, capacity: int) -> Prepared:
    """What a drive of `capacity` bytes replays for `r` (kept while the parsed stream is the
    same one: its arrays are shared, never changed in place)."""
    parsed = stream_of(r.trace, r.format, capacity)
    key = (r, capacity)
    kept = _prepared.get(key)
    if kept is not None and kept[0] is parsed:
        return kept[1]
    s = fit(parsed, capacity, r.wrap)
    qd, how, notes = mode(r, s)
    if qd:
        p = Prepared(s, np.zeros(len(s), np.uint64), qd, how, notes)
    else:
        cap_ns = None if r.idle_cap_s is None else round(r.idle_cap_s * 1e9)
        p = Prepared(s, issue_times(s.time_ns, r.speed, cap_ns, s.source), 0, how, notes)
    while len(_prepared) >= CACHED:  # the oldest goes
        _prepared.pop(next(iter(_prepared)))
    _prepared[key] = (parsed, p)
    return p
