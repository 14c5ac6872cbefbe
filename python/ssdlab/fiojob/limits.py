"""What a job file may ask of the simulator, checked before anything is built or run: the
number of jobs (fio's own limit), the memory the jobs' random maps and verify logs take,
the queues' depth in all, and the virtual time a job needs at its rates and think times
(at most what `--seconds` allows). Each refusal is one line naming the cause and the fix."""

from __future__ import annotations

from pathlib import Path

from . import FioJobError
from . import options as O

MAX_JOBS = 4096  # fio's REAL_MAX_JOBS: jobs and numjobs clones in all
MAX_BSSPLIT = 64  # fio's BSSPLIT_MAX: block sizes per direction
MAX_DEPTH = 1 << 20  # I/Os in flight over every job
MAP_BUDGET = 1 << 30  # bytes of random maps and verify logs over every job
_PIECE_BYTES = 48  # a verify log entry at most (fiojob/verify.rs ENTRY_BYTES)


def count_jobs(path: Path, jobs_opts: list, max_clones: int) -> None:
    """Jobs times their numjobs, from the options alone: over fio's limit is refused
    before a single job is compiled."""
    total = 0
    for sec, opts in jobs_opts:
        n = 1
        for k, v, where in opts:
            if O.canonical(k) == "numjobs":
                n = O.integer(v, "numjobs", where, 1, max_clones)
        total += n
        if total > MAX_JOBS:
            raise FioJobError(f"{path}: over {MAX_JOBS} jobs (sections x numjobs, up to {sec.where}): "
                              f"fio runs at most {MAX_JOBS}: use fewer sections or a smaller numjobs")


def _map_bytes(j) -> int:
    """Bytes of the job's random map (one bit per block) when its I/Os may cover several
    blocks (twice with verify: the pass's stream is kept to draw the writes again), and of
    a verify log kept as entries (no random map: one per written piece at most; fewer with
    a backlog, which reads them as it goes; sequential fixed-size writes: one)."""
    sizes = [b for d in j.bs for b, w in d if w > 0] + [a for a, b in j.bs_range if b]
    ba = j.ba or min(sizes or [4096])
    mixed = any(b for _, b in j.bs_range) or any(b != ba for b in sizes)
    mapped = j.random and j.randommap
    out = j.size // ba // 8 * (2 if j.verify else 1) if mapped and j.dist == "random" and mixed else 0
    if j.verify and (not mapped or j.zbd_zone_size):
        pieces = j.size // min(sizes or [4096])
        if j.verify[1]:  # verify_backlog
            pieces = min(pieces, 4 * (j.verify[1] + j.iodepth))
        elif not j.random and j.bs_range == [(0, 0)] * 3 and len(j.bs[1]) == 1:
            pieces = 1
        out += pieces * _PIECE_BYTES
    return out


def _virtual_ns(j) -> int:
    """The least virtual time a job without a runtime needs: its bytes or I/Os at its
    rates, its think time per think block. 0 when its runtime bounds it."""
    if j.runtime_ns or j.time_based:
        return 0
    sizes = [b for d in j.bs for b, w in d if w > 0] + [b for _, b in j.bs_range if b]
    big = max(sizes or [4096])
    share = [j.rwmixread / 100, 1 - j.rwmixread / 100, 1.0] if j.read and j.write else [1.0] * 3
    nbytes = j.io_size * j.loops
    ios = j.number_ios * j.loops if j.number_ios else nbytes // big
    ns = 0.0
    for d in range(3):
        if j.rate_bps[d]:
            ns = max(ns, nbytes * share[d] / j.rate_bps[d] * 1e9)
        if j.rate_iops[d]:
            ns = max(ns, ios * share[d] / j.rate_iops[d] * 1e9)
    if j.thinktime_ns:
        ns += ios // max(1, j.thinktime_blocks) * j.thinktime_ns
    return int(ns) + j.startdelay_ns + j.ramp_ns


def check(path: Path, jobs: list) -> None:
    depth = sum(j.iodepth for j in jobs)
    if depth > MAX_DEPTH:
        raise FioJobError(f"{path}: the jobs' iodepth add up to {depth}: over {MAX_DEPTH} I/Os in "
                          "flight at once: use a smaller iodepth or fewer jobs")
    mem = sum(_map_bytes(j) for j in jobs)
    if mem > MAP_BUDGET:
        raise FioJobError(f"{path}: the jobs' random maps and verify logs take {mem / 2**30:.1f} GiB "
                          f"(fio keeps them too): over ssdlab's {MAP_BUDGET >> 30} GiB: use a smaller "
                          "size, fewer jobs, norandommap or one block size")
    longest = O.MAX_SECONDS * 1e9
    waves: dict[int, int] = {}
    for j in jobs:
        ns = _virtual_ns(j) or (j.startdelay_ns + j.ramp_ns + j.runtime_ns)
        if ns > longest:
            raise FioJobError(f"{path}: job {j.name}: needs {ns / 1e9:.3g} s of virtual time at its rate "
                              f"and think time: over {O.MAX_SECONDS:g} s (116 days), the longest run "
                              "(as --seconds): give runtime= or a higher rate")
        waves[j.wave] = max(waves.get(j.wave, 0), ns)
    if sum(waves.values()) > longest:
        raise FioJobError(f"{path}: the stonewalled jobs need {sum(waves.values()) / 1e9:.3g} s of virtual "
                          f"time in all: over {O.MAX_SECONDS:g} s (116 days), the longest run: give "
                          "shorter runtimes")
