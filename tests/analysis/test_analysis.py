import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from ssdlab.analysis import (comparison_table, fill_shape, pct_change, rate_mbps,
                             round_seconds, steady_state, summary)
from ssdlab.analysis.slc import MIN_SPAN, SUSTAIN
from ssdlab.analysis.steady import window_is_steady

floats = st.floats(min_value=0.0, max_value=1e7, allow_nan=False)


# ---- statistics ------------------------------------------------------------------------
def test_summary_known_values():
    s = summary(np.arange(1, 101, dtype=float))
    assert s.mean == 50.5
    assert s.min == 1.0
    assert s.p1_low == 1.0
    assert s.stdev == pytest.approx(np.std(np.arange(1, 101)))


def test_summary_ignores_nan_and_rejects_empty():
    assert summary([np.nan, 2.0, 4.0]).mean == 3.0
    with pytest.raises(ValueError):
        summary([np.nan])


@given(st.lists(floats, min_size=1, max_size=300))
def test_summary_orders(values):
    s = summary(values)
    assert s.min <= s.p1_low <= max(values)
    assert s.min <= s.mean * (1 + 1e-12) + 1e-9
    assert s.stdev >= 0


# ---- steady state ----------------------------------------------------------------------
def test_round_seconds_maps_runs_to_rounds():
    assert round_seconds(2000) == 60
    assert round_seconds(100) == 5
    assert round_seconds(3) == 1


def test_window_rule_range_and_slope():
    assert window_is_steady([100, 100, 100, 100, 100])
    assert not window_is_steady([100, 100, 100, 100, 125])  # range 25 % of the mean
    # range 19 %, but a steady climb: the fitted line moves 19 % across the window
    assert not window_is_steady([90.5, 95.25, 100, 104.75, 109.5])
    assert not window_is_steady([0, 0, 0, 0, 0])


def test_steady_state_skips_burst_and_transition():
    rng = np.random.default_rng(1)
    burst = np.full(300, 90_000.0)
    fall = np.linspace(90_000, 20_000, 200)
    band = 20_000 + rng.normal(0, 1_500, 1500)
    ss = steady_state(np.concatenate([burst, fall, band]), round_s=60)
    assert ss.reached
    # the flat burst passes the PTS rule by itself but is not the band the drive ends in
    assert 480 <= ss.start_s <= 600


def test_steady_state_waits_for_gc_and_for_the_climb_to_end():
    # GC's onset passed, the drive climbs back 47 % in 400 s: 20 s rounds pass the rule
    # window by window, but the seconds from a window to the end still trend
    ss = steady_state(np.linspace(3000, 4400, 400), round_s=20)
    assert ss.start_s == 280
    flat = np.full(400, 24_000.0)
    assert steady_state(flat, round_s=20, not_before=50).start_s == 60  # the next round's start
    assert steady_state(flat, round_s=20, not_before=None).start_s is None  # GC never began


def test_steady_state_starts_after_a_hump_not_on_its_rising_edge():
    # 60 s rounds of a 2000 s run (kIOPS): a climb to a hump at 660-780 s, then the band.
    # Every 5-round window from 600 s is flat enough and near the last window's level, and a
    # line across 600 s..end hardly moves, but the hump would be averaged into the figures.
    rounds = [6.6, 7.0, 7.5, 8.0, 8.5, 9.1, 9.7, 10.3, 10.9, 11.5, 12.2, 12.6, 10.7, 9.7,
              9.8, 10.0] + [10.0 + 0.03 * i for i in range(17)]
    ss = steady_state(np.repeat(np.asarray(rounds) * 1000, 60), round_s=60)
    assert ss.start_s == 12 * 60  # the first round after the hump


def test_steady_state_never_reached():
    x = np.tile([10_000.0, 30_000.0], 1000)  # 20 s rounds alternate wildly
    ss = steady_state(np.repeat(x, 10)[:2000], round_s=10)
    assert not ss.reached and ss.start_s is None


@settings(max_examples=50)
@given(st.floats(1.0, 1e6), st.integers(25, 400))
def test_constant_series_is_steady_from_start(level, n):
    assert steady_state(np.full(n, level)).start_s == 0


# ---- fill curve ------------------------------------------------------------------------
def curve(cache_gb, total_gb, fast=2000.0, slow=400.0, peaks=()):
    mbps = np.array([fast if g < cache_gb else slow for g in range(total_gb)])
    for p in peaks:
        mbps[p] = fast
    return np.arange(1, total_gb + 1, dtype=float), mbps


def test_fill_shape_finds_cache_and_peaks():
    gb, mbps = curve(20, 128, peaks=(60, 61, 90))
    s = fill_shape(gb, mbps)
    assert s.slc_cache_gb == 20.0
    assert s.peak_mbps == 2000.0
    assert s.drop_index == 20
    assert s.recovery_peaks == 2  # 60-61 is one peak, 90 another


def test_fill_shape_one_bad_segment_is_not_a_drop():
    gb, mbps = curve(0, 50, fast=500, slow=500)
    mbps[30] = 100.0
    s = fill_shape(gb, mbps)
    assert s.peak_mbps == 500.0
    assert s.slc_cache_gb is None and s.recovery_peaks == 0


def test_fill_shape_that_does_not_start_fast_has_no_cache():
    gb, mbps = curve(0, 50, fast=500, slow=500)
    mbps[10] = 3000.0  # a burst mid-fill is not a cache the drive started with
    s = fill_shape(gb, mbps)
    assert s.peak_mbps == 3000.0 and s.slc_cache_gb is None


def test_fill_shape_small_relative_drop_is_a_cache():
    gb, mbps = curve(20, 1024, fast=2100, slow=1600)  # the XG6 1 TB: ~20 GB, then >1600 MB/s
    s = fill_shape(gb, mbps)
    assert s.slc_cache_gb == 20.0 and s.recovery_peaks == 0


@settings(max_examples=100)
# margins: noisy cache >= 1880 > 0.85 x 2120; noisy post-cache <= 0.795 x 2000 < 0.85 x 1880
@given(st.integers(2, 40), st.floats(0.3, 0.75), st.randoms(use_true_random=False))
def test_fill_shape_noise_in_the_cache_is_not_a_drop(cache, ratio, rnd):
    gb, mbps = curve(cache, 80, fast=2000, slow=2000 * ratio)
    mbps = mbps * np.array([1 + rnd.uniform(-0.06, 0.06) for _ in mbps])  # +-6 % noise
    assert fill_shape(gb, mbps).slc_cache_gb == float(cache)


def test_fill_shape_swings_below_halfway_are_not_recoveries():
    gb, mbps = curve(10, 60, fast=750, slow=200)
    mbps[12:32:2] = 350.0  # the SN520's 200-350 MB/s swings
    assert fill_shape(gb, mbps).recovery_peaks == 0


def test_average_to_a_share_counts_stalls_at_the_floor():
    """MB/s from the start to each share, interpolated within a segment; a segment slower than
    `at_least` counts at it (a stall), a faster one as it ran (a cache)."""
    from ssdlab.analysis.curves import average_to

    t = np.cumsum([1 / 1.0, 1 / 0.5, 1 / 0.5, 1 / 0.1, 1 / 0.5])  # 1 GB segments: 1000, then 500 MB/s, a stall at 100
    gb = np.arange(1.0, 6.0)
    assert average_to(gb, t, [0.2, 0.3]) == pytest.approx([1000.0, 1500 / 2.0])
    assert average_to(gb, t, [0.8])[0] == pytest.approx(4000 / 15.0)
    assert average_to(gb, t, [0.8], at_least=500.0)[0] == pytest.approx(4000 / 7.0)
    assert average_to([], [], [0.5]) == [None]


def _span(total: int) -> int:
    """Segments a drop must leave behind it to count (slc.py: SUSTAIN, MIN_SPAN)."""
    return max(SUSTAIN, int(np.ceil(MIN_SPAN * total)))


@settings(max_examples=100)
@given(st.integers(1, 60), st.integers(61, 200), st.floats(600, 5000), st.floats(10, 440))
def test_fill_shape_recovers_any_step(cache, total, fast, slow):
    assume(total - cache >= _span(total))
    gb, mbps = curve(cache, total, fast, slow)
    s = fill_shape(gb, mbps)
    assert s.slc_cache_gb == float(cache)
    assert s.recovery_peaks == 0


@settings(max_examples=100)
@given(st.integers(5, 200), st.floats(600, 5000), st.floats(10, 440))
def test_fill_shape_slowdown_at_the_very_end_is_no_cache(total, fast, slow):
    """A drop that leaves less than the minimum span of the fill (a 4 GB device's five
    1 GB points 2289, 2318, 2176, 1154, 583) cannot be told from a stall at the end."""
    cache = total - _span(total) + 1
    gb, mbps = curve(cache, total, fast, slow)
    s = fill_shape(gb, mbps)
    assert s.slc_cache_gb is None and s.drop_index is None and s.recovery_peaks == 0
    assert fill_shape(np.arange(1.0, 6.0), [2289, 2318, 2176, 1154, 583]).slc_cache_gb is None


def test_fill_shape_dip_that_recovers_is_not_the_cache():
    """Three slow segments, then back at the cached speed for most of the fill: the speed
    did not stay down (median after the dip), so the cache ends at the real drop."""
    gb, mbps = curve(80, 128, fast=2000, slow=400)
    mbps[20:23] = 400.0
    assert fill_shape(gb, mbps).slc_cache_gb == 80.0


def test_rate_is_bytes_over_time():
    gb = np.array([1.0, 2.0, 3.0])
    t = np.array([1.0, 2.0, 12.0])  # 1000, 1000, 100 MB/s
    assert rate_mbps(gb, t) == pytest.approx(250.0)
    assert rate_mbps(gb, t, 2) == pytest.approx(100.0)


# ---- comparisons -----------------------------------------------------------------------
def test_pct_change():
    assert pct_change(200.0, 300.0) == 50.0
    assert pct_change(200.0, 100.0) == -50.0
    assert pct_change(0.0, 1.0) is None
    assert pct_change(None, 1.0) is None


def test_comparison_table_flattens_and_aligns():
    rows = comparison_table([
        ("256", {"peak_mbps": 1000.0, "iops_by_gb": {"1": 10.0}, "repeats": {"x": [1]}}),
        ("512", {"peak_mbps": 1500.0, "iops_by_gb": {"1": 5.0}, "only_here": 3.0}),
    ])
    by = {r["metric"]: r for r in rows}
    assert by["peak_mbps"]["values"] == [1000.0, 1500.0]
    assert by["peak_mbps"]["pct"] == [None, 50.0]
    assert by["iops_by_gb[1]"]["pct"] == [None, -50.0]
    assert by["only_here"]["values"] == [None, 3.0]
    assert "repeats" not in by


@given(st.floats(1, 1e6), st.floats(0, 1e6))
def test_pct_change_inverts(base, value):
    p = pct_change(base, value)
    assert base * (1 + p / 100) == pytest.approx(value, rel=1e-9, abs=1e-6)


@settings(max_examples=100)
@given(st.lists(st.floats(0, 1e5), min_size=5, max_size=400), st.integers(1, 20))
def test_steady_start_is_the_first_window_that_passes(values, round_s):
    ss = steady_state(values, round_s=round_s)
    n = ss.rounds.size

    def flat_to_end(r):  # the rounds from the window to the end: their line, their windows' means
        if len(r) < 2:
            return True
        means = [r[j:j + 5].mean() for j in range(len(r) - 4)] or [r[0]]
        return (abs(np.polyfit(np.arange(len(r)), r, 1)[0]) * (len(r) - 1) <= 0.1 * r.mean()
                and max(means) - min(means) <= 0.1 * r.mean())

    ok = [window_is_steady(ss.rounds[i:i + 5])
          and abs(ss.rounds[i:i + 5].mean() - ss.rounds[-5:].mean()) <= 0.2 * ss.rounds[-5:].mean()
          and flat_to_end(ss.rounds[i:])
          for i in range(n - 4)]
    if ss.reached:
        assert ss.start_s % round_s == 0 and ok[ss.start_s // round_s]
        assert not any(ok[: ss.start_s // round_s])
    else:
        assert not any(ok)
