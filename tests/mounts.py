"""A tmpfs of the tests' own, mounted for a block (root: `make test` runs as root)."""

from __future__ import annotations

import contextlib
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest


@contextlib.contextmanager
def tmpfs(d: Path, size: str) -> Iterator[Path]:
    """Directory `d` (made here) as a tmpfs of `size` (e.g. "70m") until the block ends."""
    if os.geteuid() != 0:
        pytest.fail("needs root to mount a tmpfs (make test runs as root)")
    d.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(d)], check=True)
    try:
        yield d
    finally:
        subprocess.run(["umount", "-l", str(d)], check=False)
