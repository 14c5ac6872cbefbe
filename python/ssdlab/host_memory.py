"""The memory this machine has available to a new allocation (the kernel's MemAvailable)."""

from __future__ import annotations

import math


def available_bytes() -> float:
    """MemAvailable in bytes; inf when it cannot be read (no /proc: nothing is refused)."""
    try:
        with open("/proc/meminfo") as f:
            info = dict(line.split(":", 1) for line in f)
        return float(info["MemAvailable"].split()[0]) * 1024
    except (OSError, KeyError, ValueError):
        return math.inf
