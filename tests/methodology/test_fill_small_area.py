"""The fill test on an area smaller than 16 GB has no last 16 GB: the figure is null, not the
whole pass with its cache (an 8 GB drive with a 2 GB cache read 'last 16 GB' faster than its
post-cache speed)."""

import pytest
from fakes import FakeTarget

from ssdlab.methodology import Options
from ssdlab.phase import GB
from ssdlab.runner import run_test


def fill(store, capacity):
    opts = Options()
    _, (out,) = run_test(store, "fill", [("fake", FakeTarget(capacity=capacity, cache_bytes=2 * GB))],
                         opts, {"spare": 0.0})
    return out.metrics


def test_no_last_16_gb_on_an_8_gb_area(store):
    m = fill(store, 8 * GB)
    assert m["last16_mbps"] is None
    assert m["post_cache_mbps"] == pytest.approx(500, rel=0.02)


def test_a_16_gb_area_has_its_last_16_gb(store):
    m = fill(store, 17 * GB)
    assert m["last16_mbps"] is not None and m["last16_mbps"] < m["peak_mbps"]


@pytest.mark.parametrize("area", [8 * GB - 413696, 17 * GB, 31_999_000_000, 1 * GB])
def test_the_segments_of_a_small_area_cover_it(area):
    """1/32 of an area under 32 GB, rounded down to whole MB: 32 whole segments, so the curve
    reaches the end of the pass (rounded up, the 8 GB area's 250 MB made 31, and the last
    0.25 GB, where the drive slows most, was not on it)."""
    from ssdlab.methodology.fill import MIN_SEGMENTS, segment_bytes

    seg = segment_bytes(area)
    assert area // seg == MIN_SEGMENTS and area - MIN_SEGMENTS * seg < MIN_SEGMENTS * 10**6
