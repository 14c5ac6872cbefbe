"""The fill test on small simulated drives whose SLC cache covers the whole written area:
the pass never reaches the post-cache speed, so the test does not report one."""

from __future__ import annotations

import pytest

from drives import SMALL
from ssdlab.methodology import Options, get
from ssdlab.profiles import load_text
from ssdlab.runner import walk_phases

TEST = get("fill")


def run(sets, spare):
    pytest.importorskip("ssdlab._sim")
    from ssdlab.targets.sim import SimTarget

    t = SimTarget(load_text("tlc-256"), sets)
    opts = Options(spare=spare)
    return TEST.analyze(walk_phases(TEST, t, t.identify().capacity, opts), opts)


@pytest.mark.parametrize("spare", [90.0, 80.0])
def test_a_cache_larger_than_the_area_gives_no_post_cache_speed(spare):
    """8 GB with a 1 GB SLC cache, written over 0.8 / 1.6 GB... the 0.8 GB pass runs at the
    SLC speed from end to end: no knee and no post-cache speed, not the cached 1638 MB/s."""
    m = run([*SMALL], spare)
    if spare == 90.0:
        assert m["slc_cache_gb"] is None
        assert m["post_cache_mbps"] is None
        assert m["avg_mbps"] > 1500  # the whole pass in the cache
    else:  # 1.6 GB: the cache runs out within it, and the speed after it is measured
        assert m["slc_cache_gb"] is not None and m["post_cache_mbps"] < 0.5 * m["peak_mbps"]


def test_a_drive_without_a_cache_keeps_its_sustained_speed():
    """No cache at all: the whole pass is the sustained speed, as before."""
    m = run([*SMALL, "slc.dynamic_max_gb=0"], 0.0)
    assert m["slc_cache_gb"] is None
    assert m["post_cache_mbps"] == pytest.approx(m["avg_mbps"])


def test_the_peak_of_a_short_pass_is_its_sustained_slc_speed():
    """0.8 GB in 24 MB segments: the first ran at 1952 MB/s (the 4 MiB write buffer's head
    start: it filled at the link's speed ahead of the NAND), the rest at 1633-1646. The peak
    is the SLC speed the pass sustained, within 1 % of its average."""
    m = run([*SMALL], 90.0)
    assert m["peak_mbps"] == pytest.approx(m["avg_mbps"], rel=0.01)
