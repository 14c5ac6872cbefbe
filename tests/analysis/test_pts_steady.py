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


def test_never_steady_in_25_rounds_reports_the_last_window():
    rounds = [100, 150] * 15  # 30 values; the rule stops at 25
    v = S.verdict(rounds)
    assert not v.reached and v.rounds == 25
    assert (v.window.first_round, v.window.last_round) == (21, 25)
    assert v.window.values == (100, 150, 100, 150, 100)


def test_a_zero_or_missing_round_is_not_steady():
    assert not S.window([0, 0, 0, 0, 0]).steady
    assert not S.window([100, np.nan, 100, 100, 100]).steady
