"""Built-in drive profiles: one TOML file per drive, shipped as package data."""

from __future__ import annotations

import tomllib
from importlib import resources


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
