"""A metric's name in the comparison tables: a percentile's decimals stay one number
(fio and trace runs report p99.9 and p99.99 latencies), "read lat p99 9" read as two."""

from __future__ import annotations

import pytest

from ssdlab.figures.data import metric_title


@pytest.mark.parametrize("name, title", [
    ("read_lat_p99_9_us", "read lat p99.9 (µs)"),
    ("write_lat_p99_99_us", "write lat p99.99 (µs)"),
    ("empty_lat_p99_9_us", "empty lat p99.9 (µs)"),
    ("read_lat_p50_us", "read lat p50 (µs)"),
    ("clean_write_mbps", "clean write (MB/s)"),
    ("p1_low_iops", "Lowest 1% IOPS"),
])
def test_a_percentile_is_named_as_one_number(name, title):
    assert metric_title(name) == title
