"""Capacity scaling on built-in profiles: within a family the controller is the same, so the
native write pipeline (`nand.native_write_mbps`) caps the larger model's writes after the SLC
cache, and the family's post-cache ratio follows what its maker or reviewers publish, not the
die ratio. Switching the pipeline off shows the die ratio coming back."""

from __future__ import annotations

import pytest

_sim = pytest.importorskip("ssdlab._sim")
from ssdlab import profiles  # noqa: E402

GIB = 1 << 30
DIRECT = ("slc.dynamic_max_gb=0", "slc.static_gb=0")  # no SLC cache: every host write is a native program


def native_write_mbps(pid: str, *sets: str) -> float:
    """128 KiB QD32 sequential writes over 8 GiB of a purged drive, straight to native blocks."""
    d = _sim.Drive(profiles.load_text(pid), overrides=[*DIRECT, *sets], seed=42)
    d.run({"kind": "purge"})
    n = 8 * GIB
    r = d.run({"kind": "io", "pattern": "seq", "read_pct": 0, "block_size": 128 << 10,
               "queue_depth": 32, "offset": 0, "length": n, "stop_bytes": n})
    return float(r["totals"]["mbps"])


def test_the_larger_bg4_writes_after_the_cache_at_the_published_ratio_not_the_die_ratio():
    # Kioxia BG4: 4 dies (128 GB) and 8 dies (256 GB) of one BiCS4 die behind one controller;
    # the review: ~200 and ~300 MB/s after the cache, 1.5x with twice the dies.
    small, large = native_write_mbps("bg4-128"), native_write_mbps("bg4-256")
    assert large / small == pytest.approx(1.5, rel=0.15), (small, large)
    assert large == pytest.approx(300, rel=0.05)
    # Without the pipeline the 8 dies write twice what the 4 do.
    free = native_write_mbps("bg4-256", "nand.native_write_mbps=0")
    assert free / small == pytest.approx(2.0, rel=0.05), (small, free)


def test_a_pipeline_above_the_dies_rate_changes_nothing():
    # PM981a: the pipeline is at least the 970 EVO Plus 1 TB's rated 1700 MB/s, above what
    # the 256 GB's 8 dies program (~400 MB/s): the dies set the speed.
    capped = native_write_mbps("pm981a-256")
    free = native_write_mbps("pm981a-256", "nand.native_write_mbps=0")
    assert capped == pytest.approx(free, rel=0.01) and capped == pytest.approx(400, rel=0.05)
