"""The report's table of the real drives its runs tested: who each drive is (model,
serial, firmware, capacity, logical block, write cache) and what it said about itself (its
SMART / health counters at the first phase of its first run in the report and at the last
phase of its last run: temperature, host writes and reads, percentage used, media errors).
A review names the firmware it tested; the runs table names only the model. Simulated
drives have none of this and are left out (id `drives`; docs/reports.md)."""

from __future__ import annotations

import html as _html
import math
from typing import Any

from ..figures.model import ReportDrive, ReportRun

# (the counter's key in the phase totals' drive_before_<k> / drive_after_<k>, heading, scale)
COUNTERS = (("temp_c", "Temperature (°C)", 1.0), ("host_write_bytes", "Host writes (GB)", 1e-9),
            ("host_read_bytes", "Host reads (GB)", 1e-9), ("percent_used", "Percentage used", 1.0),
            ("media_errors", "Media errors", 1.0))


def _num(v: Any) -> float | None:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) else None


def _counter(drives: list[ReportDrive], key: str, when: str) -> float | None:
    """The counter `drive_<when>_<key>` at the first phase that has it (before) or the last
    (after), over the drive's runs in order."""
    phases = [p for d in drives for p in d.phases]
    if when == "after":
        phases = phases[::-1]
    for p in phases:
        v = _num(p.totals.get(f"drive_{when}_{key}"))
        if v is not None:
            return v
    return None


def _fmt(v: float | None) -> str:
    if v is None:
        return "–"
    return f"{v:,.3f}".rstrip("0").rstrip(".") if v != int(v) else f"{int(v):,}"


def drives_table(runs: list[ReportRun]) -> str:
    """One row per real drive (its path and serial), in the order the runs first name it;
    empty when every drive is simulated."""
    by_drive: dict[tuple[str, str], list[ReportDrive]] = {}
    for r in sorted(runs, key=lambda r: r.run_id):
        for d in r.drives:
            if d.kind != "sim":
                by_drive.setdefault((d.drive, str(d.identity.get("serial") or "")), []).append(d)
    if not by_drive:
        return ""
    e = _html.escape
    rows = []
    for (spec, serial), ds in by_drive.items():
        ident = ds[-1].identity
        extra = ident.get("extra") or {}
        cap = _num(ident.get("capacity"))
        cells = [spec, ident.get("model") or "", serial, ident.get("firmware") or "",
                 f"{cap / 1e9:,.3f}".rstrip("0").rstrip(".") if cap else "",
                 str(extra.get("logical_block") or ""), extra.get("write_cache") or "",
                 extra.get("telemetry") or "none"]
        for key, _, scale in COUNTERS:
            b, a = _counter(ds, key, "before"), _counter(ds, key, "after")
            cells.append("–" if b is None and a is None else
                         f"{_fmt(None if b is None else b * scale)} → {_fmt(None if a is None else a * scale)}")
        rows.append(f'<tr data-drive="{e(spec)}">' + "".join(f"<td>{e(str(c))}</td>" for c in cells) + "</tr>")
    head = "".join(f"<th>{h}</th>" for h in (
        "Drive", "Model", "Serial", "Firmware", "Capacity (GB)", "Logical block", "Write cache", "Telemetry",
        *(f"{e(title)}<br><small>first → last phase</small>" for _, title, _ in COUNTERS)))
    return (f'<table class="compare runs" id="drives"><thead><tr>{head}</tr></thead>'
            f"<tbody>{''.join(rows)}</tbody></table>")
