"""The tests of the SNIA Solid State Storage Performance Test Specification (PTS 2.0.2),
one module each, in the specification's priority: `ssdlab run pts-TEST`, and all of
them with `ssdlab pts`. Each test's `cost` is its simulated I/O in the client suite on
sim:tlc-256 (millions / 40: HIR 1682, DIRTH 1396, IOPS 506, WSAT 250, Latency 75, XSR 63,
Throughput 5), so that parallel workers take the longest first."""

from __future__ import annotations

from ..test import Test
from . import dirth, hir, iops, latency, throughput, wsat, xsr
from .common import PtsOptions

PTS_TESTS: dict[str, Test] = {t.name: t for t in (
    iops.TEST, throughput.TEST, latency.TEST, wsat.TEST, hir.TEST, xsr.TEST, dirth.TEST)}

__all__ = ["PTS_TESTS", "PtsOptions"]
