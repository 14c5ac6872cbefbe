"""A small deterministic FakeTarget speaking the Target protocol, so the methodology, store
and CLI can be tested fast without the simulator; and `fake...:NAME` drives for the CLI.
(A module of its own, not conftest.py: `from conftest import` would find whichever
conftest.py of tests/ was imported last.)"""

from __future__ import annotations

import math

import numpy as np

from ssdlab.phase import GB, Phase
from ssdlab.phase import Identity, Interrupted, PhaseResult
from ssdlab.targets.base import BaseTarget, Capabilities
from ssdlab.targets.spec import DriveSpec

CHUNK = 64 * 2**20


class FakeTarget(BaseTarget):
    """A drive with an SLC cache (fast until `cache_bytes` are written after a purge,
    TRIM or idle time), random writes that fall to a GC level after `burst_s` seconds,
    and random reads slower once the working set passes `map_bytes`.

    `interrupt_at=(phase_name, n)` stops that phase after n samples, raising
    Interrupted with the partial result (or KeyboardInterrupt without one when
    `bare_interrupt`); `fail_at=phase_name` raises `fail_with` (RuntimeError) there."""

    capabilities = Capabilities(simulated=False, replay=False)

    def __init__(self, capacity: int = 16 * GB, cache_bytes: int = 4 * GB,
                 interrupt_at: tuple[str, int] | None = None, bare_interrupt: bool = False,
                 fail_at: str | None = None, fail_with: type[Exception] = RuntimeError,
                 name: str = "fake"):
        self.capacity, self.cache_bytes, self.name = capacity, cache_bytes, name
        self.interrupt_at, self.bare_interrupt, self.fail_at = interrupt_at, bare_interrupt, fail_at
        self.fail_with = fail_with
        self.map_bytes = 4 * GB
        self.burst_s = 10.0
        self.ran: list[Phase] = []
        self._fresh()

    def _fresh(self) -> None:
        self.slc_used = 0.0
        self.rand_s = 0.0

    def identify(self) -> Identity:
        return Identity(kind="fake", model="FakeDrive", capacity=self.capacity,
                        firmware="fake 1", extra={"profile": {"cache_bytes": self.cache_bytes}})

    # speed of the next piece of I/O, given the drive's state
    def _rate(self, p: Phase, length: int) -> float:
        if p.read_pct == 100:
            if p.pattern == "seq":
                return 3000e6
            iops = 300_000 if length <= self.map_bytes else 150_000
            return min(iops, 20_000 * p.queue_depth * p.jobs) * p.block_size
        if p.pattern == "seq":
            w = 2000e6 if self.slc_used < self.cache_bytes else 500e6
        else:
            t = self.rand_s
            iops = 50_000 if t < self.burst_s else 12_000 + 3_000 * math.sin(t)
            w = min(iops, 10_000 * p.queue_depth * p.jobs) * p.block_size
        return w if p.read_pct == 0 else 1 / (p.read_pct / 100 / 3000e6 + (1 - p.read_pct / 100) / w)

    def run(self, phase: Phase, on_sample=None) -> PhaseResult:
        self.ran.append(phase)
        if phase.name == self.fail_at:
            raise self.fail_with(f"fake failure in {phase.name}")
        spec = phase.resolve(self.capacity)
        if phase.kind in ("purge", "trim"):
            self._fresh()
            return PhaseResult(phase, {}, {}, {}, {"duration_s": 0.01})
        if phase.kind == "write_cache":  # a drive without a cache of its own to switch
            return PhaseResult(phase, {}, {}, {}, {"write_cache_on": math.nan, "write_cache_set": 0.0})
        if phase.kind == "idle":
            self.slc_used = 0.0
            return PhaseResult(phase, {}, {}, {}, {"duration_s": float(phase.seconds)})
        # pieces of (bytes, seconds), each at the rate the state gives at its start
        pieces, moved, t = [], 0.0, 0.0
        while True:
            rate = self._rate(phase, spec["length"])
            step = CHUNK if phase.stop_bytes else rate * 0.25
            if phase.stop_bytes:
                step = min(step, phase.stop_bytes - moved)
            if phase.stop_seconds:
                step = min(step, rate * (phase.stop_seconds - t))
            if step <= 0:
                break
            dt = step / rate
            pieces.append((step, dt))
            moved, t = moved + step, t + dt
            written = step * (100 - phase.read_pct) / 100
            if phase.pattern == "seq":
                self.slc_used += written
            elif written:
                self.rand_s += dt
        cum_b = np.concatenate([[0.0], np.cumsum([b for b, _ in pieces])])
        cum_t = np.concatenate([[0.0], np.cumsum([d for _, d in pieces])])
        ticks = np.append(np.arange(1.0, math.floor(t) + 1), t) if t % 1 else np.arange(1.0, t + 1)
        ticks = np.unique(ticks[ticks > 0])
        b_at = np.interp(ticks, cum_t, cum_b)
        dt = np.diff(np.concatenate([[0.0], ticks]))
        mbps = np.diff(np.concatenate([[0.0], b_at])) / dt / 1e6
        iops = mbps * 1e6 / phase.block_size
        lat = phase.queue_depth * phase.jobs / np.maximum(iops, 1) * 1e6
        series = {"t_s": ticks, "iops": iops, "mbps": mbps, "lat_mean_us": lat}
        seg_edges = np.arange(phase.segment_bytes, moved + 1, phase.segment_bytes, dtype=float)
        seg_t = np.interp(seg_edges, cum_b, cum_t)
        segments = {"gb": seg_edges / GB,
                    "mbps": phase.segment_bytes / np.diff(np.concatenate([[0.0], seg_t])) / 1e6,
                    "t_s": seg_t}
        for i in range(ticks.size):
            if self.interrupt_at and self.interrupt_at[0] == phase.name and i == self.interrupt_at[1]:
                if self.bare_interrupt:
                    raise KeyboardInterrupt
                part = {k: v[:i] for k, v in series.items()}
                raise Interrupted(PhaseResult(phase, part, {}, {}, {"duration_s": float(ticks[i - 1]) if i else 0.0}))
            if on_sample:
                on_sample({k: float(v[i]) for k, v in series.items()})
        mean_lat = float(phase.queue_depth * phase.jobs / (moved / phase.block_size / t) * 1e6)
        latency = {"mean_us": mean_lat, "p50_us": mean_lat, "p99_us": 2 * mean_lat,
                   "max_us": 4 * mean_lat, "edges_us": np.array([mean_lat, 2 * mean_lat]),
                   "counts": np.array([99.0, 1.0])}
        wb = moved * (100 - phase.read_pct) / 100
        totals = {"duration_s": t, "ios": moved / phase.block_size, "iops": moved / phase.block_size / t,
                  "mbps": moved / t / 1e6, "read_bytes": moved - wb, "write_bytes": wb,
                  "waf": 1.0 if phase.pattern == "seq" or not wb else 2.5}
        return PhaseResult(phase, series, segments, latency, totals)


def with_fake_drives(parse):
    """`parse_drive` that also reads the tests' `fake...:NAME` drives (a FakeTarget the
    test's own open_target builds), as real drives named by themselves."""

    def parse_drive(text: str) -> DriveSpec:
        if text.split(":", 1)[0].startswith("fake"):
            return DriveSpec(text, "device", text)
        return parse(text)
    return parse_drive


class FinishingExecutor:
    """An executor that finishes the first `n` units it is given (longest first), then, with
    `stop`, meets a Ctrl-C."""
    kind = "pool"

    def __init__(self, n: int, stop: bool = False):
        self.n, self.stop = n, stop

    def run(self, units):
        from ssdlab.executor import _outcome, longest_first

        for u in longest_first(units)[:self.n]:
            yield _outcome(u)
        if self.stop:
            raise KeyboardInterrupt
