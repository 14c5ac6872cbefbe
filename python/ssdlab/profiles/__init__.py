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
