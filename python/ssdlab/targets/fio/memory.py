"""The memory fio takes to run one io phase, what this machine has available, and the
check that refuses a phase whose fio would take more, before anything is written (the
local path: `FioTarget.preflight`; a drive host's agent checks against its own share,
remote/fio_memory.py).

What grows with the phase's fields (the job jobs.py writes for it):
- I/O buffers: a block per request in flight, `queue_depth` per job, `jobs` jobs (fio
  allocates them when the job starts and fills them with fresh data: refill_buffers);
- the latency histogram log (write_hist_log, a window every jobs.hist_window_ms: 100 ms,
  longer for a phase that may run more than an hour, never longer than a sample
  interval): fio keeps each window's whole histogram (1856 counters, 8 bytes each) of each
  job and direction in memory until the job ends: 145 KiB a second per job and direction
  in 100 ms windows (fio 3.33: a 15 s job in 1 ms windows peaked at 249 MB, in 1 s
  windows at 30 MB);
- the IOPS, bandwidth and latency logs: an entry per sample interval each (the bandwidth
  log one every jobs.HIST_MSEC when the windows are longer), also kept to the end.
The logs are counted over the longest the phase runs (jobs.longest_s: its stop_seconds,
or its stop_bytes at jobs.slowest_bps: 50 MB/s, 1000 IOPS for blocks under 50 KB); a drive
slower than that runs longer and fio takes more than counted."""

from __future__ import annotations

import math
import os
from pathlib import Path

from ...phase import Phase
from . import jobs

HIST_WINDOW_BYTES = 1856 * 8  # fio's FIO_IO_U_PLAT_NR counters, one histogram a window
LOG_ENTRY_BYTES = 64  # one entry of an IOPS, bandwidth or latency log (with its list overhead)
AVG_LOGS = 3  # write_iops_log, write_bw_log, write_lat_log
OVERRIDE_ENV = "SSDLAB_FIO_MEMORY"  # SIZE: the most fio may take for a phase here, instead of what is available


def directions(p: Phase) -> int:
    return 2 if 0 < p.read_pct < 100 else 1


def buffers(p: Phase) -> int:
    """Bytes of I/O buffers fio allocates for the phase."""
    return p.jobs * p.queue_depth * p.block_size


def logs(p: Phase) -> float:
    """Bytes fio keeps of its logs by the end of the phase, run as long as it may run
    (0 when nothing bounds it)."""
    seconds = jobs.longest_s(p.stop_bytes, p.stop_seconds, p.block_size)
    if not seconds:
        return 0.0
    avg_ms = max(1, round(p.sample_interval_s * 1000))
    hist_ms = jobs.hist_window_ms(avg_ms, seconds)
    ms = seconds * 1000
    per_stream = ms / hist_ms * HIST_WINDOW_BYTES + ms / avg_ms * AVG_LOGS * LOG_ENTRY_BYTES
    fine = jobs.fine_bw_ms(hist_ms)
    if fine:
        per_stream += ms / fine * LOG_ENTRY_BYTES
    return p.jobs * directions(p) * per_stream


def footprint(p: Phase) -> float:
    """Bytes fio takes for io phase `p`, by what grows with its fields (module docstring)."""
    return buffers(p) + logs(p)


def kb_field(text: str, key: str) -> float | None:
    for line in text.splitlines():
        if line.startswith(key + ":"):
            try:
                return float(line.split()[1]) * 1024
            except (IndexError, ValueError):
                return None
    return None


def _cgroup_room() -> float:
    """Room left under the cgroup v2 memory limits of this process and its ancestors."""
    try:
        rel = next(x[3:] for x in Path("/proc/self/cgroup").read_text().splitlines() if x.startswith("0::"))
    except (OSError, StopIteration):
        return math.inf
    room = math.inf
    d = Path("/sys/fs/cgroup") / rel.strip("/")
    while d != Path("/sys/fs/cgroup") and Path("/sys/fs/cgroup") in d.parents:
        try:
            limit, used = ((d / f).read_text().strip() for f in ("memory.max", "memory.current"))
            room = min(room, max(0.0, float(limit) - float(used)))
        except (OSError, ValueError):  # no controller here, or "max"
            pass
        d = d.parent
    return room


def available() -> float:
    """Bytes this host can still give a process (inf when it does not say)."""
    try:
        text = Path("/proc/meminfo").read_text()
    except OSError:
        text = ""
    mem = kb_field(text, "MemAvailable")
    return min(mem if mem is not None else math.inf, _cgroup_room())


def size(n: float) -> str:
    for unit, scale in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6)):
        if n >= scale:
            return f"{n / scale:.3g} {unit}"
    return f"{n / 1e3:.3g} kB"


class FioMemoryRefused(ValueError):
    """A phase whose fio would take more memory than this machine has (exit status 2)."""

    exit_code = 2


def _given() -> int | None:
    """SSDLAB_FIO_MEMORY as bytes (None when unset); ValueError in one line when no size."""
    from ... import units

    text = os.environ.get(OVERRIDE_ENV, "").strip()
    if not text:
        return None
    try:
        return units.parse_size(text, minimum=1 << 20)
    except ValueError as e:
        raise FioMemoryRefused(f"{OVERRIDE_ENV}={text[:40]}: {e}") from None


def largest(phases: list[Phase]) -> tuple[Phase, float] | None:
    """The io phase whose fio takes the most memory, and that footprint (None: no io phase)."""
    sized = [(p, footprint(p)) for p in phases if p.kind == "io"]
    return max(sized, key=lambda x: x[1], default=None)


def _has(given: int | None) -> str:
    return f"{OVERRIDE_ENV} gives" if given else "this machine has available"


def refusal(phases: list[Phase], where: str) -> str | None:
    """The one line `check` refuses with (None: every io phase fits)."""
    given = _given()
    may = float(given) if given else available()
    for p in phases:
        if p.kind != "io":
            continue
        need = footprint(p)
        if need <= may:
            continue
        long = jobs.longest_s(p.stop_bytes, p.stop_seconds, p.block_size) or 0.0
        by_bytes = not p.stop_seconds
        what = f"{size(buffers(p))} of I/O buffers"
        if logs(p):
            what += (f" and {size(logs(p))} of logs kept over up to {long / 3600:.3g} h"
                     + (f", its stop_bytes at {size(jobs.slowest_bps(p.block_size))}/s" if by_bytes else ""))
        return (f"{where}: phase {p.name or p.kind}: fio would take about {size(need)} of memory ({what}), more "
                f"than the {size(may)} {_has(given)}; run it on a machine with more free memory, or set "
                f"{OVERRIDE_ENV}=SIZE to let fio take up to SIZE (it may then run out of memory)")
    return None


def check(phases: list[Phase], where: str) -> None:
    """Refuse (FioMemoryRefused, one line) the first io phase whose fio would take more
    than this machine has available, or than SSDLAB_FIO_MEMORY when set; nothing runs."""
    why = refusal(phases, where)
    if why is not None:
        raise FioMemoryRefused(why)


PLAN_PREFIX = "# fio memory: "
PLAN_REFUSED = PLAN_PREFIX + "a run would be REFUSED: "


def plan_line(phases: list[Phase], where: str) -> str | None:
    """A plan's line on fio's memory: the largest io phase's estimate and what this machine
    has, or the refusal a run would meet (`check`'s line). None without io phases."""
    big = largest(phases)
    if big is None:
        return None
    try:
        why = refusal(phases, where)
    except FioMemoryRefused as e:  # SSDLAB_FIO_MEMORY unreadable: a run stops on it
        why = str(e)
    if why is not None:
        return PLAN_REFUSED + why
    p, need = big
    given = _given()
    may = float(given) if given else available()
    room = "" if math.isinf(may) else f"; {size(may)} {_has(given)}"
    return (f"{PLAN_PREFIX}about {size(need)} for its largest phase, {p.name or p.kind} "
            f"({size(buffers(p))} of I/O buffers, {size(logs(p))} of logs){room}")


__all__ = ["FioMemoryRefused", "OVERRIDE_ENV", "PLAN_PREFIX", "PLAN_REFUSED", "available", "buffers", "check",
           "directions", "footprint", "largest", "logs", "plan_line", "refusal", "size"]
