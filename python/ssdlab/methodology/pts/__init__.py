"""The tests of the SNIA Solid State Storage Performance Test Specification (PTS 2.0.2),
one module each, in the specification's priority: `ssdlab run pts-TEST`, and all of
them with `ssdlab pts`."""

from __future__ import annotations

from ..test import Test
from . import dirth, hir, iops, latency, throughput, wsat, xsr
from .common import PtsOptions

PTS_TESTS: dict[str, Test] = {t.name: t for t in (
    iops.TEST, throughput.TEST, latency.TEST, wsat.TEST, hir.TEST, xsr.TEST, dirth.TEST)}

__all__ = ["PTS_TESTS", "PtsOptions"]
