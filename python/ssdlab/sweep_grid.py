"""A sweep's grid: one test, constant options (seconds, repeat, seed, ...), and axes: the
drives, the spare areas, and any number of profile keys with their values. Its points are
the cartesian product; its id is a hash of its definition. Made here from the command line
and an optional grid file (sweep_grid_file.py); sweep.py checks and runs it."""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, get_args

from .errors import UserError
from .methodology import Options, get
from .methodology.test import Silent
from .store import StoreError, check_testbed
from .sweep_grid_file import file_values, flatten, own_keys, read_grid_file, shown


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
        return ValueError(f"grid file {self.file}: {key} = {shown(self.from_file[key])}: {m[2]}")

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


def _file_set_values(key: str, v: Any) -> list[str]:
    vals = file_values(f"set.{key}", v)
    same = same_value(vals)
    if same:
        raise ValueError(f"grid file: 'set.{key}': {same[0]} and {same[1]} are the same value "
                         "(two identical points); give each value once")
    return vals


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
    all_drives = list(drives) + file_values("drives", doc["drives"]) if "drives" in doc else list(drives)
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
        spare_texts = [",".join(file_values("spare", doc["spare"]))]
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
            raise ValueError(f"{o.flag} {g.values[o.name]} and the grid file's {key} = {shown(doc[key])} differ")
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
