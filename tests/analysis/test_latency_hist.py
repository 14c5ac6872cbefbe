"""Percentiles from stored latency histograms: interpolated within the bucket, never above
the observed maximum (nor below the minimum), for the simulator's and fio's bucket layouts."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from ssdlab.analysis import latency_hist as H
from ssdlab.fioformat.plat import plat_idx_to_val


def test_the_five_nines_in_the_bucket_of_the_maximum_stay_at_or_below_it():
    # a simulated drive's slowest bucket ends at 57 x 4096 ns = 233.472 us and spans
    # 4.096 us (32 buckets between 131.072 and 262.144 us); the slowest I/O took 232.1 us:
    # the bucket's upper edge (the old five nines) is above the maximum
    edges = [100.0, 200.704, 233.472]
    counts = [99_000, 990, 10]  # 100,000 I/Os: the 99.999 % rank is the 9th of the top 10
    lo, hi = H.bucket_bounds(edges, "upper")
    assert lo[-1] == pytest.approx(229.376) and hi[-1] == pytest.approx(233.472)
    # the top bucket's I/Os lie in 229.376 .. 232.1 (the maximum): 9/10 of the way
    p = H.quantile(edges, counts, 0.99999, "upper", min_us=99.0, max_us=232.1)
    assert p == pytest.approx(229.376 + 0.9 * (232.1 - 229.376))
    assert H.quantile(edges, counts, 1.0, "upper", max_us=232.1) == pytest.approx(232.1)


def test_interpolation_within_a_bucket_worked_by_hand():
    # one bucket of 100 I/Os ending at 66 ns spans 64 .. 66 ns (2 ns wide above 64 ns):
    # the 25 % rank lies a quarter of the way in, 64.5 ns; the bucket below 64 ns is 1 ns
    assert H.quantile([0.066], [100], 0.25, "upper") == pytest.approx(0.0645)
    lo, hi = H.bucket_bounds([0.010, 0.064, 0.066, 0.068], "upper")
    assert np.allclose(lo * 1e3, [9, 63, 64, 66]) and np.allclose(hi * 1e3, [10, 64, 66, 68])


def test_fio_buckets_are_centred_on_fio_s_values_and_tile_the_axis():
    # fio's bucket idx covers [value - w/2, value + w/2): consecutive buckets touch
    idx = np.arange(100, 1100)
    vals = np.array([plat_idx_to_val(int(i)) for i in idx]) / 1e3
    lo, hi = H.bucket_bounds(vals, "fio")
    assert np.all(lo <= vals) and np.all(vals < hi)
    assert np.allclose(hi[:-1], lo[1:])


def test_simulator_buckets_hold_the_simulator_s_own_percentiles():
    # the simulator reports p50 .. p99.99 as the middle of the bucket holding the rank
    # (clipped to min..max): our bounds of that bucket put its middle there too
    from ssdlab.phase import KIB, Phase
    from ssdlab.profiles import load_text
    from ssdlab.targets.sim import SimTarget

    t = SimTarget(load_text("tlc-256"), ["user_capacity_gb=4"])
    r = t.run(Phase(kind="io", pattern="rand", read_pct=70, block_size=4 * KIB, queue_depth=8,
                    stop_seconds=0.5))
    lat = r.latency
    assert lat["hist_edges"] == "upper"
    lo, hi = H.bucket_bounds(lat["edges_us"], "upper")
    cum = np.cumsum(lat["counts"])
    for key, q in (("p50_us", 0.5), ("p99_us", 0.99), ("p99_9_us", 0.999)):
        i = int(np.searchsorted(cum, np.ceil(q * cum[-1])))
        mid = (lo[i] + hi[i] - 0.001) / 2
        want = min(max(mid, lat["min_us"]), lat["max_us"])
        assert lat[key] == pytest.approx(want, abs=1e-6)
        assert lo[i] <= H.percentile(lat, q * 100) <= min(hi[i], lat["max_us"])


@st.composite
def histograms(draw):
    n = draw(st.integers(1, 12))
    idx = sorted(draw(st.sets(st.integers(0, 900), min_size=n, max_size=n)))
    layout = draw(st.sampled_from(H.LAYOUTS))
    if layout == "fio":
        edges = np.array([plat_idx_to_val(i) for i in idx]) / 1e3
    else:  # the simulator's upper bounds: exact below 64 ns, then 32 per power of two
        def upper(i: int) -> int:
            if i < 64:
                return i + 1
            k = i - 64
            e, sub = k // 32 + 6, k % 32
            return (32 + sub + 1) << (e - 5)
        edges = np.array([upper(i) for i in idx]) / 1e3
    counts = np.array(draw(st.lists(st.integers(1, 10_000), min_size=n, max_size=n)), float)
    lo, hi = H.bucket_bounds(edges, layout)
    mn = draw(st.floats(0, 1)) * (hi[0] - lo[0]) + lo[0]
    mx = draw(st.floats(0, 1)) * (hi[-1] - lo[-1]) + lo[-1]
    if n == 1:
        mn, mx = min(mn, mx), max(mn, mx)
    return edges, counts, layout, mn, mx


@settings(max_examples=200, deadline=None)
@given(histograms(), st.lists(st.floats(1e-6, 1.0), min_size=2, max_size=6))
def test_percentiles_lie_between_min_and_max_and_grow_with_q(h, qs):
    edges, counts, layout, mn, mx = h
    vals = [H.quantile(edges, counts, q, layout, mn, mx) for q in sorted(qs)]
    assert all(v is not None and mn - 1e-9 <= v <= mx + 1e-9 for v in vals)
    assert all(a <= b + 1e-9 for a, b in zip(vals, vals[1:]))


def test_bad_input_is_refused_and_an_empty_histogram_has_no_percentile():
    assert H.quantile([], [], 0.5) is None and H.percentile({}, 50) is None
    with pytest.raises(ValueError, match="layout"):
        H.bucket_bounds([1.0], "log")
    with pytest.raises(ValueError, match="quantile"):
        H.quantile([1.0], [1], 0.0)


def test_a_quantile_between_two_modes_is_known_only_to_the_gap():
    """An MLC drive's QD1 reads: half from lower pages (125 us), half from upper pages
    (172 us). Their median lands on either mode from one run of the phase to the next, so a
    twin's fit must not pin it closer than the gap; a quantile inside one mode is known to
    the binomial spread and its bucket (a few %)."""
    from ssdlab.analysis.curves import hist_quantiles, quantile_step

    edges, counts = [124.928, 172.032], [34_100, 34_200]  # 68,300 reads, 50.07 % upper pages
    assert hist_quantiles(edges, counts, [0.5]) == [172.032]
    lower, _ = H.bucket_bounds([172.032])
    step = quantile_step(edges, counts, 0.5)
    assert step == pytest.approx((172.032 - 124.928 + 172.032 - lower[0]) / 172.032)
    assert 124.928 >= 172.032 * (1 - step)  # the other mode is within it
    # the 25 % quantile sits inside the lower mode: only its bucket (2.048 us wide there)
    assert quantile_step(edges, counts, 0.25) == pytest.approx(2.048 / 124.928)
    # few samples spread a quantile more: 20 reads, and the 25 % rank may reach the upper mode
    assert quantile_step(edges, [10, 10], 0.25) > 0.3
    assert quantile_step([], [], 0.5) is None
