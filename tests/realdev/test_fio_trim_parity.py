"""Trims and syncs against real fio on a loop device (which discards and flushes): `ssdlab run fio` on a
simulated drive issues the same trims, writes and bytes per direction for rw=trim,
randtrim, trimwrite and randtrimwrite, reports fio's JSON keys (and ssdlab's own few),
records a submission latency for a trim only where fio does, and runs trims at fio's depths:
fio 3.33's libaio, io_uring and posixaio trim in the issuing call (a trim-only job at depth
1), libaio and io_uring alongside the writes in flight, posixaio once they are in; fsync=N
syncs as many as fio (libaio and psync in the call; io_uring queues them, again until one
completes), counted in the depths as fio counts them."""

from __future__ import annotations


import pytest

import simfio
from loopdevs import MIB, REASON, loops  # noqa: F401  (loops: a fixture)

pytestmark = pytest.mark.realdev
if REASON:
    pytestmark = [pytest.mark.realdev, pytest.mark.skip(reason=REASON)]

OWN = {"jobs", "read.unwritten_ios"}  # ssdlab's additions to fio's job object


def _keys(x: dict, prefix: str = "") -> set[str]:
    out = set()
    for k, v in x.items():
        out.add(prefix + k)
        if isinstance(v, dict) and k in ("read", "write", "trim", "slat_ns", "clat_ns", "lat_ns"):
            out |= _keys(v, prefix + k + ".")
    return out


def _ssdlab(tmp_path, body: str) -> dict:
    return simfio.run_json(tmp_path, body)["jobs"][0]



def _depth_1(j: dict) -> float:
    return j["iodepth_level"]["1"]


@pytest.mark.parametrize("engine", ["psync", "libaio", "io_uring", "posixaio"])
@pytest.mark.parametrize("rw,bs", [("trim", "64k"), ("randtrim", "4k"), ("trimwrite", "16k"),
                                   ("randtrimwrite", "16k")])
def test_trims_as_fio_issues_them_on_a_loop_device(loops, tmp_path, engine, rw, bs):  # noqa: F811
    dev, _ = loops.make(64 * MIB)
    body = f"[a]\nioengine={engine}\nrw={rw}\nbs={bs}\nsize=16m\niodepth=8\n"
    fj, sj = simfio.real_job(tmp_path, dev, body), _ssdlab(tmp_path, body)
    for d in ("read", "write", "trim"):
        assert (sj[d]["total_ios"], sj[d]["io_bytes"]) == (fj[d]["total_ios"], fj[d]["io_bytes"]), d
        for lat in ("slat_ns", "clat_ns", "lat_ns"):
            assert sj[d][lat]["N"] == fj[d][lat]["N"], (d, lat)
    assert fj["trim"]["io_bytes"] == 16 * MIB and fj["trim"]["slat_ns"]["N"] == 0
    assert _keys(sj) - OWN == _keys(fj)
    # the depths: one trim at a time; how many writes in flight a trim joins is the drive's
    # (a loop device's trims are slow: fio 99.3 % at 8), so only that it joins some
    if engine in ("libaio", "io_uring") and "write" in rw:
        assert _depth_1(fj) < 1 and _depth_1(sj) < 1
    else:
        assert sj["iodepth_level"] == pytest.approx(fj["iodepth_level"], abs=1e-4)  # fio prints 6 decimals
        assert _depth_1(fj) == 100


@pytest.mark.parametrize("engine", ["psync", "libaio", "io_uring"])
def test_syncs_as_fio_issues_them_on_a_loop_device(loops, tmp_path, engine):  # noqa: F811
    dev, _ = loops.make(64 * MIB)
    body = f"[a]\nioengine={engine}\nrw=randwrite\nbs=4k\nsize=16m\niodepth=8\nfsync=4\n"
    fj, sj = simfio.real_job(tmp_path, dev, body), _ssdlab(tmp_path, body)
    assert sj["write"]["total_ios"] == fj["write"]["total_ios"] == 4096
    if engine == "io_uring":  # queued: how many follow one before it completes is the drive's
        assert min(fj["sync"]["total_ios"], sj["sync"]["total_ios"]) > 1023
    else:  # one before the I/O after every 4th write (fio may skip one if no I/O completed since)
        assert sj["sync"]["total_ios"] == 1023 and fj["sync"]["total_ios"] >= 1000
    for j in (fj, sj):
        assert j["sync"]["lat_ns"]["N"] == j["sync"]["total_ios"]
        assert sum(j["iodepth_level"].values()) > 120  # fio counts its syncs in its depths
    if engine == "psync":
        assert sj["iodepth_level"] == pytest.approx(fj["iodepth_level"], abs=1e-4)  # fio prints 6 decimals
