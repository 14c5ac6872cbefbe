"""The self-contained HTML report: plotly figures with plotly.js inlined, so the file works
offline and can be mailed around. Each test draws its own figures (methodology.Test.figures,
figures/<test>.py); the page lays them out in sections and adds the runs and comparison
tables. Element ids (stable, for people and browser tests; docs/reports.md):
  sec-<test>, fig-fill-overlay, fig-fill-<i>, fig-consistency, fig-working-set,
  fig-quick-<unit>, fig-trim, fig-idle, fig-copy, table-compare-<test>[-<spare>], runs, drives; the
  consistency switches are plotly updatemenus whose button <g> elements get ids
  fig-consistency-<drive|spare>-btn-<i> once drawn.
"""

from __future__ import annotations

import html as _html

from plotly.offline import get_plotlyjs

from .. import methodology
from ..figures import FigureOptions
from ..figures.data import fmt, fmt_row, lower_is_better, metric_title, spare_label
from ..figures.model import ReportRun
from ..methodology.test import Test
from .compare import CompareTable, compare_tables
from .drives_table import drives_table
from ..methodology import spare_matters
from ..no_result import no_result


def _better(p: float | None, lower_is_better: bool) -> str:
    if p is None or abs(p) < 0.05:
        return ""
    return "better" if (p < 0) == lower_is_better else "worse"


def compare_table(t: CompareTable) -> str:
    e = _html.escape
    if not t.rows:  # no drive has a figure: one line, not an empty table
        runs = ", ".join(str(r) for r in t.run_ids)
        said = "; ".join(f"{lab}: {t.verdicts.get(lab) or no_result(status)}"  # a complete run says why
                         for lab, status in zip(t.labels, t.statuses))
        return (f'<div class="table-wrap"><h3>{e(t.test)} <small>(run {e(runs)})</small></h3>'
                f'<p class="warn no-result" id="table-compare-{t.key}" data-test="{e(t.test)}">{e(said)}</p></div>')
    head = "<th>Metric</th>" + "".join(f"<th>{e(lab)}</th>" for lab in t.labels) + "".join(
        f"<th>{e(lab)}<br><small>vs {e(t.labels[0])}</small></th>" for lab in t.labels[1:])
    body = []
    for name, vals, pct in t.rows:
        cells = "".join(f'<td class="num">{x}</td>' for x in fmt_row(vals))  # one format per metric
        low = lower_is_better(name)  # colour says better/worse, not up/down
        cells += "".join(
            f'<td class="num {_better(p, low)}">{fmt(p, pct=True)}</td>' for p in pct[1:])
        body.append(f'<tr data-metric="{e(name)}"><th scope="row">{e(metric_title(name))}'
                    f"</th>{cells}</tr>")
    warn = "".join(f'<p class="warn">⚠ {e(w)}</p>' for w in t.warnings)
    runs = ", ".join(str(r) for r in t.run_ids)
    spare = f" — {t.spare_text}" if t.spare_text else ""
    return (f'<div class="table-wrap"><h3>{e(t.test)}{e(spare)} '
            f'<small>(run {e(runs)})</small></h3>{warn}'
            f'<table class="compare" id="table-compare-{t.key}" data-test="{e(t.test)}">'
            f"<thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table></div>")


def runs_table(runs: list[ReportRun]) -> str:
    """Where the numbers come from: comparisons are only fair between matching tags."""
    e = _html.escape
    rows = []
    for r in runs:
        t = r.tags
        drives = ", ".join(f"{d.label}" + ("" if d.status == "complete" else f" ({d.status})")
                           for d in r.drives)
        spare = spare_label(r.spare_pct) if r.spare_pct or spare_matters(r.test) else ""
        cells = [str(r.run_id), r.test, drives, spare, t.get("status", ""), t.get("testbed", ""),
                 t.get("methodology_version", ""), t.get("tool_version", ""),
                 t.get("engine_version", ""),
                 str(t.get("created", "")).replace("T", " ").replace("+00:00", " UTC")]
        rows.append(f'<tr data-run="{r.run_id}">' + "".join(
            f"<td>{e(str(c or ''))}</td>" for c in cells) + "</tr>")
    head = "".join(f"<th>{h}</th>" for h in (
        "Run", "Test", "Drives", "Spare area", "Status", "Testbed", "Methodology", "ssdlab",
        "Engine", "Started"))
    return (f'<table class="compare runs" id="runs"><thead><tr>{head}</tr></thead>'
            f"<tbody>{''.join(rows)}</tbody></table>")


CSS = """
body{font-family:'DejaVu Sans',Arial,sans-serif;margin:24px auto;max-width:1200px;color:#222}
h1{font-size:1.6em;margin-bottom:0}
h2{border-bottom:1px solid #ccc;padding-bottom:4px;margin-top:2em}
.meta{color:#555;font-size:.9em} .figure{margin:12px 0 28px}
table.compare{border-collapse:collapse;font-size:.9em;margin:8px 0 20px}
table.compare th,table.compare td{border-bottom:1px solid #e3e3e3;padding:4px 10px;text-align:left}
table.compare td.num{text-align:right;font-variant-numeric:tabular-nums}
table.runs{font-size:.8em;color:#444} td.better{color:#1a7f37} td.worse{color:#b3261e} .warn{color:#9a6700}
"""


def render(runs: list[ReportRun], y_max: float | None = None, title: str | None = None) -> str:
    """The page: where the numbers come from, each test's section (in the methodology's
    order, with the figures the test draws), then the comparison tables."""
    e = _html.escape
    opts = FigureOptions(y_max=y_max)
    parts: list[str] = []
    for test, mine in by_test(runs):
        body = "".join(f.html() for f in test.figures(mine, opts))
        if body:
            parts.append(f'<section id="sec-{test.name}"><h2>{e(test.title)}</h2>{body}</section>')
    tables = compare_tables(runs)
    if tables:
        parts.append('<section id="sec-compare"><h2>Comparison</h2>'
                     + "".join(compare_table(t) for t in tables) + "</section>")
    title = title or "ssdlab report"
    return (
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
        f"<title>{e(title)}</title><style>{CSS}</style>"
        f"<script>window.PlotlyConfig = {{MathJaxConfig: 'local'}};</script>"
        f"<script>{get_plotlyjs()}</script></head><body>"
        f"<h1>{e(title)}</h1>{runs_table(runs)}{drives_table(runs)}"
        + "".join(parts) + "</body></html>")


def by_test(runs: list[ReportRun]) -> list[tuple[Test, list[ReportRun]]]:
    """Each registered test with its runs, in the methodology's order; runs of a test this
    version does not know (a newer store) have no figures, only their comparison table."""
    return [(t, mine) for t in methodology.ALL.values()
            if (mine := [r for r in runs if r.test == t.name])]
