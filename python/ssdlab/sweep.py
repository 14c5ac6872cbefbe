"""Grids of runs over parameters and drives (`ssdlab sweep`).

A grid is one test, constant options (seconds, repeat, seed, ...), and axes: the drives,
the spare areas, and any number of profile keys with their values. Its points are the
cartesian product; each point is a normal run in the store whose args carry the sweep id
and the point, so `ssdlab results`, `report` and `compare` read them like any other.

The sweep id is a hash of the grid: running the same grid again resumes it, skipping the
points that already have a complete run (an interrupted or failed point runs again).
Every point is checked (profile keys and values, spare area, memory) before any runs.
Points run through executor.py; results come back here and are stored one point at a time.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import os
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Optional, Union, get_args

from pydantic import (BaseModel, ConfigDict, StrictBool, StrictFloat, StrictInt, StrictStr,
                      TypeAdapter, ValidationError)

from . import interrupts, safe_path
from .errors import UserError
from .detached import DriveJob, compute, job_for
from .executor import Done, Executor, Unit
from .methodology import Options, get
from .methodology.test import CliOption, Silent
from .phase import Identity
from .store import Store, StoreError, check_testbed

GRID_KEYS = {"test", "drives", "spare", "set", "seconds", "repeat", "interval", "seed", "testbed"}
MAX_POINTS = 10_000
MAX_GRID_BYTES = 1 << 20  # a grid file is a few keys and one [set] table


@dataclass
class Grid:
    test: str
    drives: list[str]
    spares: list[float] = field(default_factory=lambda: [0.0])
    sets: dict[str, list[str]] = field(default_factory=dict)  # profile key -> values, in order
    seconds: float | None = None
    repeat: int = 5
    interval: float | None = None
    seed: int = 42
    testbed: str | None = None
    file: Path | None = None  # the grid file, if one was given
    # what the grid file gave (its key -> its value), to name a bad value by its key
    from_file: dict[str, Any] = field(default_factory=dict)
    given: list[str] = field(default_factory=list)  # the shared run options given (spare, seconds, ...)
    # the test's own options given (name -> value, as `run` takes them: PTS --rounds ...)
    # and what its TestOptions made of them; every point runs with them
    values: dict[str, Any] = field(default_factory=dict)
    own: Any = None

    def named(self, e: Exception) -> ValueError:
        """An option's one-line error (`--seconds -1: ...`, `bad --spare ...`) about a value
        the grid file gave, said of the file's key (`grid file g.toml: seconds = -1: ...`)."""
        m = re.match(r"(?:bad )?--([a-z-]+)[^:]*: (.*)", str(e), re.S)
        key = m[1].replace("-", "_") if m else ""
        if m is None or key not in self.from_file:
            return e if isinstance(e, ValueError) else ValueError(str(e))
        return ValueError(f"grid file {self.file}: {key} = {_shown(self.from_file[key])}: {m[2]}")

    def source(self, flag: str) -> str:
        """How the user gave an option: `--interval`, or `grid file g.toml: interval`."""
        key = flag.removeprefix("--").replace("-", "_")
        return f"grid file {self.file}: {key}" if key in self.from_file else flag

    @property
    def axes(self) -> dict[str, list[Any]]:
        """Every axis with its values (drive and spare included), in point order."""
        return {"drive": list(self.drives), **{k: list(v) for k, v in self.sets.items()},
                "spare": list(self.spares)}

    @property
    def swept(self) -> list[str]:
        """The axes with more than one value: what the report plots against."""
        return [k for k, v in self.axes.items() if len(v) > 1]

    @property
    def size(self) -> int:
        """The number of points, counted without building them."""
        return math.prod(len(v) for v in self.axes.values())

    def points(self) -> list[dict[str, Any]]:
        names = list(self.axes)
        return [dict(zip(names, combo)) for combo in itertools.product(*self.axes.values())]

    def definition(self) -> dict:
        d: dict[str, Any] = {
            "test": self.test, "drives": self.drives, "spare": self.spares,
            "set": [[k, v] for k, v in self.sets.items()], "seconds": self.seconds,
            "repeat": self.repeat, "interval": self.interval, "seed": self.seed,
            "testbed": self.testbed}
        if self.values:  # only when given: a grid without them keeps its id (and resumes)
            d["options"] = self.values
        return d

    @property
    def id(self) -> str:
        text = json.dumps(self.definition(), sort_keys=True, separators=(",", ":"))
        return "sw-" + hashlib.sha256(text.encode()).hexdigest()[:10]

    def options(self, point: dict) -> Options:
        return Options(spare=float(point["spare"]), repeat=self.repeat, seconds=self.seconds,
                       interval=self.interval, own=self.own)

    def own_values(self) -> dict[str, Any]:
        """Every option of the test's own, the given ones' values and the others' defaults."""
        opts = get(self.test).options
        return {c.name: self.values.get(c.name, c.default) for c in (opts.cli if opts else ())}

    def overrides(self, point: dict) -> list[str]:
        return [f"{k}={point[k]}" for k in self.sets]

    def args(self, point: dict) -> dict:
        """A point's run args: what `ssdlab run` stores, plus the sweep and the point."""
        a = {"drives": [point["drive"]], "spare": float(point["spare"]), "repeat": self.repeat,
             "seconds": self.seconds, "set": self.overrides(point), "seed": self.seed,
             "sweep": self.id, "point": point}
        if self.interval is not None:
            a["interval"] = self.interval
        test = get(self.test)
        if test.options and self.own is not None:  # as `run` stores them
            a.update(test.options.stored(self.own, self.values))
        return a


# ---- building a grid from the command line and a TOML file ------------------------------
def split_values(option: str, text: str) -> list[str]:
    vals = [v.strip() for v in text.split(",")]
    if not text.strip() or any(not v for v in vals):
        raise ValueError(f"bad {option} '{text}': expected comma-separated values, e.g. 4,8")
    if len(set(vals)) != len(vals):
        raise ValueError(f"bad {option} '{text}': a value is given twice")
    return vals


def parse_set(s: str) -> tuple[str, list[str]]:
    key, eq, values = s.partition("=")
    if not eq or not key.strip():
        raise ValueError(f"bad --set '{s}': expected key=v1,v2,..., e.g. --set nand.channels=4,8")
    if any(ord(c) < 32 or ord(c) == 127 for c in s):
        raise ValueError(f"bad --set {s!r}: control characters are not allowed")
    vals = split_values(f"--set {key.strip()}", values)
    same = same_value(vals)
    if same:
        raise ValueError(f"bad --set {key.strip()} '{values.strip()}': {same[0]} and {same[1]} are the "
                         "same value (two identical points); give each value once")
    return key.strip(), vals


def _value(raw: str) -> tuple[str, Any]:
    """What a profile override's text means, as the simulator reads it (a TOML value, else
    the text itself): numbers by value (900, 900.0 and 9e2 are one), never equal to a bool."""
    try:
        v = tomllib.loads(f"v = {raw}")["v"]
    except tomllib.TOMLDecodeError:
        return ("text", raw)
    if isinstance(v, bool):
        return ("bool", v)
    if isinstance(v, (int, float)):
        return ("number", float(v))
    return ("text", v) if isinstance(v, str) else ("other", raw)


def same_value(vals: list[str]) -> tuple[str, str] | None:
    """The first two values of an axis that mean the same, or None."""
    seen: dict[tuple[str, Any], str] = {}
    for v in vals:
        k = _value(v)
        if k in seen:
            return seen[k], v
        seen[k] = v
    return None


def parse_spares(texts: list[str]) -> list[float]:
    out: list[float] = []
    for t in texts:
        for v in split_values("--spare", t):
            try:
                x = float(v)
            except ValueError:
                raise ValueError(f"bad --spare '{v}': a number (% of LBAs left unwritten)") from None
            if x in out:
                raise ValueError(f"bad --spare: {v} is given twice")
            out.append(x)
    return out


def _toml_values(key: str, v: Any) -> list[str]:
    vals = v if isinstance(v, list) else [v]
    if not vals:
        raise ValueError(f"grid file: '{key}' = []: give at least one value, e.g. {key} = [4, 8]")
    if any(isinstance(x, (dict, list)) for x in vals):
        raise ValueError(f"grid file: '{key}' must be a value or a list of values")
    out = [str(x).lower() if isinstance(x, bool) else str(x) for x in vals]
    if len(set(out)) != len(out):
        raise ValueError(f"grid file: '{key}' gives a value twice")
    return out


def _file_set_values(key: str, v: Any) -> list[str]:
    vals = _toml_values(f"set.{key}", v)
    same = same_value(vals)
    if same:
        raise ValueError(f"grid file: 'set.{key}': {same[0]} and {same[1]} are the same value "
                         "(two identical points); give each value once")
    return vals


Scalar = Union[StrictStr, StrictInt, StrictFloat, StrictBool]
MAX_SET_DEPTH = 8  # [set.a.b.c...]: profile keys are a few levels deep


class GridFile(BaseModel):
    """A grid file's keys and their types: checked whole before anything else is read."""

    model_config = ConfigDict(extra="forbid", strict=True)

    test: Optional[StrictStr] = None
    drives: Optional[Union[StrictStr, list[StrictStr]]] = None
    spare: Optional[Union[StrictInt, StrictFloat, list[Union[StrictInt, StrictFloat]]]] = None
    set: Optional[dict[str, Any]] = None
    seconds: Optional[Union[StrictInt, StrictFloat]] = None
    repeat: Optional[StrictInt] = None
    interval: Optional[Union[StrictInt, StrictFloat]] = None
    seed: Optional[StrictInt] = None
    testbed: Optional[StrictStr] = None


def own_keys() -> dict[str, tuple[CliOption, list[str]]]:
    """The grid file's keys for the tests' own options a sweep takes (the PTS settings:
    `round_seconds` for --round-seconds), each with its option and the tests that take it."""
    from .methodology import ALL

    out: dict[str, tuple[CliOption, list[str]]] = {}
    for name, test in ALL.items():
        if test.options is None or test.needs_own_options() is not None:
            continue
        for o in test.options.cli:
            if not o.argument:
                out.setdefault(o.flag.removeprefix("--").replace("-", "_"), (o, []))[1].append(name)
    return out


def _check_own(path: Path, key: str, v: Any, o: CliOption) -> None:
    """A grid file's value of a test's own option, of the type its flag takes."""
    kinds = [t for t in (get_args(o.type) or (o.type,)) if t is not type(None)]
    if bool in kinds:
        ok, want = isinstance(v, bool), "true or false"
    elif float in kinds:
        ok, want = isinstance(v, (int, float)) and not isinstance(v, bool), "a number"
    else:
        ok, want = isinstance(v, int) and not isinstance(v, bool), "a whole number"
    if not ok:
        raise ValueError(f"grid file {path}: {key} = {_shown(v)}: must be {want}")


def _check_set(path: Path, table: dict, where: str = "set", depth: int = 1) -> None:
    """[set] is a table of profile keys (sub-tables for dotted keys) = a value or a list."""
    if depth > MAX_SET_DEPTH:
        raise ValueError(f"grid file {path}: [{where}] nests deeper than {MAX_SET_DEPTH} tables")
    for k, v in table.items():
        if isinstance(v, dict):
            _check_set(path, v, f"{where}.{k}", depth + 1)
            continue
        vals = v if isinstance(v, list) else [v]
        for x in vals:
            try:
                TypeAdapter(Scalar).validate_python(x)
            except ValidationError:
                raise ValueError(f"grid file {path}: {where}.{k}: each value must be a string, "
                                 f"number or boolean, not {type(x).__name__}") from None


def read_grid_file(path: Path) -> dict:
    if not os.path.lexists(path):
        raise ValueError(f"grid file {path} not found")
    try:  # a regular file of a grid's size: not /dev/zero, not a FIFO
        doc = tomllib.loads(safe_path.read_input(path, f"grid file {path}", MAX_GRID_BYTES).decode())
    except safe_path.UnsafePath as e:
        raise ValueError(str(e)) from None
    except (OSError, UnicodeDecodeError) as e:
        raise ValueError(f"grid file {path}: cannot read it ({e})") from None
    except tomllib.TOMLDecodeError as e:
        raise ValueError(f"grid file {path} is not valid TOML: {e}") from None
    except RecursionError:
        raise ValueError(f"grid file {path}: nested too deeply to read (a grid file is a few "
                         "keys and one [set] table)") from None
    own = own_keys()
    bad = sorted(set(doc) - GRID_KEYS - set(own))
    if bad:
        raise ValueError(f"grid file {path}: unknown key '{bad[0]}' (known: {', '.join(sorted(GRID_KEYS | set(own)))}; "
                         "profile keys go under [set])")
    for k in sorted(set(doc) & set(own)):
        _check_own(path, k, doc[k], own[k][0])
    try:
        GridFile.model_validate({k: v for k, v in doc.items() if k not in own})
    except ValidationError as e:
        x = e.errors()[0]
        key = str(x["loc"][0]) if x["loc"] else "grid"
        want = {"set": "a table of profile key = [values]", "seconds": "a number (seconds)",
                "interval": "a number (seconds)", "repeat": "a whole number",
                "seed": "a whole number", "spare": "a number or a list of numbers (%)",
                "drives": "a drive or a list of drives (strings)", "testbed": "a string",
                "test": "a string"}[key]
        raise ValueError(f"grid file {path}: {key} = {_shown(doc.get(key))}: must be {want}") from None
    _check_set(path, doc.get("set") or {})
    return doc


def _shown(v: Any) -> str:
    text = json.dumps(v, default=str)
    return text if len(text) <= 60 else text[:57] + "..."


def flatten(table: dict, prefix: str = "") -> dict[str, Any]:
    """[set.nand] channels = [4, 8]  ->  {"nand.channels": [4, 8]}"""
    out: dict[str, Any] = {}
    for k, v in table.items():
        if isinstance(v, dict):
            out.update(flatten(v, f"{prefix}{k}."))
        else:
            out[f"{prefix}{k}"] = v
    return out


def make_grid(test: str, drives: list[str], sets: list[str], spares: list[str],
              grid_file: Path | None = None, own: dict[str, Any] | None = None,
              **constants: Any) -> Grid:
    """The grid from the command line and an optional TOML file (the two add up; an axis
    or option given in both is refused); `own`: the test's own options given, by name (the
    CLI refuses those of other tests). Raises ValueError or UserError with one line."""
    if (why := get(test).needs_own_options()) is not None:  # a point carries the shared options only
        raise ValueError(f"ssdlab sweep does not run {test}: it needs options of its own ({why}); "
                         f"use ssdlab run {test}")
    doc = read_grid_file(grid_file) if grid_file is not None else {}
    if "test" in doc and doc["test"] != test:
        raise ValueError(f"grid file names test '{doc['test']}', the command '{test}'")
    all_drives = list(drives) + _toml_values("drives", doc["drives"]) if "drives" in doc else list(drives)
    if not all_drives:
        raise ValueError("give at least one --drive (e.g. --drive sim:tlc-256), or drives = [...] in --grid")
    if len(set(all_drives)) != len(all_drives):
        raise ValueError("a drive is given twice")
    axes: dict[str, list[str]] = {}
    for key, vals in [parse_set(s) for s in sets] + [
            (k, _file_set_values(k, v)) for k, v in flatten(doc.get("set", {})).items()]:
        if key in axes:
            raise ValueError(f"--set {key}: given twice (once per key, with all its values)")
        axes[key] = vals
    spare_texts = list(spares)
    if "spare" in doc:
        if spares:
            raise ValueError("spare areas given both with --spare and in the grid file")
        spare_texts = [",".join(_toml_values("spare", doc["spare"]))]
    g = Grid(test, all_drives, sets=axes, file=grid_file)
    g.from_file = {k: doc[k] for k in ("spare", "seconds", "repeat", "interval", "seed", "testbed") if k in doc}
    try:
        g.spares = parse_spares(spare_texts) if spare_texts else [0.0]
    except ValueError as e:
        raise g.named(e) from None
    for k in ("seconds", "repeat", "interval", "seed", "testbed"):
        cli = constants.get(k)
        if k in doc and cli is not None and cli != doc[k]:
            raise ValueError(f"--{k} {cli} and the grid file's {k} = {doc[k]} differ")
        if cli is not None:
            g.from_file.pop(k, None)  # the same value on the command line: named as the flag
        v = cli if cli is not None else doc.get(k)
        if v is not None:
            setattr(g, k, v)
    g.given = [k for k in ("spare", "repeat", "seconds", "interval")
               if (any(g.spares) if k == "spare" else constants.get(k) is not None or k in doc)]
    try:
        check_testbed(g.testbed)
    except StoreError as e:
        raise g.named(e) from None
    g.values = {k: v for k, v in (own or {}).items() if v is not None}
    for key, (o, tests) in own_keys().items():  # the test's own options the file gives
        if key not in doc:
            continue
        if test not in tests:
            raise ValueError(f"grid file {grid_file}: {key}: only for `ssdlab sweep` of "
                             + (f"{', '.join(tests[:-1])} and {tests[-1]}" if len(tests) > 1 else tests[0]))
        if o.name in g.values and g.values[o.name] != doc[key]:
            raise ValueError(f"{o.flag} {g.values[o.name]} and the grid file's {key} = {_shown(doc[key])} differ")
        g.from_file[key] = doc[key]
        # as the flag gives it (`round_seconds = 1` is --round-seconds 1.0: the same grid)
        v = float(doc[key]) if float in get_args(o.type) or o.type is float else doc[key]
        if v != o.default:  # as a flag at its default: not given
            g.values[o.name] = v
    opts = get(test).options
    if opts is not None and opts.cli:  # checked now; check() completes them for the drives
        try:
            g.own = opts.parse(g.own_values(), Silent())
        except UserError as e:  # a value the grid file gave is named as its key
            raise g.named(e) from None
    return g


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
