"""The fit report (`ssdlab fit -o DIR`): report.html (self-contained, plotly inlined) and the
same figures as PNGs: every evidence figure against the twin's (error in tolerances), the
fingerprint's fill curve, latency histograms and random-write curve with the twin's overlaid,
the parameter table (how well the evidence pins each), cross-validation and conflicts."""

from __future__ import annotations

import contextlib
import html as _html
import os
import stat
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from .. import safe_path
from ..figures.fingerprint import Print, fingerprint_html, fingerprint_png, print_of
from ..figures.model import ReportPhase
from .profile_out import PINNED_LEGEND, RANGE_HEAD, pinned_label

CSS = """
body{font-family:'DejaVu Sans',Arial,sans-serif;margin:24px auto;max-width:1200px;color:#222}
h2{border-bottom:1px solid #ccc;padding-bottom:4px;margin-top:2em} .meta{color:#555;font-size:.9em}
table{border-collapse:collapse;font-size:.85em;margin:8px 0 20px}
th,td{border-bottom:1px solid #e3e3e3;padding:3px 8px;text-align:left} td.num{text-align:right}
.fail{color:#b3261e} .pass{color:#1a7f37} .un{color:#9a6700}
"""


def e(x: Any) -> str:
    return _html.escape(str(x))


def num(v: Any, unit: str = "") -> str:
    if v is None:
        return "-"
    v = float(v)
    s = f"{v:.0f}" if abs(v) >= 100 else f"{v:.3g}"
    return s + (f" {unit}" if unit and unit not in ("ratio", "share") else "")


def _phases(stored: Sequence[dict[str, Any]]) -> list[ReportPhase]:
    out = []
    for p in stored:
        lat = dict(p.get("latency") or {})
        if p.get("histogram"):
            lat.update(p["histogram"])
        out.append(ReportPhase(p["name"], p.get("series", {}), p.get("segments", {}), lat,
                               p.get("totals", {}), p.get("kind", "io")))
    return out


def prints(measured: dict[str, dict[str, Any]], twin_phases: list[ReportPhase] | None) -> list[Print]:
    out = []
    for label, m in measured.items():
        p = print_of(f"evidence ({label})", _phases(m["phases"]))
        if p is not None:
            out.append(p)
    if twin_phases:
        t = print_of("twin", twin_phases, dashed=True)
        if t is not None:
            out.append(t)
    return out


def errors_png(doc: dict[str, Any], out: Path, key: str = "figures", stem: str = "fit-figures",
               title: str = "Evidence figures: the twin's error in tolerances") -> Path | None:
    from ..figures import png as P
    from ..figures.png import WIDTH, plt

    rows = doc[key]
    if not rows:
        return None
    groups = sorted({r["group"] for r in rows})
    fig, ax = plt.subplots(figsize=(WIDTH, 1.2 + 0.5 * len(groups)), layout="constrained")
    for i, g in enumerate(groups):
        mine = [r for r in rows if r["group"] == g]
        err, ok = in_tolerances(doc, mine, key)
        y = i + np.linspace(-0.25, 0.25, len(mine)) if len(mine) > 1 else np.array([float(i)])
        ax.scatter(np.clip(err, -5, 5), y, s=10, c=["#1a7f37" if o else "#b3261e" for o in ok], zorder=3)
    ax.axvspan(-1, 1, color="#e8f3ea", zorder=0)
    ax.set_yticks(range(len(groups)), groups)
    ax.set_xlim(-5.3, 5.3)
    ax.set_xlabel("error in tolerances (band: " + ("passes" if key == "figures" else "within its tolerance")
                  + "; clipped at 5)")
    ax.set_title(title, wrap=True)
    return P._save(fig, out, stem)


def in_tolerances(doc: dict[str, Any], rows: list[dict[str, Any]], key: str) -> tuple[list[float], list[bool]]:
    """Each row's error in its figure's tolerance (a held-back figure's is the evidence's) and
    whether it passed: inside the band (+-1) exactly when it passed (a range's ends are strict,
    as in the loss: a miss by a little is 1 and that little)."""
    tol = {r["figure"]: r.get("tolerance", 0.15) for r in doc["figures"]}
    ok = [bool(r["pass" if key == "figures" else "passed"]) for r in rows]
    err = []
    for r, o in zip(rows, ok):
        x = np.nan if r["error"] is None else r["error"] / (tol.get(r["figure"], 0.15) or 1e-6)
        err.append(x if o or not abs(x) <= 1 else float(np.copysign(1 + abs(x), x)))
    return err, ok


def _table(headers: list[str], rows: list[list[str]], tid: str) -> str:
    head = "".join(f"<th>{e(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(c if c.startswith("<td") else f"<td>{e(c)}</td>" for c in r) + "</tr>"
                   for r in rows)
    return f'<table id="{tid}"><tr>{head}</tr>{body}</table>'


def _ok(p: bool) -> str:
    return '<td class="pass">pass</td>' if p else '<td class="fail">FAIL</td>'


def scaled_note(doc: dict[str, Any]) -> str:
    """Where the trials ran: the drive's size, or a smaller drive for the scale-free tests."""
    if not doc["scaled_trials"]:
        return ""
    tests = doc.get("scaled_tests") or []
    which = f"runs of {', '.join(tests)} " if tests else ""
    return f" ({which}on a smaller drive with the same dies, the best again at full size)"


PNGS = ("fit-figures.png", "fit-crossval.png", "fit-fingerprint.png")  # what a fit may write into -o


def write(doc: dict[str, Any], out_dir: Path, ps: list[Print], title: str) -> Path:
    """report.html and the PNGs into `out_dir` (made if missing): drawn in a private
    directory there and moved in by name, as every report is (safe_path.staged), so a link
    another user put in `out_dir` is replaced, never written through. A PNG of an earlier
    fit into the same directory that this one does not draw (fit-crossval.png after
    --no-crossval) is removed, so the directory holds this fit's outputs only."""
    with safe_path.staged(out_dir, f"the report directory {out_dir}") as stage:
        _write(doc, stage, ps, title)
        drawn = {p.name for p in stage.iterdir()}
    real = safe_path.real(out_dir)
    d = safe_path.dir_fd(real)
    try:
        for name in PNGS:
            if name in drawn:
                continue
            with contextlib.suppress(FileNotFoundError):
                st = os.stat(name, dir_fd=d, follow_symlinks=False)
                if stat.S_ISREG(st.st_mode) or stat.S_ISLNK(st.st_mode):
                    os.unlink(name, dir_fd=d)  # the name itself: a link is removed, not followed
    finally:
        os.close(d)
    return Path(real) / "report.html"


def _write(doc: dict[str, Any], out: Path, ps: list[Print], title: str) -> Path:
    from plotly.offline import get_plotlyjs

    pngs = [errors_png(doc, out)]
    if doc.get("crossval"):
        pngs.append(errors_png(doc, out, "crossval", "fit-crossval",
                               "Cross-validation: each held-back figure predicted by a fit\nwithout its group"))
    parts = [f"<h1>{e(title)}</h1>",
             f'<p class="meta">Class {e(doc["class"])}; {doc["trials"]} trials'
             f'{scaled_note(doc)}'
             f', {doc["seconds"]:.0f} s; evidence: {e("; ".join(doc.get("evidence", [])))}. '
             f'{doc["passed"]} of {doc["total"]} figures pass within their tolerance.</p>']
    if ps:
        pngs.append(fingerprint_png(ps, out, "fit-fingerprint", "Evidence (solid) and twin (dashed)"))
        parts.append(fingerprint_html(ps, "fit-fingerprint", "Fingerprint: evidence (solid) and twin (dashed)"))
    parts.append(f"<h2>Parameters</h2><p class=meta>{e(PINNED_LEGEND)}</p>")
    parts.append(_table(["parameter", "twin", "class", "pinned", RANGE_HEAD, "note", "meaning"], [
        [p["key"], num(p["value"], p["unit"]), num(p["class_value"], p["unit"]),
         f'<td class="{"pass" if p["pinned"] else "un"}">{e(pinned_label(p))}</td>',
         f"{num(p['lo'])}..{num(p['hi'], p['unit'])}", p["note"], p["meaning"]] for p in doc["parameters"]],
        "fit-parameters"))
    parts.append("<h2>Figures</h2>")
    parts.append(_table(["group", "figure", "evidence", "twin", "error", "tolerance", ""], [
        [r["group"], r["figure"] + ("" if r.get("fitted", True) else " (not fitted)"), f"{r['measured']} {r['unit']}", num(r["twin"], r["unit"]),
         "-" if r["error"] is None else f"{100 * r['error']:+.1f} %", f"{100 * r['tolerance']:.0f} %",
         _ok(r["pass"])] for r in doc["figures"]], "fit-figures"))
    if doc.get("crossval"):
        parts.append("<h2>Cross-validation</h2><p class=meta>Each group held back in turn: a fit to the others "
                     "predicts it.</p>")
        parts.append(_table(["held back", "figure", "evidence", "predicted", "error", ""], [
            [h["group"], h["figure"], h["measured"], num(h["predicted"]),
             "-" if h["error"] is None else f"{100 * h['error']:+.1f} %", _ok(h["passed"])]
            for h in doc["crossval"]], "fit-crossval"))
    if doc.get("conflicts"):
        parts.append("<h2>Conflicts</h2><p class=meta>Figures no trial passed together with the others: a "
                     "mechanism the simulator lacks, a bound, or a figure to check.</p><ul>"
                     + "".join(f"<li>{e(c)}</li>" for c in doc["conflicts"]) + "</ul>")
    missing = [r for r in doc["figures"] if r.get("expected_failure")]
    if missing:
        parts.append("<h2>Not fitted: expected failures</h2><p class=meta>The figures file says the simulator "
                     "lacks their mechanism: measured on the twin, not fitted to.</p><ul>"
                     + "".join(f"<li>{e(r['figure'])}: {e(r['expected_failure'])}</li>" for r in missing) + "</ul>")
    if doc.get("left_out"):
        parts.append("<h2>Left out</h2><ul>" + "".join(f"<li>{e(x)}</li>" for x in doc["left_out"]) + "</ul>")
    parts.append('<p class="meta">PNG: ' + ", ".join(e(p.name) for p in pngs if p) + "</p>")
    page = (f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{e(title)}</title><style>{CSS}</style>"
            f"<script>{get_plotlyjs()}</script></head><body>{''.join(parts)}</body></html>")
    path = out / "report.html"
    path.write_text(page, encoding="utf-8")
    return path
