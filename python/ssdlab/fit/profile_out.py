"""The twin as a profile TOML, usable as `--drive sim:./twin.toml`: the class profile with
the fitted values, every value with where it comes from (fitted by `ssdlab fit` to which
evidence and how well the evidence pins it; the class's value where the evidence does not
pin it; a fact the evidence gave; the class's otherwise)."""

from __future__ import annotations

import copy
import math
import tomllib
from dataclasses import dataclass
from typing import Any

from .space import DERIVED, Start

SECTIONS = ("host", "nand", "nand.slc", "nand.native", "nand.retry", "ftl", "slc", "mapping", "power")
# the profile keys a derived parameter sets
SETS = {"dies": ("nand.channels", "nand.dies_per_channel"), "spare_pct": ("nand.blocks_per_plane",),
        "slc.cache_share": ("slc.dynamic_max_gb",), "slc.static_share": ("slc.static_gb",),
        "slc.reclaim_share": ("slc.reclaim_gb",)}


@dataclass
class Pin:
    """How well the evidence pins one parameter (pinning.py)."""

    key: str
    value: float  # in the twin
    fitted: float  # where the search ended
    lo: float  # the range that fits as well
    hi: float
    pinned: bool
    why: str  # one line: pinned to lo..hi, or why not
    reverted: bool = False  # unpinned and set back to the class's value


def _fmt(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, str):
        return '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if v == 0 or not math.isfinite(v):
            return "0.0"
        r = float(f"{v:.5g}")
        return repr(r)
    if isinstance(v, list):
        return "[" + ", ".join(_fmt(x) for x in v) + "]"
    raise TypeError(f"cannot write {v!r} to a profile")


def _set(p: dict[str, Any], key: str, value: Any) -> None:
    parts = key.split(".")
    cur = p
    for part in parts[:-1]:
        cur = cur.setdefault(part, {})
    cur[parts[-1]] = value


def _num(x: float, unit: str) -> str:
    return f"{x:.4g}" + (f" {unit}" if unit else "")


def write(start: Start, values: dict[str, float], pins: dict[str, Pin], twin_id: str, name: str,
          evidence: str, seed: int, trials: int) -> str:
    """The twin's profile text (checked by the simulator by the caller)."""
    p = copy.deepcopy(start.profile)
    settings = start.settings(values)
    for k, v in settings.items():
        _set(p, k, v)
    p["id"], p["name"] = twin_id, name
    by_key = {q.key: q for q in start.params}
    notes: dict[str, str] = {}
    for key, pin in pins.items():
        q = by_key[key]
        if q.choices:  # a policy: its name, not its number
            seen = sorted({q.choices[int(round(x))] for x in (pin.lo, pin.hi)})
            note = (f"fitted: the evidence chooses {' or '.join(seen)}" if pin.pinned else
                    "the class's choice: NOT pinned by the evidence" if pin.reverted else
                    f"NOT pinned by the evidence ({' and '.join(seen)} fit as well); the choice the search ended at")
        elif pin.pinned:
            note = f"fitted: the evidence pins it to {_num(pin.lo, q.unit)}..{_num(pin.hi, q.unit)}"
        elif pin.reverted:
            note = f"the class's value: NOT pinned by the evidence ({pin.why})"
        else:
            note = f"NOT pinned by the evidence ({pin.why}); the value the search ended at"
        if key in DERIVED:
            note = f"from {key} = {_num(pin.value, q.unit)} ({q.meaning}), {note}"
            for k in SETS.get(key, ()):
                notes[k] = note
        else:
            notes[key] = note
    for k in start.fixed:
        notes.setdefault(k, "given by the evidence (its capacity, interface, link, mapping or NAND geometry)")
    # the layout follows the die count and spare area; where neither was searched, whose they are
    classs = f"the class's, {start.class_id}"
    dies = "given by the evidence" if "dies" in start.facts else "fitted" if "dies" in pins else classs
    spare = "given by the evidence" if "spare_pct" in start.facts else "fitted" if "spare_pct" in pins else classs
    for k in ("nand.channels", "nand.dies_per_channel"):
        notes.setdefault(k, f"from the die count ({dies})")
    notes.setdefault("nand.blocks_per_plane", f"from the die count ({dies}) and spare area ({spare})")
    capacity = ("given by the evidence" if start.facts.get("capacity_gb")
                else f"{classs}: the evidence gives no capacity")
    lines = [f"# Twin of {name.removeprefix('Twin of ').removesuffix(' (ssdlab fit)')}: fitted by ssdlab fit to "
             f"{evidence}",
             f"# (seed {seed}, {trials} trials), starting from the generic class {start.class_id}. Every searched",
             "# value says how well the evidence pins it; a value the evidence does not pin is the class's",
             f"# ({start.class_id}) unless the fit needed it moved, and is marked NOT pinned either way; keys",
             "# without a note are the class's. Report and cross-validation: ssdlab fit -o DIR.",
             f"id = {_fmt(p['id'])}", f"name = {_fmt(p['name'])}",
             f"user_capacity_gb = {_fmt(float(p['user_capacity_gb']))}  # {capacity}"]
    for sec in SECTIONS:
        table: Any = p
        for part in sec.split("."):
            table = table.get(part) if isinstance(table, dict) else None
        if not isinstance(table, dict):
            continue
        rows = [(k, v) for k, v in table.items() if not isinstance(v, dict)]
        if not rows:
            continue
        lines += ["", f"[{sec}]"]
        for k, v in rows:
            said = notes.get(f"{sec}.{k}")
            lines.append(f"{k} = {_fmt(v)}" + (f"  # {said}" if said else ""))
    text = "\n".join(lines) + "\n"
    tomllib.loads(text)  # a profile TOML, or a bug here
    return text
