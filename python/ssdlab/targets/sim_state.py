"""Shared drive states: a simulated drive's state after a recipe of phases, kept so that the
tests of a review, a validation or a fit that begin with the same phases on the same drive
(purge and a whole-drive fill, most of them) pay for those phases once.

The cache key (`StateKey`) is everything the state depends on:

- the profile: the SHA-256 of its TOML text;
- the overrides (key=value, in order) and the seed;
- the recipe: every phase run on the drive since it was built, each as the simulator
  receives it (`Phase.resolve`: absolute byte ranges, stop rules, sampling), all but its
  name.

The simulator is deterministic in these, so an equal key gives a bit-identical drive and
bit-identical results for the recipe's phases; a changed parameter, seed, capacity or
phase gives another key and never reuses a stale state. The simulator's build is not in the
key: states live in the memory of one process (`_sim.DriveState`), never on disk.

A `SimTarget` given a `StateCache` looks each phase up before running it: when a kept
state's recipe begins with the target's phases so far plus this one, the phase's result
comes from the state (renamed to the test's phase) and the drive follows the state, loaded
only when a phase must really run. A planner (review, validate) tells the cache which
recipes to keep (`shared_recipes`): the prefixes several of its runs share.
"""

from __future__ import annotations

import copy
import hashlib
import json
from collections import Counter, OrderedDict
from dataclasses import dataclass, replace
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

from .. import _sim
from ..phase import Phase, PhaseResult, ResolvedPhase

# phases whose spec the key can hold (a trace or a fio job carries its own input: not kept)
KEPT_KINDS = ("purge", "io", "trim", "idle")


def profile_digest(profile_text: str) -> str:
    return hashlib.sha256(profile_text.encode("utf-8")).hexdigest()


def phase_key(spec: ResolvedPhase) -> str | None:
    """A resolved phase (`Phase.resolve`) as it enters the key: every field but the name,
    canonical JSON. None for a phase no state is kept after (a trace, a fio job)."""
    if spec.get("kind") not in KEPT_KINDS:
        return None
    return json.dumps({k: v for k, v in spec.items() if k != "name"}, sort_keys=True,
                      separators=(",", ":"))


@dataclass(frozen=True)
class StateKey:
    """What a drive state depends on (module doc)."""

    profile: str  # SHA-256 of the profile text
    overrides: tuple[str, ...]
    seed: int
    recipe: tuple[str, ...] = ()  # phase_key of every phase since the drive was built

    @staticmethod
    def new(profile_text: str, overrides: Sequence[str] | None, seed: int) -> "StateKey":
        return StateKey(profile_digest(profile_text), tuple(overrides or ()), int(seed))

    def then(self, phase: str) -> "StateKey":
        return replace(self, recipe=(*self.recipe, phase))

    def drive(self) -> tuple[str, tuple[str, ...], int]:
        return self.profile, self.overrides, self.seed


def plan_keys(base: StateKey, phases: Iterable[Phase], capacity: int) -> list[StateKey]:
    """The keys a run's phases pass through, up to the first phase that keeps none."""
    out, key = [], base
    for p in phases:
        k = phase_key(p.resolve(capacity))
        if k is None:
            break
        key = key.then(k)
        out.append(key)
    return out


def shared_recipes(runs: Iterable[list[StateKey]]) -> dict[StateKey, int]:
    """The states worth keeping for a set of runs (each the keys its phases pass through),
    with how many runs reach each: every recipe two or more runs reach that holds more than
    a purge (a fresh drive purges at no cost), and of a chain of recipes the same runs
    share, only the longest."""
    runs = [list(r) for r in runs]
    count = Counter(k for r in runs for k in r)
    keep = {}
    for r in runs:
        for i, k in enumerate(r):
            if count[k] < 2 or all(json.loads(p)["kind"] == "purge" for p in k.recipe):
                continue
            if i + 1 < len(r) and count[r[i + 1]] == count[k]:
                continue  # the next recipe serves the same runs
            keep[k] = count[k]
    return keep


def share_groups(runs: Sequence[list[StateKey]]) -> tuple[list[list[int]], dict[StateKey, int]]:
    """Runs (each the keys its phases pass through) in groups that share kept states, each
    group in the order given, and the states to keep: a group runs in one process, one run
    after another, so that its runs find the states its first runs kept."""
    keep = shared_recipes(runs)
    parent = list(range(len(runs)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    first: dict[StateKey, int] = {}
    for i, r in enumerate(runs):
        for k in r:
            if k in keep:
                j = first.setdefault(k, i)
                parent[root(i)] = root(j)
    groups: dict[int, list[int]] = {}
    for i in range(len(runs)):
        groups.setdefault(root(i), []).append(i)
    # a run that ends where a kept state begins goes first: it hands its drive over
    # without a copy (`SimTarget.close`), where a run that goes on must copy it
    return [sorted(g, key=lambda i: not (runs[i] and runs[i][-1] in keep)) for g in groups.values()], keep


def drives_at_once(keep: Mapping[StateKey, int], runs: Sequence[list[StateKey]] = ()) -> int:
    """Drives' tables a group that keeps these states holds at its peak (`runs`: the keys
    of its runs): one, unless a state serves more than two runs or no run ends where it
    begins (the run that makes it hands its drive over only if it ends there, and the last
    run to load it takes it: the runs between load copies while it is kept)."""
    ends = {r[-1] for r in runs if r}
    return 2 if any(n > 2 or k not in ends for k, n in keep.items()) else 1


@dataclass(frozen=True)
class DriveState:
    """A drive after `key.recipe`, with each recipe phase's result in order."""

    key: StateKey
    state: _sim.DriveState
    results: tuple[PhaseResult, ...]

    @property
    def bytes(self) -> int:
        return int(self.state.table_bytes())


class StateCache:
    """The drive states of one process: those of the recipes in `keep`, the least recently
    used dropped first past `budget` bytes of tables (None: no limit). `keep` may say how
    many runs reach each recipe (`shared_recipes`): the last run to load a state then takes
    it without a copy (the first run made it)."""

    def __init__(self, keep: Mapping[StateKey, int] | Iterable[StateKey] = (),
                 budget: float | None = None):
        self.keep: dict[StateKey, int | None] = \
            dict(keep) if isinstance(keep, Mapping) else dict.fromkeys(keep)
        self.budget = budget
        self.states: OrderedDict[StateKey, DriveState] = OrderedDict()
        self.hits = 0  # phases answered from a state

    def wants(self, key: StateKey) -> bool:
        return key in self.keep and key not in self.states

    def load(self, ds: DriveState) -> _sim.Drive:
        """A drive in state `ds`: a copy, or the state itself for the last run to load it."""
        runs = self.keep.get(ds.key)
        if runs is not None:
            self.keep[ds.key] = runs = runs - 1
        if runs is not None and runs <= 1:  # the run that made the state loads none
            self.states.pop(ds.key, None)
            return _sim.Drive.from_state(ds.state, take=True)
        return _sim.Drive.from_state(ds.state)

    def put(self, ds: DriveState) -> None:
        self.states[ds.key] = ds
        while self.budget is not None and len(self.states) > 1 and \
                sum(s.bytes for s in self.states.values()) > self.budget:
            self.states.popitem(last=False)

    def get(self, key: StateKey) -> DriveState | None:
        ds = self.states.get(key)
        if ds is not None:
            self.states.move_to_end(key)
        return ds

    def find(self, key: StateKey) -> tuple[DriveState, int] | None:
        """A kept state whose recipe begins with `key`'s, and the index of `key`'s last
        phase in it."""
        n = len(key.recipe)
        for k, ds in self.states.items():
            if k.drive() == key.drive() and k.recipe[:n] == key.recipe:
                self.states.move_to_end(k)
                return ds, n - 1
        return None


def renamed(res: PhaseResult, phase: Phase) -> PhaseResult:
    """A kept result as the result of `phase` (the same spec under the test's name), its
    arrays and dicts copied so that no reader can change the kept one."""
    def arrays(d: dict[str, Any]) -> dict[str, Any]:
        return {k: np.array(v, copy=True) if isinstance(v, np.ndarray) else copy.deepcopy(v)
                for k, v in d.items()}

    return PhaseResult(phase=phase, series=arrays(res.series), segments=arrays(res.segments),
                       latency=arrays(res.latency), totals=dict(res.totals))


__all__ = ["DriveState", "KEPT_KINDS", "drives_at_once", "StateCache", "StateKey", "phase_key", "plan_keys",
           "profile_digest", "renamed", "share_groups", "shared_recipes"]
