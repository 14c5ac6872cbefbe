"""Small simulated drives for tests: the built-in profiles shrunk by `--set` overrides, so a
whole-drive fill takes a fraction of a second and a test's memory stays small."""

from __future__ import annotations

# tlc-256 shrunk to 8 GB: 46 blocks per plane, a 1 GB SLC cache
SMALL = ["user_capacity_gb=8", "nand.blocks_per_plane=46", "slc.dynamic_max_gb=1"]


def set_flags(sets: list[str]) -> list[str]:
    """['a=1', 'b=2'] -> ['--set', 'a=1', '--set', 'b=2']."""
    return [x for s in sets for x in ("--set", s)]
