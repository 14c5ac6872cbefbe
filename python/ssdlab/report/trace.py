"""The trace test's figures: per state (empty / full), every drive side by side: the data
rate (MB/s) and the latencies (average, p99, p99.9; all, reads, writes). One chart
compares the same trace on a simulated and a real drive (two runs in one report)."""

from __future__ import annotations

import numpy as np

from .data import QuickGroup, QuickSeries, ReportRun, _f

RATES = ["data_rate_mbps", "busy_data_rate_mbps"]
LATENCIES = ["lat_mean_us", "lat_p99_us", "lat_p99_9_us", "read_lat_mean_us", "read_lat_p99_us",
             "read_lat_p99_9_us", "write_lat_mean_us", "write_lat_p99_us", "write_lat_p99_9_us"]
NAMES = {"data_rate_mbps": "data rate (whole replay)", "busy_data_rate_mbps": "data rate (busy time)",
         "lat_mean_us": "average", "lat_p99_us": "p99", "lat_p99_9_us": "p99.9",
         "read_lat_mean_us": "read average", "read_lat_p99_us": "read p99",
         "read_lat_p99_9_us": "read p99.9", "write_lat_mean_us": "write average",
         "write_lat_p99_us": "write p99", "write_lat_p99_9_us": "write p99.9"}


def trace_bars(runs: list[ReportRun]) -> list[QuickGroup]:
    drives = [d for r in runs if r.test == "trace" for d in r.drives]
    out = []
    for state in ("empty", "full"):
        for unit, names, what in (("MB/s", RATES, "data rate"), ("µs", LATENCIES, "latency")):
            metrics = [m for m in names
                       if any(_f(d.metrics.get(f"{state}_{m}")) is not None for d in drives)]
            if not metrics:
                continue
            series = []
            for d in drives:
                v = np.array([_f(d.metrics.get(f"{state}_{m}")) for m in metrics], dtype=float)
                series.append(QuickSeries(d.label, v, v, v, [[] for _ in metrics]))
            out.append(QuickGroup(unit, f"{state}-{'rate' if unit == 'MB/s' else 'latency'}",
                                  metrics, series, test="trace",
                                  title=f"Trace replay, {state} drive: {what}",
                                  names=[NAMES[m] for m in metrics]))
    return out


def trace_phases(runs: list[ReportRun]):
    """(drive, replay phase) of every trace run."""
    return [(d, p) for r in runs if r.test == "trace" for d in r.drives for p in d.phases
            if p.kind == "replay"]
