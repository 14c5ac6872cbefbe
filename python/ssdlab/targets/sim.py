"""Simulated drive: runs phases on ssdlab._sim in virtual time."""

from __future__ import annotations

from typing import cast

import numpy as np

from .. import _sim
from ..errors import UserError
from ..phase import Identity, Interrupted, OnSample, Phase, PhaseResult, ResolvedPhase
from ..sim_types import FioJobSpec, FioRunResult, ReplayResult, RunResult, columns, floats
from .base import BaseTarget, Capabilities
from .hostid import platform_info
from .sim_state import KEPT_KINDS, DriveState, StateCache, StateKey, phase_key, renamed


# the logical block every simulated drive addresses (its workloads address 4 KiB blocks: a
# 4Kn drive to the PTS)
LOGICAL_BLOCK = 4096


def table_bytes(profile_text: str, overrides: list[str] | None = None) -> float:
    """The simulator's memory for a profile (its tables, sized from the geometry), checked
    as building the drive would check it: the one estimate every scheduler uses."""
    return float(_sim.Drive.check(profile_text, list(overrides or [])))


def capacity(profile_text: str, overrides: list[str] | None = None) -> int:
    """User bytes of the drive a profile describes, without building it."""
    return int(_sim.Drive.describe(profile_text, list(overrides or []))["user_bytes"])


def check_seed(seed: int) -> int:
    """The simulator's seed is a u64."""
    if not 0 <= seed < 2**64:
        raise UserError(f"--seed {seed}: must be 0 to 2**64-1")
    return seed


def _result(phase: Phase, raw: RunResult | ReplayResult | FioRunResult) -> PhaseResult:
    # the histogram's edges are its buckets' upper bounds (analysis/latency_hist.py)
    return PhaseResult(phase=phase, series=columns(raw["series"]), segments=columns(raw["segments"]),
                       latency=dict(raw["latency"], hist_edges="upper"), totals=floats(raw["totals"]))


class SimTarget(BaseTarget):
    """A simulated drive: writes nothing but the results store, so it has nothing to check,
    plan or let go of. With `states` (sim_state.py), phases a kept drive state already
    holds are answered from it, and states the cache keeps are taken as they are reached."""

    capabilities = Capabilities(simulated=True, counters=True)

    def __init__(self, profile_text: str, overrides: list[str] | None = None, seed: int = 42,
                 states: StateCache | None = None):
        self.profile_text, self.overrides, self.seed = profile_text, list(overrides or []), seed
        self.drive = _sim.Drive(profile_text, overrides=self.overrides, seed=seed)
        self.info = self.drive.info()
        self.name = f"sim:{self.info['id']}"
        self.states = states
        # the key of the drive's state (None once a phase keeps none), the resolved phases
        # and results so far, and the kept state the drive follows but has not loaded yet
        self.key: StateKey | None = StateKey.new(profile_text, self.overrides, seed)
        self.specs: list[ResolvedPhase] = []
        self.results: list[PhaseResult] = []
        self.following: DriveState | None = None
        # the drive is in a state the cache wants, not kept yet: kept (copied) before the
        # next phase runs, or handed over without a copy when the target closes
        self.unkept = False
        # where a fio job's logs of an entry per I/O are written as it runs (`run fio
        # --log-dir`, for the run's first drive: the drive whose logs are written)
        self.fio_log_dir: str | None = None

    def fresh(self) -> SimTarget:
        """A new drive of the same profile, overrides and seed (the next test's)."""
        return SimTarget(self.profile_text, self.overrides, self.seed)

    def identify(self) -> Identity:
        i = self.info
        return Identity(kind="sim", model=i["name"], capacity=int(i["user_bytes"]),
                        firmware=f"ssdsim {_sim.__version__}", serial=i["id"],
                        extra={"profile": self.drive.profile(), "info": i,
                               "logical_block": LOGICAL_BLOCK, "platform": platform_info()})

    def run(self, phase: Phase, on_sample: OnSample | None = None) -> PhaseResult:
        if phase.kind == "write_cache":
            return self._write_cache(phase)
        spec = phase.resolve(int(self.info["user_bytes"])) if phase.kind in KEPT_KINDS else None
        pk = phase_key(spec) if spec is not None else None
        key = self.key.then(pk) if self.key is not None and pk is not None else None
        if key is not None and spec is not None and self.states is not None:
            hit = self.states.find(key)
            if hit is not None:
                ds, i = hit
                self._keep(copy=False)  # the drive now follows another state
                self.following, self.key = ds, key
                self.states.hits += 1
                return self._kept(spec, renamed(ds.results[i], phase))
        self._load()
        self._keep(copy=True)
        self.key = None  # until the phase is complete: an interrupted one keeps no state
        if phase.kind == "replay":
            return self._replay(phase, on_sample)
        if phase.kind == "fiojob":
            return self._fiojob(phase, on_sample)
        assert spec is not None
        try:
            raw = self.drive.run(spec, on_sample)
        except KeyboardInterrupt as e:
            partial = getattr(e, "partial", None)
            raise Interrupted(_result(phase, partial) if partial else None) from e
        res = self._kept(spec, _result(phase, raw))
        self.key = key
        self.unkept = key is not None and self.states is not None and self.states.wants(key)
        return res

    def _write_cache(self, phase: Phase) -> PhaseResult:
        """The simulated drive's write buffer is part of its profile: always on, never
        switched (the drive's state, and so the state cache's key, is unchanged)."""
        z = np.zeros(0)
        return PhaseResult(phase=phase, series={"t_s": z}, segments={"gb": z, "mbps": z, "t_s": z},
                           latency={"edges_us": z, "counts": z},
                           totals={"write_cache_on": 1.0, "write_cache_set": 0.0})

    def _keep(self, copy: bool) -> None:
        """Hand the state the cache wants to it: a copy, or the drive's own state."""
        if not self.unkept or self.states is None or self.key is None:
            return
        self.unkept = False
        state = self.drive.snapshot() if copy else self.drive.into_state()
        self.states.put(DriveState(self.key, state, tuple(self.results)))

    def close(self) -> None:
        """A state the cache wants is handed over without a copy (the run is over)."""
        self._keep(copy=False)

    def _kept(self, spec: ResolvedPhase, res: PhaseResult) -> PhaseResult:
        self.specs.append(spec)
        self.results.append(res)
        return res

    def _load(self) -> None:
        """Bring the drive to the state its phases so far left (it may only follow a kept
        state): load that state, or, when the phases left it part way through the state's
        recipe, run them again on a new drive (the simulator is deterministic)."""
        ds, self.following = self.following, None
        if ds is None:
            return
        if len(ds.key.recipe) != len(self.specs) and self.states is not None and self.key is not None:
            ds = self.states.get(self.key) or ds
        if len(ds.key.recipe) == len(self.specs) and self.states is not None:
            self.drive = self.states.load(ds)
            return
        self.drive = _sim.Drive(self.profile_text, overrides=self.overrides, seed=self.seed)
        for spec in self.specs:
            self.drive.run(spec)

    def _replay(self, phase: Phase, on_sample: OnSample | None) -> PhaseResult:
        """A trace in virtual time, in one call into the simulator (traces/timing.py)."""
        from ..traces.timing import prepare

        assert phase.replay is not None  # Phase's validator: a replay phase carries its trace
        p = prepare(phase.replay, int(self.info["user_bytes"]))
        s = p.stream
        try:
            # int64 to uint64 as the same bits, as astype would give them, without copying
            raw = self.drive.replay(p.time_ns, s.op, _u64(s.offset_bytes), _u64(s.length_bytes),
                                    queue_depth=p.queue_depth,
                                    sample_interval_s=phase.sample_interval_s,
                                    segment_bytes=phase.segment_bytes, on_sample=on_sample)
        except KeyboardInterrupt as e:
            partial = getattr(e, "partial", None)
            raise Interrupted(_replay_result(phase, partial) if partial else None) from e
        return _replay_result(phase, raw)

    def _fiojob(self, phase: Phase, on_sample: OnSample | None) -> PhaseResult:
        """A fio job file's jobs, generated and run in the simulator (fiojob/)."""
        assert phase.fiojob is not None  # Phase's validator: a fiojob phase carries its jobs
        try:
            # the compiled jobs (fiojob.compile's Compiled.spec()), checked against FioJobSpec
            # by tests/sim/test_boundary.py
            jobs = cast("list[FioJobSpec]", phase.fiojob.jobs)
            raw = self.drive.run_fiojob(jobs, sample_interval_s=phase.sample_interval_s,
                                        segment_bytes=phase.segment_bytes, on_sample=on_sample,
                                        log_dir=self.fio_log_dir)
        except KeyboardInterrupt as e:
            partial = getattr(e, "partial", None)
            raise Interrupted(_fiojob_result(phase, partial) if partial else None) from e
        return _fiojob_result(phase, raw)


def _u64(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(a).view(np.uint64) if a.dtype == np.int64 else a.astype(np.uint64)


def _fiojob_result(phase: Phase, raw: FioRunResult) -> PhaseResult:
    """Each job's figures ride in `latency` as `jobs` (stored with the phase)."""
    r = _result(phase, raw)
    r.latency = dict(r.latency, jobs=raw["jobs"])
    return r


def _replay_result(phase: Phase, raw: ReplayResult) -> PhaseResult:
    """Read and write latency histograms ride in `latency` (stored with the phase)."""
    r = _result(phase, raw)
    r.latency = dict(r.latency, read=raw["read_latency"], write=raw["write_latency"])
    return r


__all__ = ["SimTarget"]
