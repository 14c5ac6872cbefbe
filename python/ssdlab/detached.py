"""A test on one simulated drive, computed away from the store (in a worker process or on
a Ray node) and then recorded here by the usual runner through a `Replay` target: a run
computed elsewhere is stored exactly as `ssdlab run` stores it (same phases, metrics from
the same `analyze`, a failure at the same phase)."""

from __future__ import annotations

import time
from dataclasses import dataclass

from .methodology import Options, get
from .phase import Phase
from .phase import Identity, Interrupted, OnSample, PhaseResult
from .targets.base import BaseTarget, Capabilities
from .targets.sim_state import StateCache, StateKey, plan_keys, share_groups


@dataclass(frozen=True)
class DriveJob:
    """Everything a worker needs, picklable: the profile travels as text, so a worker on
    another host needs ssdlab but not the user's profile files."""
    spec: str  # the --drive as given (sim:PROFILE or a .toml file)
    profile_text: str
    overrides: tuple[str, ...]
    seed: int
    test: str
    opts: Options


@dataclass
class Computed:
    identity: Identity
    results: list[PhaseResult]
    error: Exception | None = None  # raised by the phase after the last result
    wall_s: float = 0.0


def job_for(spec: str, text: str, overrides: list[str] | tuple[str, ...], seed: int, test: str,
            opts: Options) -> DriveJob:
    """The job of `test` on the simulated drive labelled `spec`, built from profile `text`."""
    return DriveJob(spec, text, tuple(overrides), seed, test, opts)


def compute(job: DriveJob, states: StateCache | None = None) -> Computed:
    """Run the test on a fresh simulated drive (a worker's entry point); with `states`, the
    phases a kept drive state holds come from it (targets/sim_state.py)."""
    from .runner import walk_phases
    from .targets.sim import SimTarget

    t0 = time.time()
    target = SimTarget(job.profile_text, list(job.overrides) or None, seed=job.seed, states=states)
    ident = target.identify()
    out = Computed(ident, [])

    def keep(seq: int, res: PhaseResult | None, status: str) -> None:
        if res is not None:  # None: an interrupt before any sample (the run stops anyway)
            out.results.append(res)

    try:
        walk_phases(get(job.test), target, ident.capacity, job.opts, on_end=keep)
    except Interrupted:  # Ctrl-C inside the simulator: the run stops, it did not fail
        raise
    except Exception as e:  # recorded as the sequential run records it: a failed phase
        out.error = e
    finally:
        target.close()  # a drive state the group keeps is handed over
    out.wall_s = time.time() - t0
    return out


def compute_group(jobs: tuple[DriveJob, ...], keep: dict[StateKey, int]) -> list[Computed]:
    """Run tests that begin alike one after another in this process, each later one taking
    the drive states the earlier ones kept (a worker's entry point; `plan_groups`)."""
    states = StateCache(keep)
    return [compute(job, states) for job in jobs]


def state_keys(job: DriveJob) -> list[StateKey]:
    """The drive states a job's phases pass through (its plan, results unknown)."""
    from .runner import plan_phases
    from .targets.sim import capacity

    cap = capacity(job.profile_text, list(job.overrides))
    base = StateKey.new(job.profile_text, job.overrides, job.seed)
    return plan_keys(base, plan_phases(job.test, cap, job.opts), cap)


def plan_groups(jobs: list[DriveJob]) -> list[tuple[list[int], dict[StateKey, int]]]:
    """The jobs (by index) in groups that share drive states, and the states each group
    keeps (with how many of its jobs reach each): a job whose first phases no other job
    shares is a group of its own."""
    keys = [state_keys(j) for j in jobs]
    groups, keep = share_groups(keys)
    return [(g, {k: keep[k] for i in g for k in keys[i] if k in keep}) for g in groups]


class Replay(BaseTarget):
    """A Target that hands back phases computed elsewhere, in order."""

    capabilities = Capabilities(simulated=True, counters=True)

    def __init__(self, spec: str, computed: Computed):
        self.name = spec
        self.computed = computed
        self.next = 0

    def identify(self) -> Identity:
        return self.computed.identity

    def run(self, phase: Phase, on_sample: OnSample | None = None) -> PhaseResult:
        c = self.computed
        if self.next < len(c.results):
            res = c.results[self.next]
            if res.phase != phase:
                raise RuntimeError(f"replayed phase {self.next} is '{res.phase.name}', the plan "
                                   f"asks for '{phase.name}'")
            self.next += 1
            return res
        if c.error is not None:
            raise c.error
        raise RuntimeError(f"no computed result for phase {self.next} ('{phase.name}')")
