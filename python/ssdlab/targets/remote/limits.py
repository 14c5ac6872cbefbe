"""How much a client may ask of a drive host's agent (remote/agent.py) in one phase: what
the agent keeps of a phase (its samples, its segments) grows with the phase, so a phase
may grow it no faster than ssdlab's own tests do by much, and not without end.

- a sample at most every MIN_INTERVAL_S (ssdlab's tests take one a second): an idle phase
  asking for one a nanosecond filled the agent's memory in under a minute;
- at most MAX_SEGMENTS segments of segment_bytes in the bytes the phase may move (its
  stop_bytes, or its stop_seconds at MAX_RATE): a fill of 4 TB in 1 GB segments records
  4000;
- an idle phase at most MAX_IDLE_SAMPLES samples of each kind over its seconds: one each
  sample_interval_s, and the drive's temperature each second whatever the interval (a
  week at ssdlab's one a second is 604,800), so its seconds are capped: at most
  MAX_IDLE_SAMPLES s (11.6 days), less with an interval under a second;
- the memory fio takes for the phase (fio/memory.py: its I/O buffers, jobs x
  queue_depth x block_size, and the logs it keeps over the longest the phase runs: its
  stop_seconds, or its stop_bytes at fio/jobs.slowest_bps) at most what the host's owner
  gives (--fio-memory) or half of what the host has available: ssdlab's largest, a PTS
  step of 1 MiB blocks at 4 threads x QD32, takes 128 MiB of buffers; its 30-minute HIR
  baseline 1.1 GB of logs; a 4 TB fill 2.4 GB (22 h at 50 MB/s). While a phase runs the
  agent watches what fio takes (a drive slower than that runs longer) and stops it past
  the same bound.

A fio job file's phase (`fiojob`, simulated drives only) is refused as well. A phase over
any is refused with one line before it runs (checked by `preflight` too, so
a run is refused before anything is stored). `plan` refuses a phase over the first two the
same way, and for fio's memory says in its `# fio memory:` line what the agent lets a phase
take, or the refusal a run would meet (`plan_line`)."""

from __future__ import annotations

from ...phase import Phase
from ..fio import jobs
from . import fio_memory

MIN_INTERVAL_S = 0.1
MAX_SEGMENTS = 1_000_000
MAX_RATE = 10**10  # bytes a second: more than a drive moves, to bound a phase that stops on time
MAX_IDLE_SAMPLES = 1_000_000


def check(p: Phase, fio_memory_given: int | None = None, memory: bool = True) -> Phase:
    """`p`, or ValueError when it asks for more than the agent keeps (or, `memory`, lets fio
    take: `fio_memory_given` by the host's owner, else half of what the host has available)."""
    what = f"phase {p.name or p.kind}"
    if p.kind == "fiojob":  # a job file's jobs, compiled for a simulated drive: not a phase of ssdlab's
        raise ValueError(f"{what}: a fio job file's phase runs on simulated drives only (ssdlab run fio); "
                         "this host's agent runs ssdlab's own phases (purge, io, trim, idle, write_cache)")
    if p.sample_interval_s < MIN_INTERVAL_S:
        raise ValueError(f"{what}: a sample every {p.sample_interval_s:g} s: this host's agent takes one at "
                         f"most every {MIN_INTERVAL_S:g} s; ask for sample_interval_s >= {MIN_INTERVAL_S:g}")
    if p.kind == "idle":
        step = min(p.sample_interval_s, 1.0)  # the temperature is read each second
        most = MAX_IDLE_SAMPLES * step
        if (p.seconds or 0.0) > most:
            raise ValueError(f"{what}: idle for {p.seconds:g} s: this host's agent records at most "
                             f"{MAX_IDLE_SAMPLES} samples of an idle phase (one each {p.sample_interval_s:g} s; "
                             f"the drive's temperature each second), {most:g} s; ask for at most {most:g} "
                             "seconds, or several idle phases")
    if p.kind == "io":
        moved = p.stop_bytes if p.stop_bytes is not None else (p.stop_seconds or 0.0) * MAX_RATE
        if moved / p.segment_bytes > MAX_SEGMENTS:
            raise ValueError(f"{what}: up to {moved / p.segment_bytes:.3g} segments of {p.segment_bytes} bytes "
                             f"(in {'its stop_bytes' if p.stop_bytes is not None else 'its stop_seconds at 10 GB/s'}"
                             f"): this host's agent records at most {MAX_SEGMENTS} in a phase; ask for larger "
                             "segment_bytes")
        why = memory_refusal(p, fio_memory_given) if memory else None
        if why is not None:
            raise ValueError(why)
    return p


def memory_refusal(p: Phase, fio_memory_given: int | None = None) -> str | None:
    """The line an io phase whose fio would take more than the agent lets it is refused
    with (None: it fits)."""
    need, may = fio_memory.footprint(p), fio_memory.bound(fio_memory_given)
    if need <= may:
        return None
    logs = ("" if fio_memory.logs(p) * 10 < need else " and its logs over stop_seconds" if p.stop_seconds
            else f" and its logs over stop_bytes at {fio_memory.size(jobs.slowest_bps(p.block_size))}/s")
    return (f"phase {p.name or p.kind}: fio would take about {fio_memory.size(need)} of this host's memory "
            f"(jobs x queue_depth x block_size of I/O buffers{logs}): this host's agent "
            f"lets a phase take at most {fio_memory.size(may)} "
            f"({fio_memory.whose(fio_memory_given)}); ask for fewer jobs, a lower "
            "queue_depth, smaller blocks or a shorter stop_seconds")


def plan_line(phases: list[Phase], fio_memory_given: int | None = None) -> str | None:
    """The agent's plan's line on fio's memory: the largest io phase's estimate against the
    most the agent lets a phase take, or the refusal a run would meet (the first phase over
    it, as `check` refuses it). None without io phases."""
    big = fio_memory.largest(phases)
    if big is None:
        return None
    for p in phases:
        why = memory_refusal(p, fio_memory_given) if p.kind == "io" else None
        if why is not None:
            return fio_memory.PLAN_REFUSED + why
    p, need = big
    return (f"{fio_memory.PLAN_PREFIX}about {fio_memory.size(need)} for its largest phase, {p.name or p.kind} "
            f"({fio_memory.size(fio_memory.buffers(p))} of I/O buffers, {fio_memory.size(fio_memory.logs(p))} of "
            f"logs); this host's agent lets a phase take at most {fio_memory.size(fio_memory.bound(fio_memory_given))} "
            f"({fio_memory.whose(fio_memory_given)})")


__all__ = ["MAX_IDLE_SAMPLES", "MAX_RATE", "MAX_SEGMENTS", "MIN_INTERVAL_S", "check", "memory_refusal", "plan_line"]
