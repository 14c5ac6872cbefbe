"""The working-set test reports, per working-set size, the IOPS and the mean and 99th
percentile latency of its reads, as methodology.md has it."""

import pytest
from fakes import FakeTarget

from ssdlab.methodology import Options
from ssdlab.phase import GB
from ssdlab.runner import run_test


def test_mean_and_p99_latency_per_size(store):
    opts = Options(seconds=2)
    run_id, (out,) = run_test(store, "working-set", [("fake", FakeTarget(capacity=8 * GB))], opts,
                              {"spare": 0.0})
    m = out.metrics
    phases = {p["name"]: p for p in store.phases(store.run(run_id)["drives"][0]["id"])}
    sizes = [n[3:] for n in phases if n.startswith("ws_")]
    assert sizes and list(m["lat_mean_us_by_gb"]) == sizes == list(m["lat_p99_us_by_gb"])
    for size in sizes:
        lat = phases[f"ws_{size}"]["latency"]
        assert m["lat_mean_us_by_gb"][size] == pytest.approx(lat["mean_us"])
        assert m["lat_p99_us_by_gb"][size] == pytest.approx(lat["p99_us"])
