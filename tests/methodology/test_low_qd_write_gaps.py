"""low-qd-write on a real drive whose fio log missed a second: that second is missing (NaN),
not 0, and the minute it falls in is still the mean of the seconds measured."""

import numpy as np
import pytest

from ssdlab.methodology import Options
from ssdlab.methodology import low_qd_write as lq
from ssdlab.phase import PhaseResult


def test_a_missing_second_leaves_the_minute_measured():
    phase = lq.phases(8 * 10**9, Options())[-1]
    mb = np.r_[np.nan, np.full(59, 100.0), np.full(59, 50.0), np.nan]
    iops = mb * 1e6 / 4096
    res = PhaseResult(phase, {"t_s": np.arange(1.0, 121.0), "write_mbps": mb, "iops": iops}, {},
                      {"max_us": 900.0, "p99_us": 90.0}, {"mbps": 75.0, "duration_s": 120.0})
    m = lq.analyze([res], Options())
    assert m["first_minute_mbps"] == pytest.approx(100.0)
    assert m["last_minute_mbps"] == pytest.approx(50.0)
    assert m["zero_seconds"] == 0
