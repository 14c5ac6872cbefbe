"""A real phase's progress line says when the host kept fio waiting for a CPU, from the
share the report's panel uses."""

from __future__ import annotations

import math

from ssdlab.cli.output import held_back
from ssdlab.figures.data import CPU_WAIT_SHOWN_PCT


def test_a_phase_fio_waited_in_says_so():
    assert held_back({"cpu_wait_max_pct": 31.4}) == "; fio waited for a CPU up to 31 % of a second (the host held it back)"
    assert held_back({"cpu_wait_max_pct": CPU_WAIT_SHOWN_PCT}) != ""


def test_a_calm_unsampled_or_simulated_phase_adds_nothing():
    assert held_back({"cpu_wait_max_pct": CPU_WAIT_SHOWN_PCT - 0.1}) == ""
    assert held_back({"cpu_wait_max_pct": math.nan}) == ""  # under a second long
    assert held_back({"write_bytes": 1.0}) == ""  # a simulated drive's totals
