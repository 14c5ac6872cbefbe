"""The ramp's end on an engine that queues, against real fio on a loop device: fio resets its
figures when the ramp ends, so the I/Os then in flight (issued in the ramp, completing after
it) add their bytes and latencies to `io_bytes` and `clat_ns` but not to `total_ios` (their
count was reset). `ssdlab run fio` counts them as fio does: past `total_ios`, about a queue's
worth of I/Os more in `io_bytes` and `clat_ns.N` (fio 3.33, libaio at iodepth 16 on a loop
device: 16 and 15; which of those few a real reap takes before the reset is its timing)."""

from __future__ import annotations


import pytest

import simfio
from loopdevs import MIB, REASON, loops  # noqa: F401  (loops: a fixture)

pytestmark = pytest.mark.realdev
if REASON:
    pytestmark = [pytest.mark.realdev, pytest.mark.skip(reason=REASON)]



def _past_count(j: dict, bs: int) -> tuple[int, int]:
    """I/Os in io_bytes and in clat_ns past total_ios."""
    r = j["read"]
    return r["io_bytes"] // bs - r["total_ios"], r["clat_ns"]["N"] - r["total_ios"]


@pytest.mark.parametrize("depth", [4, 16])
def test_ios_in_flight_at_the_ramps_end_count_bytes_not_ios_as_fios(loops, tmp_path, depth):  # noqa: F811
    dev, _ = loops.make(64 * MIB)
    body = (f"[a]\nioengine=libaio\ndirect=1\nrw=randread\nbs=4k\nsize=32m\niodepth={depth}\n"
            "ramp_time=300ms\nruntime=500ms\ntime_based\n")
    fj, sj = simfio.real_job(tmp_path, dev, body), simfio.run_json(tmp_path, body)["jobs"][0]
    f_bytes, f_clat = _past_count(fj, 4096)
    s_bytes, s_clat = _past_count(sj, 4096)
    assert depth - 2 <= f_bytes <= depth and depth - 2 <= f_clat <= depth  # fio's own, its timing
    # ssdlab: the ramp ends as a completion comes in; the other depth - 1 were in flight
    assert (s_bytes, s_clat) == (depth - 1, depth - 1)
    assert abs(s_bytes - f_bytes) <= 1 and abs(s_clat - f_clat) <= 1
