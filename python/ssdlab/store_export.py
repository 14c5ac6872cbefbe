"""A stored run written out whole: as one JSON document, or as CSV in long ("tidy") form,
one value per line, every cell safe to open in a spreadsheet (`results export`)."""

from __future__ import annotations

import csv
import io
import json
import math
from typing import Any

from .store import Store, jsonable


def csv_text(value: Any) -> Any:
    """A CSV cell a spreadsheet shows as it is: text starting with = + - @ (or a tab or a
    carriage return) would be read as a formula (a drive named `=HYPERLINK(...)`), so it
    gets a leading '; numbers (-1.5) and everything else are left as they are."""
    if not isinstance(value, str) or value[:1] not in ("=", "+", "-", "@", "\t", "\r"):
        return value
    try:
        float(value)
        return value
    except ValueError:
        return "'" + value


def fmt(x: Any) -> str:
    if x is None or isinstance(x, float) and not math.isfinite(x):
        return ""
    if isinstance(x, (list, dict)):
        return json.dumps(jsonable(x))
    return repr(x) if isinstance(x, float) else str(x)


class _SafeCsv:
    """A csv writer whose every cell goes through csv_text."""

    def __init__(self, w: Any):
        self.w = w

    def writerow(self, row: list[Any]) -> None:
        self.w.writerow([csv_text(c) for c in row])


def _numbers(part: Any) -> list[tuple[str, Any]]:
    """A latency record's numbers (ios, mean_us, p99_us, ...), not its lists or labels."""
    if not isinstance(part, dict):
        return []
    return [(k, v) for k, v in part.items()
            if v is None or isinstance(v, (int, float)) and not isinstance(v, bool)]


def to_json(store: Store, run_id: int) -> str:
    run = store.run(run_id)
    for d in run["drives"]:
        d["phases"] = store.phases(d["id"])
    return json.dumps(jsonable(run), indent=1, allow_nan=False)


def to_csv(store: Store, run_id: int) -> str:
    """Long ("tidy") format, one value per line: every series point, segment point,
    histogram bucket, phase total, latency percentile and metric of the run."""
    run = store.run(run_id)
    buf = io.StringIO()
    w = _SafeCsv(csv.writer(buf, lineterminator="\n"))
    w.writerow(["run_id", "drive", "phase_seq", "phase", "table", "column", "row", "value"])
    for d in run["drives"]:
        for name, v in d["metrics"].items():
            if isinstance(v, dict):
                for k, x in v.items():
                    w.writerow([run_id, d["spec"], "", "", "metric", name, k, fmt(x)])
            else:
                w.writerow([run_id, d["spec"], "", "", "metric", name, "", fmt(v)])
        for p in store.phases(d["id"]):
            key = [run_id, d["spec"], p["seq"], p["name"]]
            for name, v in p["totals"].items():
                w.writerow(key + ["totals", name, "", fmt(v)])
            lat = p["latency"] or {}
            for table, part in (("latency", lat), ("latency_read", lat.get("read")),
                                ("latency_write", lat.get("write"))):
                for name, v in _numbers(part):  # the percentiles (their histograms below)
                    w.writerow(key + [table, name, "", fmt(v)])
            for table in ("series", "segments"):
                for name, arr in p[table].items():
                    for i, x in enumerate(arr.tolist()):
                        w.writerow(key + [table, name, i, fmt(x)])
            if p["histogram"] is not None:
                for e, c in zip(p["histogram"]["edges_us"].tolist(), p["histogram"]["counts"].tolist()):
                    w.writerow(key + ["histogram", "count", fmt(e), fmt(c)])
            for rw in ("read", "write"):  # trace replays: per-direction histograms
                h = (p["latency"] or {}).get(rw)
                if isinstance(h, dict) and h.get("edges_us") is not None:
                    for e, c in zip(h["edges_us"], h.get("counts") or []):
                        w.writerow(key + [f"histogram_{rw}", "count", fmt(e), fmt(c)])
    return buf.getvalue()
