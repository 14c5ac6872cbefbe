"""Grids of runs over parameters and drives (`ssdlab sweep`): checked, run and stored.

A grid (sweep_grid.py, its file sweep_grid_file.py) is one test, constant options
(seconds, repeat, seed, ...), and axes: the drives, the spare areas, and any number of
profile keys with their values. Its points are the cartesian product; each point is a
normal run in the store whose args carry the sweep id and the point, so `ssdlab
results`, `report` and `compare` read them like any other.

The sweep id is a hash of the grid: running the same grid again resumes it, skipping the
points that already have a complete run (an interrupted or failed point runs again).
Every point is checked (profile keys and values, spare area, memory) before any runs.
Points run through executor.py; results come back here and are stored one point at a time.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Callable

from . import interrupts
from .errors import UserError
from .detached import DriveJob, compute, job_for
from .executor import Done, Executor, Unit
from .methodology import Options, get
from .methodology.test import Silent
from .phase import Identity
from .store import Store
from .sweep_grid import Grid, make_grid  # noqa: F401 (callers take them from here)

MAX_POINTS = 10_000


class _OnPaper:
    """A sweep's simulated drive as its profile describes it, before any is built: what a
    test's options read of the drives (PTS: the logical block)."""

    def __init__(self, spec: str, text: str, overrides: list[str]) -> None:
        self.spec, self.text, self.overrides = spec, text, overrides

    def identify(self) -> Identity:
        from .targets.sim import LOGICAL_BLOCK, capacity

        return Identity(kind="sim", model=self.spec, capacity=capacity(self.text, self.overrides),
                        extra={"logical_block": LOGICAL_BLOCK})


def for_drives(g: Grid, texts: dict[str, str]) -> None:
    """The test's own options once the drives are known, as `run` completes them (PTS: the
    drives' logical block), from the drives' profiles (`texts`: each drive's)."""
    opts = get(g.test).options
    if opts is None or g.own is None:
        return
    first = g.overrides(g.points()[0])
    drives = [(d, _OnPaper(d, texts[d], first)) for d in g.drives]
    g.own = opts.for_drives(g.own, g.own_values(), drives, g.seed, Silent())


# ---- checks before anything runs ---------------------------------------------------------
def check(grid: Grid) -> dict[tuple, float]:
    """Every point must be runnable; returns each drive-and-overrides combination's table
    bytes (the memory a point takes). Raises ValueError naming the first bad point."""
    from .targets import parse_drive

    if grid.size > MAX_POINTS:
        raise ValueError(f"the grid has {grid.size} points; at most {MAX_POINTS} (split it)")
    pts = grid.points()
    texts = {}
    for d in grid.drives:
        spec = parse_drive(d)
        if spec.real:
            raise ValueError(f"--drive {d}: sweeps run simulated drives (sim:PROFILE or a profile "
                             ".toml); test a real drive with `ssdlab run`")
        texts[d] = spec.profile_text()
    from .runner import plan_phases
    from .targets.sim import capacity, check_seed, table_bytes
    try:  # a value the grid file gave is named as its key
        for s in grid.spares:
            Options(spare=s, repeat=grid.repeat, seconds=grid.seconds, interval=grid.interval)
        check_seed(grid.seed)
    except (ValueError, UserError) as e:
        raise grid.named(e) from None
    memory: dict[tuple, float] = {}
    fitted: set[tuple[int, float]] = set()  # (capacity, spare): the test's phases fit such a drive
    for p in pts:
        key = (p["drive"], tuple(grid.overrides(p)))
        where = " ".join([p["drive"], *key[1], f"spare={p['spare']}"])
        try:
            if key not in memory:
                memory[key] = table_bytes(texts[p["drive"]], list(key[1]))
            cap = capacity(texts[p["drive"]], list(key[1]))
            if (cap, p["spare"]) not in fitted:
                for ph in plan_phases(grid.test, cap, grid.options(p)):
                    ph.resolve(cap)
                fitted.add((cap, p["spare"]))
        except ValueError as e:
            raise ValueError(f"sweep point {where}: {str(e).splitlines()[0]}") from None
    for_drives(grid, texts)
    return memory


def capacities(grid: Grid) -> list[int]:
    """Each point's drive capacity (user bytes), in point order, from its profile on paper."""
    from .targets import parse_drive
    from .targets.sim import capacity

    texts = {d: parse_drive(d).profile_text() for d in grid.drives}
    caps: dict[tuple, int] = {}
    out = []
    for p in grid.points():
        key = (p["drive"], tuple(grid.overrides(p)))
        if key not in caps:
            caps[key] = capacity(texts[p["drive"]], list(key[1]))
        out.append(caps[key])
    return out


# ---- the store's view of a sweep ------------------------------------------------------------
def point_key(point: dict) -> str:
    return json.dumps(point, sort_keys=True, separators=(",", ":"))


def sweep_runs(store: Store, sweep_id: str) -> list[dict]:
    """Every stored run of a sweep, oldest first: id, status, point."""
    return [{"id": r["id"], "status": r["status"], "point": r["args"].get("point", {})}
            for r in store.runs_with_arg("sweep", sweep_id)]


def finished(store: Store, grid: Grid) -> dict[str, int]:
    """point key -> run id of the points that already have a complete run."""
    return {point_key(r["point"]): r["id"] for r in sweep_runs(store, grid.id)
            if r["status"] == "complete"}


# ---- running ---------------------------------------------------------------------------------
@dataclass
class PointOutcome:
    point: dict
    status: str  # complete | failed | skipped (already complete)
    run_id: int | None = None
    metrics: dict = field(default_factory=dict)
    error: str | None = None


def record(store: Store, grid: Grid, point: dict, done: Done) -> PointOutcome:
    """Store one computed point as a normal run."""
    from .errors import one_line
    from .detached import Replay
    from .runner import RunFailed, run_test

    args = grid.args(point)
    if done.error is not None:  # the worker could not even build the drive: a failed run, no drives
        err = f"{type(done.error).__name__}: {one_line(done.error)}"
        rid = store.create_run(grid.test, args, grid.testbed, None)
        store.finish_run(rid, "failed", err)
        return PointOutcome(point, "failed", rid, error=err)
    spec = point["drive"]
    try:
        rid, outs = run_test(store, grid.test, [(spec, Replay(spec, done.value))],
                             grid.options(point), args, grid.testbed)
    except RunFailed as e:
        return PointOutcome(point, "failed", e.run_id, error=one_line(e.error))
    return PointOutcome(point, "complete", rid, outs[0].metrics)


def units(grid: Grid, points: list[dict], memory: dict[tuple, float]) -> list[Unit]:
    from .targets import parse_drive

    texts = {d: parse_drive(d).profile_text() for d in grid.drives}
    out = []
    for i, p in enumerate(points):
        ov = grid.overrides(p)
        job: DriveJob = job_for(p["drive"], texts[p["drive"]], ov, grid.seed, grid.test, grid.options(p))
        mem = memory.get((p["drive"], tuple(ov)), 0.0)
        out.append(Unit(i, compute, (job,), memory=mem, cost=mem))
    return out


def run_sweep(store: Store, grid: Grid, executor: Executor,
              on_point: Callable[[PointOutcome], None] | None = None,
              memory: dict[tuple, float] | None = None) -> list[PointOutcome]:
    """Run the points that have no complete run yet; each is stored as it comes back.
    Returns every point's outcome in grid order (skipped ones with their earlier run)."""
    pts = grid.points()
    have = finished(store, grid)
    outcomes: dict[int, PointOutcome] = {}
    todo = []
    for i, p in enumerate(pts):
        if point_key(p) in have:
            outcomes[i] = PointOutcome(p, "skipped", have[point_key(p)])
        else:
            todo.append(i)
    memory = memory if memory is not None else check(grid)
    for d in executor.run(units(grid, [pts[i] for i in todo], memory)):
        i = todo[d.key]
        # a computed point is only written now: stored whole, a Ctrl-C or SIGTERM waits for it
        with interrupts.shielded():
            outcomes[i] = record(store, grid, pts[i], d)
            if on_point:
                on_point(outcomes[i])
    return [outcomes[i] for i in sorted(outcomes)]


def summary(store: Store, grid: Grid, outcomes: list[PointOutcome]) -> dict:
    """`ssdlab sweep --json`: the grid and every point's status, run and metrics."""
    points = []
    for o in outcomes:
        metrics = o.metrics
        if o.status == "skipped":  # finished earlier: its stored metrics
            metrics = store.run(o.run_id)["drives"][0]["metrics"]
        points.append({"point": o.point, "status": o.status, "run_id": o.run_id,
                       "metrics": metrics, "error": o.error})
    count = {s: sum(p["status"] == s for p in points) for s in ("complete", "failed", "skipped")}
    return {"sweep": grid.id, "test": grid.test, "axes": grid.axes, "swept": grid.swept, **count,
            "points": points}
