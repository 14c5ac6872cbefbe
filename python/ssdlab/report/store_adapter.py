"""ssdlab.store.Store -> ReportRun. The only module of report/ that knows the store's API
(Store.run(id) -> {id, test, args, testbed, methodology_version, drives: [{id, spec,
identity, status, metrics}]}, Store.phases(run_drive_id) -> [{name, kind, totals, latency,
series, segments, histogram}])."""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np

from ..figures.model import ReportDrive, ReportPhase, ReportRun, _arrays
from ..runner import partial_metrics


def _spare(args: dict) -> float:
    for key in ("spare", "spare_pct"):
        v = (args or {}).get(key)
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            return float(v)
    return 0.0


def _overrides(args: dict) -> list[str]:
    v = (args or {}).get("set") or []
    return [str(x) for x in v] if isinstance(v, list) else [str(v)]


def _phase(p: dict) -> ReportPhase:
    lat = dict(p.get("latency") or {})
    hist = p.get("histogram")
    if hist:
        lat.update(edges_us=np.asarray(hist["edges_us"]), counts=np.asarray(hist["counts"]))
    return ReportPhase(name=p.get("name", ""), kind=p.get("kind", "io"),
                       series=_arrays(p.get("series")), segments=_arrays(p.get("segments")),
                       latency=lat, totals=dict(p.get("totals") or {}))


def _drive(store: Any, d: dict, overrides: list[str]) -> ReportDrive:
    ident = d.get("identity") or {}
    label = str(ident.get("model") or d.get("spec"))
    if overrides:  # "what if it had 8 channels" is not the stock drive: say so in legends
        label += " [" + ", ".join(overrides) + "]"
    metrics = dict(d.get("metrics") or {})
    # quick tests store every repeat under one JSON metric; the spread figures want them apart
    repeats = metrics.pop("repeats", None)
    repeats = {k: [float(x) for x in v if x is not None] for k, v in repeats.items()
               if isinstance(v, list)} if isinstance(repeats, dict) else {}
    return ReportDrive(drive=d.get("spec", "?"), label=label,
                       metrics=metrics, phases=[_phase(p) for p in store.phases(d["id"])],
                       repeats=repeats, status=d.get("status", "complete"),
                       kind=str(ident.get("kind", "sim")), identity=dict(ident))


def _disambiguate(runs: list[ReportRun]) -> None:
    """Legends need distinct names: two specs with one model name get the spec added; the
    same drive twice in one comparison (e.g. --set overrides) gets the run id added."""
    by_label: dict[str, set[str]] = {}
    for r in runs:
        for d in r.drives:
            by_label.setdefault(d.label, set()).add(d.drive)
    for r in runs:
        for d in r.drives:
            if len(by_label[d.label]) > 1:
                d.label = f"{d.label} [{d.drive}]"
    groups: dict[tuple[str, float], list[ReportDrive]] = {}
    for r in runs:
        groups.setdefault((r.test, r.spare_pct), []).extend(r.drives)
    run_of = {id(d): r.run_id for r in runs for d in r.drives}
    for drives in groups.values():
        seen = Counter(d.label for d in drives)
        for d in drives:
            if seen[d.label] > 1:
                d.label = f"{d.label} (run {run_of[id(d)]})"
        seen = Counter(d.label for d in drives)
        count: Counter = Counter()
        for d in drives:  # the same drive twice in one run
            if seen[d.label] > 1:
                count[d.label] += 1
                d.label = f"{d.label} #{count[d.label]}"


def from_store(store: Any, run_ids: list[int]) -> list[ReportRun]:
    runs = []
    for rid in run_ids:
        r = store.run(int(rid))
        partial_metrics(store, r)  # a quick run cut short: the figures of the tests it completed
        args = r.get("args") or {}
        tags = {"testbed": r.get("testbed") or "", "status": r.get("status", ""),
                "methodology_version": r.get("methodology_version", ""),
                "tool_version": r.get("tool_version", ""),
                "engine_version": r.get("engine_version", ""), "created": r.get("created", ""),
                "args": args}
        runs.append(ReportRun(run_id=int(r["id"]), test=r["test"],
                              drives=[_drive(store, d, _overrides(args))
                                      for d in r.get("drives", [])],
                              tags=tags, spare_pct=_spare(args)))
    _disambiguate(runs)
    return runs
