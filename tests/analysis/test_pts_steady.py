"""The PTS steady-state rule against worked numbers (each window worked by hand below)."""

from __future__ import annotations

import numpy as np
import pytest
from ssdlab.analysis import pts_steady as S


def test_a_flat_window_is_steady_with_the_hand_worked_line():
    # avg 100; max - min = 4 <= 20; x = 1..5, mean 3:
    # slope = sum((x-3)(y-100)) / sum((x-3)^2) = (0 - 2 + 0 + 1 - 2) / 10 = -0.3
    # excursion = 0.3 x 4 = 1.2 <= 10
    w = S.window([100, 102, 98, 101, 99])
    assert w.average == pytest.approx(100.0)
    assert w.data_excursion == pytest.approx(4.0)
    assert w.slope == pytest.approx(-0.3)
    assert w.intercept == pytest.approx(100.9)  # 100 - (-0.3 x 3)
    assert w.slope_excursion == pytest.approx(1.2)
    assert w.steady and (w.first_round, w.last_round) == (1, 5)
    assert w.fit([1, 5]) == pytest.approx([100.6, 99.4])


def test_a_rising_window_fails_on_the_slope_alone():
    # avg 100; range 16 <= 20 passes; slope 4 per round, excursion 16 > 10 fails
    w = S.window([92, 96, 100, 104, 108])
    assert w.data_ok and not w.slope_ok and not w.steady
    assert w.slope_excursion == pytest.approx(16.0)


def test_a_swinging_window_fails_on_the_range_alone():
    # avg 110; range 25 > 22 fails; the deviations -10 15 -10 15 -10 give slope 0
    w = S.window([100, 125, 100, 125, 100])
    assert w.slope == pytest.approx(0.0, abs=1e-9) and w.slope_ok
    assert not w.data_ok and not w.steady


def test_the_limits_themselves_pass():
    # range exactly 20 % of the average 100; slope (20 - 10)/10 = 1, excursion 4
    assert S.window([90, 110, 100, 100, 100]).steady
    # excursion exactly 10 % of the average: slope 2.5 per round, values 95 .. 105
    w = S.window([95, 97.5, 100, 102.5, 105])
    assert w.slope_excursion == pytest.approx(10.0) and w.steady


def test_steady_state_is_reported_at_the_last_round_of_the_first_steady_window():
    rounds = [500, 300, 100, 102, 98, 101, 99, 100, 100]
    v = S.verdict(rounds)
    assert v.reached and v.round == 7
    assert (v.window.first_round, v.window.last_round) == (3, 7)
    assert v.window.values == (100, 102, 98, 101, 99)
    assert not S.is_steady(rounds[:6]) and S.is_steady(rounds[:7])


def test_fewer_than_five_rounds_are_never_steady():
    assert not S.is_steady([100, 100, 100, 100])
    v = S.verdict([100, 100, 100, 100])
    assert not v.reached and v.round is None and v.rounds == 4


def test_a_window_of_fewer_than_five_rounds_is_not_steady_however_flat():
    # --rounds 2: the reported window is rounds 1-2, flat, but no measurement window
    w = S.window([100, 100])
    assert w.data_ok and w.slope_ok and not w.steady and not w.as_dict()["steady"]
    j = S.joint({"a": [100, 100], "b": [50, 50]}, 2)
    assert not j.reached and j.failing == ["a", "b"]


def test_the_window_plot_of_a_short_run_does_not_call_it_steady():
    from types import SimpleNamespace

    from ssdlab.methodology.pts.common import steady_metrics
    from ssdlab.methodology.pts.figures import window_plots

    m = steady_metrics({"RND 4 KiB 0/100 IOPS": [29800.0, 29900.0]}, 2)
    (p,) = window_plots("k", "pts-iops", SimpleNamespace(metrics=m, label="D"))
    assert ": RND 4 KiB 0/100 IOPS NOT steady" in p.title, p.title


def test_never_steady_in_25_rounds_reports_the_last_window():
    rounds = [100, 150] * 15  # 30 values; the rule stops at 25
    v = S.verdict(rounds)
    assert not v.reached and v.rounds == 25
    assert (v.window.first_round, v.window.last_round) == (21, 25)
    assert v.window.values == (100, 150, 100, 150, 100)


def test_a_zero_or_missing_round_is_not_steady():
    assert not S.window([0, 0, 0, 0, 0]).steady
    assert not S.window([100, np.nan, 100, 100, 100]).steady


# ---- the definitions of PTS 2.0.2, 2.1.24, worked by hand -----------------------------
def test_range_and_slope_are_the_spec_s_max_minus_min_of_data_and_of_the_fit():
    # Range(y) = Max(y) - Min(y) of the window; Slope(y) = Max - Min of the best linear
    # fit over rounds x-4..x, i.e. the fit's value at x minus its value at x-4
    y = [1634, 902, 809, 781, 757]  # a 1024 KiB read falling over rounds 1-5
    w = S.window(y)
    fit = np.polyval(np.polyfit([1, 2, 3, 4, 5], y, 1), [1, 2, 3, 4, 5])
    assert w.data_excursion == pytest.approx(max(y) - min(y)) == pytest.approx(877)
    assert w.slope_excursion == pytest.approx(fit.max() - fit.min())


def test_a_falling_read_is_far_from_steady_worked_by_hand():
    # avg 976.6; range 877 = 89.8 % > 20 %; deviations 657.4 -74.6 -167.6 -195.6 -219.6,
    # sum((x-3)(y-avg)) = -1314.8 + 74.6 - 195.6 - 439.2 = -1875, slope -187.5 per round,
    # the fit falls 4 x 187.5 = 750 = 76.8 % of the average across the window > 10 %
    w = S.window([1634, 902, 809, 781, 757])
    assert w.average == pytest.approx(976.6)
    assert w.data_excursion / w.average == pytest.approx(0.898, abs=1e-3)
    assert w.slope == pytest.approx(-187.5)
    assert w.slope_excursion / w.average == pytest.approx(0.768, abs=1e-3)
    assert not w.data_ok and not w.slope_ok and not w.steady


W4K = [100, 102, 98, 101, 99, 100, 100, 101, 99]  # steady from round 5 on (first test)
W64K = [90, 91, 89, 90, 90, 91, 89, 90, 90]  # steady from round 5 on
R1M = [1634, 902, 809, 781, 757, 760, 752, 755, 758]  # 1024 KiB reads, falling, then flat


def test_every_tracking_variable_must_be_steady_in_the_same_window():
    # 1024 KiB R: rounds 1-5 worked above (not steady); rounds 2-6: avg 801.8, range 145 =
    # 18.1 % (passes), deviations 100.2 7.2 -20.8 -44.8 -41.8 give slope -336 / 10 = -33.6,
    # the fit falls 134.4 = 16.8 % > 10 % (fails); rounds 3-7: avg 771.8, range 57 = 7.4 %,
    # deviations 37.2 9.2 -14.8 -11.8 -19.8 give slope -135 / 10 = -13.5, fall 54 = 7.0 %
    assert S.verdict(W4K).round == 5 and S.verdict(W64K).round == 5  # alone: round 5
    assert not S.window(R1M[1:6], 6).steady
    w = S.window(R1M[2:7], 7)
    assert w.average == pytest.approx(771.8) and w.slope == pytest.approx(-13.5) and w.steady
    j = S.joint({"4k": W4K, "64k": W64K, "1m": R1M})
    assert j.reached and j.round == 7 and (j.first_round, j.last_round) == (3, 7)
    assert all(w.steady for w in j.windows.values()) and j.failing == []
    assert [j.windows[k].values for k in ("4k", "1m")] == [(98, 101, 99, 100, 100),
                                                           (809, 781, 757, 760, 752)]


def test_one_variable_not_steady_keeps_the_whole_test_from_steady_state():
    falling = [1000, 900, 810, 729, 656, 590, 531, 478, 430]  # -10 % a round, never steady
    j = S.joint({"4k": W4K, "1m": falling})
    assert not j.reached and j.round is None and j.rounds == 9
    assert (j.first_round, j.last_round) == (5, 9) and j.failing == ["1m"]
    assert not S.is_steady_all({"4k": W4K[:7], "1m": falling[:7]})
    assert S.is_steady_all({"4k": W4K[:7], "64k": W64K[:7]})


def test_the_joint_verdict_stops_at_25_rounds_with_rounds_21_to_25():
    j = S.joint({"a": [100] * 30, "b": [100, 150] * 15})
    assert not j.reached and j.rounds == 25 and (j.first_round, j.last_round) == (21, 25)
    assert j.windows["a"].steady and not j.windows["b"].steady


# ---- a time series: the slow ramp that passes the rule minute by minute ----------------
RAMP = [102, 104, 106, 108, 110, 130, 160, 190, 210, 220, 224, 224, 224, 224, 224, 224]


def test_a_slow_ramp_passes_the_window_rule_alone():
    # minutes 1-5: avg 106, range 8 = 7.5 %, slope 2 a minute, the fit rises 8 = 7.5 %
    w = S.window(RAMP[:5])
    assert w.average == pytest.approx(106) and w.slope == pytest.approx(2.0) and w.steady


def test_a_ramp_is_settled_only_at_its_final_level():
    # final level: minutes 12-16, all 224 (steady); band +-10 % = 201.6 .. 246.4.
    # minutes 7-11 average 200.8 (outside); 8-12: 190 210 220 224 224, avg 213.6, the fit
    # rises 8.2 a minute, 32.8 = 15.4 % > 10 %; 9-13: 210 220 224 224 224, avg 220.4,
    # range 14 = 6.4 %, slope (20.8 + 0.4 + 3.6 + 7.2) / 10 = 3.2, rise 12.8 = 5.8 %: settled
    s = S.settle(RAMP)
    assert s.final.average == pytest.approx(224) and s.final.steady
    assert s.reached and s.minute == 13 and (s.window.first_round, s.window.last_round) == (9, 13)
    assert s.window.average == pytest.approx(220.4) and s.window.slope == pytest.approx(3.2)
    assert not S.window(RAMP[7:12], 12).steady


def test_a_series_still_ramping_at_its_end_never_settled():
    s = S.settle(RAMP[:10])  # ends at 102 .. 220, its last 5 minutes rising 22 a minute
    assert not s.final.steady and not s.reached and s.minute is None
    assert not S.settle([100, 100, 100, 100]).reached  # shorter than a window
