"""Fill curves whose first segment or whole pass says less than it seems: a write buffer's
head start on the first segment, a cache the fill never used up."""

import numpy as np

from ssdlab.analysis import fill_shape


def test_a_fast_first_segment_alone_is_not_a_cache():
    """A 0.8 GB area in 25 MB segments (sim:tlc-256 at --spare 90, its 1 GB SLC cache over
    the whole area): the first segment 1936 MB/s, the write buffer's head start on a short
    segment, then 1630-1645 throughout. No knee: no cache, and 1638 is no post-cache speed."""
    gb = np.arange(1, 32) * 0.025
    mbps = np.r_[1936.0, np.tile([1643.0, 1630.0, 1645.0], 10)]
    s = fill_shape(gb, mbps)
    assert s.slc_cache_gb is None and s.drop_index is None


def test_a_one_segment_cache_with_a_deep_drop_is_still_a_cache():
    """sim:sn520-128: 794 MB/s for the first GB, then 200-330: a cache of one segment."""
    gb = np.arange(1.0, 128.0)
    mbps = np.r_[794.0, 276.0, np.full(125, 221.0)]
    assert fill_shape(gb, mbps).slc_cache_gb == 1.0


def test_a_steady_decline_has_no_knee():
    """500 MB/s falling evenly to 300 over 256 GB: no step anywhere, so no cache (it was
    reported as a 166 GB cache, where the speed crossed 85 % of the mean before it)."""
    gb = np.arange(1.0, 257.0)
    s = fill_shape(gb, np.linspace(500.0, 300.0, 256))
    assert s.slc_cache_gb is None and s.drop_index is None


def test_a_cache_that_tapers_over_a_few_segments_still_ends():
    """2000 MB/s for 20 GB, then down to 500 over 10 GB (folding starting while the cache
    fills): the drop is where the speed first falls well below the cached level."""
    gb = np.arange(1.0, 129.0)
    mbps = np.r_[np.full(20, 2000.0), np.linspace(1850.0, 500.0, 10), np.full(98, 500.0)]
    assert fill_shape(gb, mbps).slc_cache_gb == 22.0


def test_the_peak_is_the_sustained_rate_not_the_buffers_head_start():
    """The same 0.8 GB pass: its peak is the rate the cache sustains (1630-1645 MB/s), not
    the first segment's 1936, which the write buffer, empty at the start, took ahead of the
    NAND."""
    gb = np.arange(1, 32) * 0.025
    mbps = np.r_[1936.0, np.tile([1643.0, 1630.0, 1645.0], 10)]
    assert fill_shape(gb, mbps).peak_mbps == 1645.0


def test_a_one_segment_cache_keeps_its_first_segment_as_the_peak():
    """sim:sn520-128: the cache is the first segment, the only measure of its speed."""
    gb = np.arange(1.0, 128.0)
    mbps = np.r_[794.0, 276.0, np.full(125, 221.0)]
    assert fill_shape(gb, mbps).peak_mbps == 794.0


def test_a_last_partial_segment_is_no_point_of_the_shape():
    """40 GB in 1 GB segments and a last 0.01 GB at 1900 MB/s (a real drive's fio logs keep
    it): 10 MB are not a peak nor a recovery after a 4 GB cache at 1800."""
    gb = np.r_[np.arange(1.0, 41.0), 40.01]
    mbps = np.r_[np.full(4, 1800.0), np.full(36, 500.0), 1900.0]
    s = fill_shape(gb, mbps)
    assert s.peak_mbps == 1800.0 and s.slc_cache_gb == 4.0 and s.recovery_peaks == 0
