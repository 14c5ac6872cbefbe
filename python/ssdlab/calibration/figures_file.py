"""A figures file (TOML): a drive's published figures, each with the test that measures it,
what it reads (a metric of the test, or a derived measure registered in measures.py), the
run's conditions, the published value or range, its tolerance and source
(docs/fit-evidence.md, "Figures files"). `ssdlab validate` checks the built-in profiles against calibration/figures/
<drive>.toml; `ssdlab fit --figures FILE` fits a twin to such a file.

What a figure reads is a node: `metric = "peak_mbps"` (the test's metric), `measure = "NAME"`
with `args = {...}` (a registered measure), or a combination of nodes: `ratio = [a, b]`,
`difference = [a, b]`, `max = [...]` (the largest that is known), `sum = [...]`. A node runs
on the figure's run unless it names its own `drive`, `test`, `spare`, `seconds` or `testbed`."""

from __future__ import annotations

import inspect
import math
import tomllib
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, Callable

from .. import safe_path
from .figure import TOLERANCE, Ctx, Figure, RunKey
from .measures import MEASURES

DIR = "figures"
MAX_BYTES = 1 << 20  # a figures file (a drive's published figures: a few KiB)
UNITS = ("MB/s", "GB", "IOPS", "us", "ms", "s", "ratio", "count", "share", "of capacity", "share of fill")
KINDS = ("published", "latency", "spec sheet", "behaviour")
COMBINE = ("ratio", "difference", "max", "sum")
LEAF = ("metric", "measure")
RUN_KEYS = ("drive", "test", "spare", "seconds", "testbed")
FIGURE_KEYS = {"name", "value", "lo", "hi", "widen", "tolerance", "unit", "how", "source", "kind",
               "expected_failure", "args", *LEAF, *COMBINE, *RUN_KEYS} - {"drive"}
FACTS: dict[str, type | tuple[type, ...]] = {"capacity_gb": (int, float), "interface": str, "pcie_gen": int,
         "lanes": int, "cell": str,
         "mapping": str, "channels": int, "dies": int, "name": str,
         # the NAND part's geometry and interface rate (MT/s), from its datasheet
         "planes": int, "pages_per_block": int, "page_kib": int, "nand_mts": (int, float)}
COUNTS = ("channels", "dies", "planes", "pages_per_block", "page_kib")
CHOICES = {"interface": ("pcie", "sata"), "cell": ("slc", "mlc", "tlc", "qlc"), "mapping": ("dram", "hmb", "sram")}


class FiguresError(ValueError):
    """A figures file that cannot be read as one: the file, the figure and the fix."""


@dataclass
class FiguresFile:
    path: Path
    drive: str | None  # the built-in profile the figures check (validate); None: a user's drive
    figures: list[Figure]
    facts: dict[str, Any] = field(default_factory=dict)  # what a spec sheet states (structure)
    start: str | None = None  # the generic class a fit starts from, if the file says


def run_key(d: dict[str, Any], base: RunKey | None = None) -> RunKey:
    """The run of a node: its own conditions, else those of `base` (the figure's run)."""
    test, spare, seconds, repeat, testbed = base or ("", 0.0, None, 1, ())
    return (str(d.get("test", test)), float(d.get("spare", spare)),
            float(d["seconds"]) if "seconds" in d else seconds, repeat,
            tuple(d.get("testbed", testbed)))


Value = Callable[[Ctx], float | None]


def _node(d: Any, run: RunKey, drive: str | None, where: str,
          needs: list[tuple[str | None, RunKey]]) -> Value:
    """A node's value as a function of the runs, and the (drive, run) pairs it reads."""
    if not isinstance(d, dict):
        raise FiguresError(f"{where}: expected a table (e.g. {{metric = \"peak_mbps\"}}), got {d!r}")
    bad = set(d) - {*LEAF, *COMBINE, "args", *RUN_KEYS}
    if bad:
        raise FiguresError(f"{where}: unknown key {', '.join(sorted(bad))}")
    kinds = [k for k in (*LEAF, *COMBINE) if k in d]
    if len(kinds) != 1:
        raise FiguresError(f"{where}: give exactly one of metric, measure, {', '.join(COMBINE)}")
    _conditions(d, where)
    _test_name(d, where)
    run = run_key(d, run)
    drive = d.get("drive", drive)
    if not run[0]:
        raise FiguresError(f"{where}: no test (e.g. test = \"fill\")")
    needs.append((drive, run))
    kind = kinds[0]
    if kind == "metric":
        key = d["metric"]
        if not isinstance(key, str) or not key:
            raise FiguresError(f"{where}: metric must be a metric name")
        return lambda c: c.m(run, key, drive)
    if kind == "measure":
        fn = MEASURES.get(d["measure"])
        if fn is None:
            raise FiguresError(f"{where}: unknown measure {d['measure']!r}: known are {', '.join(MEASURES)}")
        args = d.get("args", {})
        if not isinstance(args, dict):
            raise FiguresError(f"{where}: args must be a table (e.g. args = {{field = \"zero_seconds\"}})")
        try:
            inspect.signature(fn).bind(None, run, **args)
        except TypeError:
            own = list(inspect.signature(fn).parameters)[2:]
            raise FiguresError(f"{where}: measure {d['measure']} takes ({', '.join(own)}), not args = "
                               f"{{{', '.join(f'{k} = {v!r}' for k, v in args.items())}}}") from None
        return lambda c: fn(Ctx(drive or c.drive, c.runs), run, **args)
    parts = d[kind]
    if not isinstance(parts, list) or not parts or (kind in ("ratio", "difference") and len(parts) != 2):
        raise FiguresError(f"{where}: {kind} takes a list of " + ("two nodes" if kind in ("ratio", "difference")
                                                                   else "nodes"))
    fns = [_node(p, run, drive, f"{where}, {kind}[{i}]", needs) for i, p in enumerate(parts)]
    return _combine(kind, fns)


def _combine(kind: str, fns: list[Value]) -> Value:
    def f(c: Ctx) -> float | None:
        vals = [fn(c) for fn in fns]
        if kind == "ratio":
            a, b = vals
            return None if a is None or b is None or b == 0 else a / b
        if kind == "difference":
            a, b = vals
            return None if a is None or b is None else a - b
        known = [v for v in vals if v is not None]
        if not known:
            return None
        return max(known) if kind == "max" else sum(known)
    return f


def _test_name(d: dict[str, Any], where: str) -> None:
    """A node's `test`, if it has one, is a test's name (whether the test exists is the
    reader's to check: validate and fit know the tests, this module does not)."""
    if "test" in d and (not isinstance(d["test"], str) or not d["test"]):
        raise FiguresError(f"{where}: test must be a test's name (e.g. test = \"fill\"), not {d['test']!r}")


def _num(d: dict[str, Any], key: str, where: str) -> float | None:
    v = d.get(key)
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
        raise FiguresError(f"{where}: {key} must be a finite number, got {v!r}")
    return v


def _conditions(d: dict[str, Any], where: str) -> None:
    """A run's conditions as `ssdlab run` takes them (a figure no run can measure is refused)."""
    spare, seconds = _num(d, "spare", where), _num(d, "seconds", where)
    if spare is not None and not 0 <= spare < 100:
        raise FiguresError(f"{where}: spare = {spare}: must be at least 0 and below 100 (%)")
    if seconds is not None and not 0 < seconds <= 1e7:
        raise FiguresError(f"{where}: seconds = {seconds}: must be above 0 and at most 1e7")
    tb = d.get("testbed", [])
    if not isinstance(tb, list) or not all(isinstance(x, str) and "=" in x for x in tb):
        raise FiguresError(f"{where}: testbed must be a list of profile overrides key=value")


def figure(d: dict[str, Any], drive: str | None, where: str) -> Figure:
    name = d.get("name")
    bad = set(d) - FIGURE_KEYS
    if bad:
        named = f" '{name}'" if isinstance(name, str) and name else ""
        raise FiguresError(f"{where}{named}: unknown key {', '.join(sorted(bad))} "
                           f"(known: {', '.join(sorted(FIGURE_KEYS))})")
    if not isinstance(name, str) or not name:
        raise FiguresError(f"{where}: every figure needs a name")
    where = f"{where} '{name}'"
    if "test" not in d:
        raise FiguresError(f"{where}: no test (e.g. test = \"fill\")")
    _test_name(d, where)
    unit = d.get("unit")
    if unit not in UNITS:
        raise FiguresError(f"{where}: unknown unit {unit!r}: use one of {', '.join(UNITS)}")
    kind = d.get("kind", "published")
    if kind not in KINDS:
        raise FiguresError(f"{where}: unknown kind {kind!r}: use one of {', '.join(KINDS)}")
    value, lo, hi = (_num(d, k, where) for k in ("value", "lo", "hi"))
    tol = _num(d, "tolerance", where)
    tol = TOLERANCE if tol is None else tol
    if not 0 <= tol < 10:
        raise FiguresError(f"{where}: tolerance {tol} is a share (0.15 is +-15 %)")
    if value is None and lo is None and hi is None:
        raise FiguresError(f"{where}: no value: give a value, or a range (lo and/or hi)")
    if value is not None and (lo is not None or hi is not None):
        raise FiguresError(f"{where}: give a value, or a range (lo and/or hi), not both")
    if lo is not None and hi is not None and lo > hi:
        raise FiguresError(f"{where}: lo {lo} is above hi {hi}")
    if d.get("widen"):  # a rating's range checked as a rating: each end moved out by the tolerance
        if value is not None:
            raise FiguresError(f"{where}: widen applies to a range (lo/hi)")
        lo = None if lo is None else lo * (1 - tol)
        hi = None if hi is None else hi * (1 + tol)
    needs: list[tuple[str | None, RunKey]] = []
    _conditions(d, where)
    run = run_key(d)
    node = {k: d[k] for k in (*LEAF, *COMBINE, "args") if k in d}
    measure = _node({**node, "test": run[0]}, run, None, where, needs)
    for k in ("source", "how", "expected_failure"):
        if k in d and not isinstance(d[k], str):
            raise FiguresError(f"{where}: {k} must be text")
    own = drive or ""
    return Figure(own, name, run, measure, value=value, lo=lo, hi=hi, unit=unit, how=d.get("how", ""),
                  source=d.get("source", ""),
                  needs=tuple(dict.fromkeys((n or own, r) for n, r in needs if (n or own, r) != (own, run))),
                  xfail=d.get("expected_failure"), tol=tol, kind=kind, node=node)


def load(path: str | Path, text: str | None = None) -> FiguresFile:
    """A figures file, checked whole: one FiguresError naming the first problem."""
    path = Path(path)
    try:
        if text is None:  # through no other user's link: errors quote the file's keys and values
            text = safe_path.read_input(path, f"figures file {path}", MAX_BYTES).decode()
        doc = tomllib.loads(text)
    except safe_path.UnsafePath as e:
        raise FiguresError(str(e) if e.refusal else f"{path}: cannot read the figures file ({e.reason})") from None
    except (OSError, UnicodeDecodeError) as e:
        raise FiguresError(f"{path}: cannot read the figures file ({e})") from None
    except tomllib.TOMLDecodeError as e:
        raise FiguresError(f"{path}: not TOML: {e}") from None
    bad = set(doc) - {"drive", "facts", "start", "figure"}
    if bad:
        raise FiguresError(f"{path}: unknown key {', '.join(sorted(bad))} (a figures file has drive, facts, "
                           "start and [[figure]] tables)")
    drive = doc.get("drive")
    facts = doc.get("facts", {})
    for key, value, shape in (("drive", drive, "text (a built-in profile's id)"),
                              ("start", doc.get("start"), "text (a built-in profile's id)")):
        if value is not None and not isinstance(value, str):
            raise FiguresError(f"{path}: {key} must be {shape}, not {value!r}")
    if not isinstance(facts, dict):
        raise FiguresError(f"{path}: facts must be a table ([facts] with e.g. capacity_gb = 512), not {facts!r}")
    for k, v in facts.items():
        if k not in FACTS:
            raise FiguresError(f"{path}: unknown fact {k!r}: known are {', '.join(FACTS)}")
        if not isinstance(v, FACTS[k]) or isinstance(v, bool):
            raise FiguresError(f"{path}: fact {k} = {v!r} has the wrong type")
        if k in CHOICES and v not in CHOICES[k]:
            raise FiguresError(f"{path}: fact {k} = {v!r}: use one of {', '.join(CHOICES[k])}")
        if k in COUNTS and isinstance(v, int) and v < 1:
            raise FiguresError(f"{path}: fact {k} = {v} must be at least 1")
        if k == "nand_mts" and isinstance(v, (int, float)) and not 10 <= v <= 10000:
            raise FiguresError(f"{path}: fact nand_mts = {v} is not a NAND interface rate: give the part's "
                               "transfers a second in millions (10 to 10000, e.g. 200 for ONFI 2.2)")
    if facts.get("dies", 0) % facts.get("channels", 1):
        raise FiguresError(f"{path}: facts dies = {facts['dies']} and channels = {facts['channels']}: the dies must "
                           "be a multiple of the channels (dies per channel x channels)")
    rows = doc.get("figure", [])
    if not isinstance(rows, list) or not rows:
        raise FiguresError(f"{path}: no figures ([[figure]] tables)")
    for i, r in enumerate(rows):
        if not isinstance(r, dict):
            raise FiguresError(f"{path}: figure {i + 1}: expected a table ([[figure]] with name, test, ...), "
                               f"got {r!r}")
    figs = [figure(r, drive, f"{path}: figure {i + 1}") for i, r in enumerate(rows)]
    names = [f.name for f in figs]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise FiguresError(f"{path}: figure names must be unique: {', '.join(dup)}")
    return FiguresFile(path, drive, figs, dict(facts), doc.get("start"))


def builtin_paths() -> list[Path]:
    d = resources.files(__package__) / DIR
    return sorted((Path(str(p)) for p in d.iterdir() if p.name.endswith(".toml")), key=lambda p: p.name)


def builtin(drive: str) -> FiguresFile:
    p = resources.files(__package__) / DIR / f"{drive}.toml"
    if not p.is_file():
        raise FiguresError(f"no figures file for {drive}")
    return load(Path(str(p)))
