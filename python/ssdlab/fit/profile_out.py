"""The twin as a profile TOML, usable as `--drive sim:./twin.toml`: the class profile with
the fitted values, every value with where it comes from (fitted by `ssdlab fit` to which
evidence and how well the evidence pins it; the class's value where the evidence does not
pin it; a fact the evidence gave; the class's otherwise)."""

from __future__ import annotations

import copy
import math
import tomllib
from dataclasses import dataclass
from typing import Any, Sequence

from .space import DERIVED, Start, fact_behind

# a fact the fit read off a fingerprint's figures (evidence.infer_facts), as its twin says it
READ_OFF = {
    "interface": "read off the fingerprint: its fastest phase (none above 600 MB/s: SATA's link)",
    "pcie_gen": "read off the fingerprint: its fastest phase (above 4200 MB/s: PCIe 4.0)",
    "mapping": "read off the fingerprint: its QD1 reads over the whole drive against its smallest span "
               "(slower: a mapping cache that does not cover the drive)",
}

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
    lo: float  # pinned: the bracket (values looked at just beyond it fit worse); else see range_is
    hi: float
    pinned: bool
    why: str  # one line: pinned to lo..hi, or why not
    reverted: bool = False  # unpinned and set back to the class's value
    # what lo..hi is: "bracket" (each side ends at the nearest value looked at that no longer
    # fits as well, or a bound: the value lies inside, how much of it fits as well is not
    # resolved), "seen" (values seen to fit as well: at least that wide), "linearized" (with the
    # others re-fitted), "bounds" (nothing moves with it: the whole range)
    range_is: str = "bracket"
    # the loss with this parameter alone at the class's value, the others at the best, at the
    # drive's own size (prior.py: a pin checked for a local minimum); None where not run
    class_loss: float | None = None


def range_rel(value: float, lo: float, hi: float) -> tuple[float, float] | None:
    """A range's ends against the twin's value, as fractions (-0.08, 0.087): how closely a pinned
    value is known. None where a share of the value says nothing: a value of 0 (off) or not
    above 0, a range down to 0 or below (its low end reads -100 %, and a value near 0 makes
    its high end any share at all: 0.0055 us pinned to 0..3 us is +54784 %), or an end not
    finite."""
    if not (math.isfinite(value) and math.isfinite(lo) and math.isfinite(hi)) or value <= 0 or lo <= 0:
        return None
    return lo / value - 1.0, hi / value - 1.0


EDGE = 1e-9  # in the cube: an end this near 0 or 1 is the search's bound


def at_bounds(q: Any, lo: float, hi: float) -> tuple[bool, bool]:
    """Whether a range's ends are the search's own floor and ceiling for parameter `q` (a
    space.Param): there the search, not the evidence, ends the range."""
    return q.unit_of(lo) <= EDGE, q.unit_of(hi) >= 1.0 - EDGE


def range_of(q: Any, pin: Pin) -> tuple[tuple[float, float] | None, tuple[bool, bool]]:
    """A parameter's range as fit --json gives it: `range_rel` (its ends against the value,
    None for a parameter of a few values or choices, and where an end is the search's bound:
    the value may lie anywhere toward it, so a share of the value says nothing) and
    `range_at_bound` (which ends are the search's floor and ceiling)."""
    ends = at_bounds(q, pin.lo, pin.hi)
    if q.pow2 or q.integer or q.choices or any(ends):
        return None, ends
    return range_rel(pin.value, pin.lo, pin.hi), ends


def _open(lo: float, hi: float, ends: Sequence[bool], unit: str) -> str:
    """A range with one end the search's bound, said by its other end: "at most 3.005 us"."""
    if ends[0] and not ends[1]:
        return f"at most {_num(hi, unit)}"
    if ends[1] and not ends[0]:
        return f"at least {_num(lo, unit)}"
    return ""


def pinned_label(p: dict[str, Any]) -> str:
    """A parameter's "pinned" as the report, the printed table and the docs' tables say it: a
    pinned value with how closely, its bracket's ends against the twin's value (fit --json:
    `range_rel`); where one end is the search's bound (`range_at_bound`; in a document kept
    without it, a range down to 0), the other end ("at most 3.005 us"); "pinned" alone where neither says anything (a value of 0, a die count)."""
    if not p["pinned"]:
        return "NOT pinned"
    rel = rel_of(p)
    if rel:
        return f"pinned to {100 * rel[0]:+.1f}..{100 * rel[1]:+.1f} %"
    from .space import discrete_keys

    side = "" if p["key"] in discrete_keys() else _open(p["lo"], p["hi"], p.get("range_at_bound") or (p["lo"] <= 0, False),
                                                            p.get("unit", ""))
    return f"pinned to {side}" if side else "pinned"


def rel_of(p: dict[str, Any]) -> Sequence[float] | None:
    """A fit --json parameter's `range_rel`; for a document kept without it, from its value and
    range. None for a parameter that takes a few values (the die count: a bracket's ends are
    the neighbouring counts, which fit worse, so the value itself is pinned), and for a range
    down to 0 (a document kept before such a range had none: its low end -100 %)."""
    if "range_rel" in p:
        rel = p["range_rel"]
        return rel if rel and rel[0] > -1.0 else None
    from .space import discrete_keys

    return None if p["key"] in discrete_keys() else range_rel(p["value"], p["lo"], p["hi"])


# the parameter table's range, as its legend says it
RANGE_HEAD = "range (pinned: the nearest values looked at beyond it fit worse)"
PINNED_LEGEND = ("Pinned to -x..+y %: the good trials and the parameter's own slice end within that range of the "
                 "twin's value, each side at the nearest value looked at that no longer fits as well (or a bound): "
                 "the evidence puts the drive's value inside and chooses no closer, so a twin anywhere in it may pass "
                 "every figure; pinned to at most HI (at least LO): the range reaches the search's floor (ceiling), "
                 "where a share of the value says nothing (0.0055 us pinned to 0..3 us). NOT pinned: the evidence "
                 "does not tell (its range: at least that fits as well, unless its note says otherwise); the twin "
                 "keeps the class's value where the fit allows.")


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
            rel, ends = range_of(q, pin)
            side = "" if q.pow2 or q.integer else _open(pin.lo, pin.hi, ends, q.unit)
            bound = f"{_num(pin.lo, q.unit)} is the search's floor" if ends[0] else \
                f"{_num(pin.hi, q.unit)} is the search's ceiling"
            note = (f"fitted: the evidence pins it to {_num(pin.lo, q.unit)}..{_num(pin.hi, q.unit)}"
                    + (f" ({100 * rel[0]:+.1f}..{100 * rel[1]:+.1f} %)" if rel else
                       f" ({side}: {bound})" if side else ""))
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
        notes.setdefault(k, READ_OFF.get(fact_behind(k), "read off the fingerprint's figures")
                         if fact_behind(k) in start.inferred else
                         "given by the evidence (its capacity, interface, link, mapping or NAND geometry)")
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
             f"user_capacity_gb = {float(p['user_capacity_gb'])!r}  # {capacity}"]  # to the byte: blocks may hold no more
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
