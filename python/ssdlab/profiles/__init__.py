"""Built-in drive profiles: one TOML file per drive, shipped as package data."""

from __future__ import annotations

import tomllib
from importlib import resources

from ..errors import UserError


def builtin_ids() -> list[str]:
    return sorted(p.name[:-5] for p in resources.files(__package__).iterdir() if p.name.endswith(".toml"))


def load_text(profile_id: str) -> str:
    f = resources.files(__package__) / f"{profile_id}.toml"
    if not f.is_file():
        raise ValueError(
            f"unknown profile '{profile_id}': built-in profiles are {', '.join(builtin_ids())} "
            "(or give a path to a .toml profile file)"
        )
    return f.read_text()


def load(profile_id: str) -> dict:
    return tomllib.loads(load_text(profile_id))


# tables and arrays within each other: the built-ins nest 4 deep ([nand.native] and its
# values); twice that is no profile's
MAX_DEPTH = 8


def check_text(text: str, what: str) -> None:
    """ValueError with one short line naming `what` (a profile file) when `text` is no TOML
    a profile could be: the simulator's parser quotes the line it stops at, which can be
    the whole file (a 100,000-deep line)."""
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:  # its message names the line and column, not the text
        raise ValueError(f"{what} is not valid TOML: {e}") from None
    except RecursionError:
        doc = None
    if doc is None or nesting(doc) > MAX_DEPTH:
        raise ValueError(f"{what}: nested too deeply to read (a profile's tables and values are at "
                         f"most {MAX_DEPTH} deep; docs/profile-format.md)")


def nesting(doc: dict) -> int:
    """How deep tables and arrays lie within each other in `doc` (a table of numbers: 1)."""
    todo: list[tuple[dict | list, int]] = [(doc, 1)]
    deepest = 0
    while todo:
        v, d = todo.pop()
        deepest = max(deepest, d)
        if d <= MAX_DEPTH:  # one past the limit says enough
            todo.extend((x, d + 1) for x in (v.values() if isinstance(v, dict) else v)
                        if isinstance(x, (dict, list)))
    return deepest


def parse_sets(sets: list[str]) -> list[str]:
    """`--set key=value` profile overrides, each checked for its shape."""
    for s in sets:
        key, eq, value = s.partition("=")
        if not eq or not key.strip() or not value.strip():
            raise UserError(f"bad --set '{s}': expected key=value, e.g. --set nand.channels=8")
        if any(ord(c) < 32 or ord(c) == 127 for c in s):
            raise UserError(f"bad --set {s!r}: control characters (a newline) are not allowed; "
                            "give one key=value per --set")
    return list(sets)
