"""The loss agrees with the figures' own checks: a figure passes exactly when its error is
within one tolerance, a range's ends being strict (just outside is a miss, not a near-pass)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from ssdlab.calibration import Figure
from ssdlab.fit.loss import residual

RUN = ("t", 0.0, None, 1, ())
POS = st.floats(min_value=0.01, max_value=1e6)


@given(value=POS, tol=st.floats(min_value=0.01, max_value=0.5), sim=st.floats(min_value=0.0, max_value=2e6))
def test_a_value_passes_within_its_tolerance(value, tol, sim):
    f = Figure("d", "v", RUN, lambda c: None, value=value, tol=tol)
    assert f.check(sim)[0] == (abs(residual(f, sim)) <= 1.0 + 1e-9) or abs(abs(residual(f, sim)) - 1.0) < 1e-6


@given(lo=POS, width=POS, tol=st.floats(min_value=0.01, max_value=0.5), sim=st.floats(min_value=0.0, max_value=3e6),
       ends=st.sampled_from(["both", "lo", "hi"]))
def test_a_range_passes_only_inside_it(lo, width, tol, sim, ends):
    hi = lo + width
    f = Figure("d", "r", RUN, lambda c: None, lo=lo if ends != "hi" else None, hi=hi if ends != "lo" else None, tol=tol)
    assert f.check(sim)[0] == (abs(residual(f, sim)) <= 1.0)


def test_just_outside_a_range_is_a_miss():
    peak = Figure("d", "peak", RUN, lambda c: None, lo=750.0, hi=860.0, tol=0.05)
    assert residual(peak, 865.1) > 1.0 and residual(peak, 744.0) < -1.0 and residual(peak, 800.0) == 0.0
    none = Figure("d", "no second at 0 IOPS", RUN, lambda c: None, lo=0.0, hi=0.0, tol=0.15)
    assert residual(none, 0.0) == 0.0 and residual(none, 1.0) > 1.0
