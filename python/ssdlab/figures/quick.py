"""The quick test's figures: CrystalDiskMark- and AS-SSD-style bars, one group per unit,
every drive side by side, with each repeat shown."""

from __future__ import annotations

import html as _html
from typing import Sequence

import numpy as np

from . import Drawn, FigureOptions
from .bars import drawn
from .data import QuickGroup, QuickSeries, _is_spread, _scalar_or_list
from .model import ReportRun


def figures(runs: Sequence[ReportRun], opts: FigureOptions) -> list[Drawn]:
    groups = quick_groups(list(runs))
    if not groups:
        return []
    note = f'<p class="meta" id="note-quick">{_html.escape(NOTE)}.</p>'
    return [drawn(g, note if i == 0 else "") for i, g in enumerate(groups)]


QUICK_UNITS = [("_mbps", "MB/s", "mbps"), ("_iops", "IOPS", "iops"), ("_us", "µs", "us"),
               ("_ms", "ms", "ms"), ("score", "points", "score")]


def _quick_unit(name: str):
    for suffix, unit, key in QUICK_UNITS:
        if name.endswith(suffix) or (key == "score" and "score" in name):
            return unit, key
    return None


def quick_groups(runs: list[ReportRun]) -> list[QuickGroup]:
    drives = [d for r in runs for d in r.drives]
    if not drives:
        return []
    names: list[str] = []
    for d in drives:
        for k, v in {**d.metrics, **d.repeats}.items():
            if (k not in names and _quick_unit(k) and _scalar_or_list(v)
                    and not _is_spread(k, {**d.metrics, **d.repeats})):
                names.append(k)
    groups = []
    for suffix, unit, key in QUICK_UNITS:
        metrics = [n for n in names if _quick_unit(n) == (unit, key)]
        if not metrics:
            continue
        series = []
        for d in drives:
            value, lo, hi, pts = [], [], [], []
            for m in metrics:
                vals = [float(x) for x in (d.repeats.get(m) or [])]
                mv = d.metrics.get(m)
                if not vals and isinstance(mv, (list, tuple)):
                    vals = [float(x) for x in mv]
                if not vals and isinstance(mv, (int, float)):
                    vals = [float(mv)]
                # the figure the test reports is the bar; runs without one: their mean
                value.append(float(mv) if isinstance(mv, (int, float)) else (
                    float(np.mean(vals)) if vals else np.nan))
                lo.append(min(vals) if vals else np.nan)
                hi.append(max(vals) if vals else np.nan)
                pts.append(vals)
            series.append(QuickSeries(d.shown, np.array(value), np.array(lo), np.array(hi), pts, d.color))
        groups.append(QuickGroup(unit, key, metrics, series, test="quick", note=NOTE))
    return groups


NOTE = ("bar: the tool's figure (CrystalDiskMark: its best run; AS SSD: the mean of its "
        "runs); whiskers: slowest to fastest run; dots: each run")

