"""The CSV export holds each phase's latency percentiles, as the JSON export does (and the
per-direction ones of a trace replay): "every recorded value" of a run, one per line."""

from __future__ import annotations

import csv
import io
import json

import numpy as np

from ssdlab import store_export
from ssdlab.phase import Identity, PhaseResult, seq_write


def test_the_csv_has_every_latency_figure_the_json_has(store):
    run = store.create_run("trace", {})
    rd = store.add_drive(run, 0, "sim:x", Identity("sim", "X", 10**9))
    direction = {"ios": 3, "mean_us": 20.0, "p99_9_us": 90.5, "edges_us": [8.0, 16.0], "counts": [1.0, 2.0]}
    store.add_phase(rd, 0, PhaseResult(
        phase=seq_write("replay", offset=0, length=2**30, stop_bytes=2**30),
        series={"t_s": np.array([1.0])}, segments={},
        latency={"ios": 5, "mean_us": 10.0, "p99_us": 50.0, "hist_edges": "upper", "read": direction,
                 "write": {**direction, "mean_us": 30.0}, "edges_us": np.array([8.0]), "counts": np.array([5.0])},
        totals={"duration_s": 1.0}))
    lat = json.loads(store_export.to_json(store, run))["drives"][0]["phases"][0]["latency"]
    rows = list(csv.DictReader(io.StringIO(store_export.to_csv(store, run))))
    got = {(r["table"], r["column"]): float(r["value"]) for r in rows if r["table"].startswith("latency")}
    assert got == {("latency", "ios"): lat["ios"], ("latency", "mean_us"): lat["mean_us"],
                   ("latency", "p99_us"): lat["p99_us"],
                   **{(f"latency_{d}", k): lat[d][k] for d in ("read", "write") for k in ("ios", "mean_us", "p99_9_us")}}
    assert got[("latency_write", "mean_us")] == 30.0
