"""The PTS report page of each test, as Figure objects (methodology/test.py): the test
conditions, the steady-state convergence and measurement-window plots, and each test's
own tables and plots. `runs` are report.model.ReportRun of one test (duck-typed: drives
with label, drive, status, metrics and phases named as the phase generators name them)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np

from ...figures.pts_plots import Line, Matrix3D, Plot, Table
from ...phase import KIB
from . import common as C
from .grids import BLOCKS, MIXES, QDS, THREADS
from .grids import iops_label as label


def _drives(runs: Sequence[Any]) -> Iterable[tuple[str, Any, Any]]:
    for r in runs:
        for i, d in enumerate(r.drives):
            yield f"{r.test}-{r.run_id}-{i}", r, d


def conditions_table(key: str, test: str, d: Any) -> Table:
    m = d.metrics or {}
    rows: list[list] = [["drive", d.label], ["device", d.drive], ["status", d.status]]
    for k in ("steady_reached", "steady_round", "rounds", "tracking"):
        if k in m:
            rows.append([k.replace("_", " "), m[k]])
    for k, v in (m.get("conditions") or {}).items():
        rows.append([k.replace("_", " "), v])
    return Table(f"table-{key}-conditions", f"{test}: test conditions\n{d.label}",
                 ["item", "value"], rows)


def steady_figures(key: str, test: str, d: Any, lines_by_round: dict[str, dict[int, float]] | None = None
                   ) -> list:
    """Convergence (tracking variable, or several lines, per round) and the measurement
    window with its average, the 90/110 % band and the least-squares line."""
    m = d.metrics or {}
    track = {int(k): float(v) for k, v in (m.get("tracking_by_round") or {}).items()
             if v is not None}
    if not track:
        return []
    name = str(m.get("tracking", "tracking variable"))
    lines = ([Line(lbl, sorted(v), [v[n] for n in sorted(v)]) for lbl, v in lines_by_round.items()]
             if lines_by_round else [Line(name, sorted(track), [track[n] for n in sorted(track)])])
    out: list = [Plot(f"fig-{key}-convergence", f"{test}: steady-state convergence\n{d.label}",
                      "round", name if not lines_by_round else "value", lines)]
    a, b = m.get("window_first_round"), m.get("window_last_round")
    if a is not None and b is not None:
        rs = [n for n in sorted(track) if int(a) <= n <= int(b)]
        avg = float(m.get("window_average") or 0.0)
        fit = [float(m.get("window_intercept", 0.0)) + float(m.get("window_slope", 0.0)) * n for n in rs]
        steady = "steady state reached" if m.get("steady_reached") else "steady state NOT reached"
        out.append(Plot(f"fig-{key}-window",
                        f"{test}: measurement window rounds {int(a)}-{int(b)} ({steady})\n{d.label}",
                        "round", name, [
                            Line(name, rs, [track[n] for n in rs]),
                            Line("average", rs, [avg] * len(rs), "lines", "dash"),
                            Line("110 % of average", rs, [1.1 * avg] * len(rs), "lines", "dot"),
                            Line("90 % of average", rs, [0.9 * avg] * len(rs), "lines", "dot"),
                            Line("least-squares fit", rs, fit, "lines"),
                        ], caption=(f"data excursion {m.get('window_data_excursion', 0):.4g} "
                                    f"(limit 20 % of the average: {0.2 * avg:.4g}); slope excursion "
                                    f"{m.get('window_slope_excursion', 0):.4g} (limit 10 %: {0.1 * avg:.4g})")))
    return out


def _per_drive(build: Callable[[str, str, Any], list]) -> Callable[[Sequence[Any], Any], list]:
    def figures(runs: Sequence[Any], opts: Any = None) -> list:
        out: list = []
        for key, r, d in _drives(runs):
            out.append(conditions_table(key, r.test, d))
            out.extend(build(key, r.test, d))
        return out
    return figures


# -- IOPS ------------------------------------------------------------------------------
def _iops(key: str, test: str, d: Any) -> list:
    rounds = C.by_round(d.phases)
    conv = {f"{C.bs_label(b)} 0/100": {n: C.iops(r[label(0, b)]) for n, r in rounds.items()
                                       if label(0, b) in r} for b in BLOCKS}
    out = steady_figures(key, test, d, conv)
    mat = (d.metrics or {}).get("iops_matrix") or {}
    if mat:
        cols = [C.bs_label(b) for b in BLOCKS]
        rows = [[f"{m}/{100 - m}"] + [mat.get(label(m, b)) for b in BLOCKS] for m in MIXES]
        out.append(Table(f"table-{key}-matrix", f"{test}: IOPS, R/W mix x block size\n{d.label}",
                         ["R/W mix"] + cols, rows, "average of the measurement window's rounds"))
        out.append(Matrix3D(f"fig-{key}-3d", f"{test}: IOPS matrix\n{d.label}", cols,
                            [f"{m}/{100 - m}" for m in MIXES],
                            [[mat.get(label(m, b)) for b in BLOCKS] for m in MIXES]))
    return out


# -- Throughput ------------------------------------------------------------------------
def _throughput(key: str, test: str, d: Any) -> list:
    m = d.metrics or {}
    out: list = []
    rows = []
    for k, v in m.items():
        if k.startswith("bs") and isinstance(v, dict):
            dd = type("D", (), {"metrics": v, "label": f"{d.label} {k[2:]}"})()
            out += steady_figures(f"{key}-{k}", f"{test} {k[2:]}", dd)
            rows.append([k[2:], v.get("read_mbps"), v.get("write_mbps"), v.get("steady_reached"),
                         v.get("steady_round")])
    if rows:
        out.insert(0, Table(f"table-{key}-mbps", f"{test}: sequential MB/s at steady state\n{d.label}",
                            ["block size", "read MB/s", "write MB/s", "steady", "steady round"], rows))
    return out


# -- Latency ---------------------------------------------------------------------------
def _latency(key: str, test: str, d: Any) -> list:
    out = steady_figures(key, test, d)
    t = (d.metrics or {}).get("latency_table") or {}
    if t:
        rows = []
        for lbl, v in t.items():
            mix, bs = lbl.split("_")
            rp = int(mix[2:])
            rows.append([f"{rp}/{100 - rp}", bs[2:], v.get("avg_us"), v.get("max_us"),
                         v.get("p99_999_us"), v.get("iops")])
        out.insert(0, Table(f"table-{key}-latency", f"{test}: response times (us) at T1Q1\n{d.label}",
                            ["R/W mix", "block size", "average", "maximum", "99.999 %", "IOPS"], rows))
    return out


# -- WSAT ------------------------------------------------------------------------------
def _wsat(key: str, test: str, d: Any) -> list:
    m = d.metrics or {}
    t, iops, tgbw = (m.get("minutes") or []), (m.get("iops_by_minute") or []), (m.get("tgbw_by_minute") or [])
    if not t:
        return []
    return [Plot(f"fig-{key}-time", f"{test}: 4 KiB random write IOPS vs time\n{d.label}",
                 "time (minutes)", "IOPS", [Line("IOPS", t, iops, "lines")]),
            Plot(f"fig-{key}-tgbw", f"{test}: IOPS vs total GB written\n{d.label}",
                 "total GB written", "IOPS", [Line("IOPS", tgbw, iops, "lines")],
                 caption=f"drive fills: {m.get('drive_fills', 0):.2f}")]


# -- HIR -------------------------------------------------------------------------------
def _hir(key: str, test: str, d: Any) -> list:
    m = d.metrics or {}
    out = steady_figures(key, test, d)
    t, y = m.get("timeline_s") or [], m.get("timeline_iops") or []
    if t:
        out.append(Plot(f"fig-{key}-timeline", f"{test}: IOPS of each 5 s write burst vs time\n{d.label}",
                        "time (s) since the wait states began", "IOPS", [Line("IOPS", t, y, "markers")]))
    ws = m.get("wait_states") or {}
    if ws:
        out.insert(0, Table(f"table-{key}-waits", f"{test}: IOPS by wait state\n{d.label}",
                            ["wait state (s)", "bursts", "burst IOPS", "baseline IOPS after",
                             "x steady-state IOPS"],
                            [[k, v.get("bursts"), v.get("iops"), v.get("baseline_iops"), v.get("gain")]
                             for k, v in ws.items()]))
    return out


# -- XSR -------------------------------------------------------------------------------
def _xsr(key: str, test: str, d: Any) -> list:
    m = d.metrics or {}
    groups = m.get("groups") or {}
    out: list = []
    if groups:
        out.append(Table(f"table-{key}-groups", f"{test}: access groups\n{d.label}",
                         ["group", "stimulus", "minutes", "MB/s (last 5 min)", "IOPS (last 5 min)",
                          "steady after (min)"],
                         [[g, v.get("stimulus"), v.get("minutes"), v.get("mbps"), v.get("iops"),
                           v.get("steady_minute")] for g, v in groups.items()]))
        lines, start = [], 0.0
        for g, v in groups.items():
            ys = v.get("mbps_by_minute") or []
            lines.append(Line(f"{g}: {v.get('stimulus')}", list(start + np.arange(1, len(ys) + 1)), ys, "lines"))
            start += len(ys)
        out.append(Plot(f"fig-{key}-time", f"{test}: MB/s per minute across the access groups\n{d.label}",
                        "time (minutes)", "MB/s", lines))
    return out


# -- DIRTH -----------------------------------------------------------------------------
def _dirth(key: str, test: str, d: Any) -> list:
    out = steady_figures(key, test, d)
    g = (d.metrics or {}).get("grid") or {}
    if not g:
        return out
    by_t = {t: [(q, x) for q in sorted(QDS) if (x := g.get(f"t{t}q{q}"))] for t in THREADS}
    out.append(Plot(f"fig-{key}-iops-toio", f"{test}: IOPS vs total outstanding I/O\n{d.label}",
                    "total outstanding I/O (T x Q)", "IOPS",
                    [Line(f"T{t}", [t * q for q, _ in v], [x["iops"] for _, x in v]) for t, v in by_t.items() if v],
                    log_x=True))
    out.append(Plot(f"fig-{key}-demand", f"{test}: demand intensity, response time vs IOPS\n{d.label}",
                    "IOPS", "average response time (ms)",
                    [Line(f"T{t}", [x["iops"] for _, x in v], [(x["mean_us"] or 0) / 1000 for _, x in v])
                     for t, v in by_t.items() if v]))
    rows = [[f"T{t}Q{q}", t * q, x["iops"], x["mean_us"], x["max_us"]]
            for t, v in by_t.items() for q, x in v]
    out.append(Table(f"table-{key}-grid", f"{test}: measurement window averages\n{d.label}",
                     ["T x Q", "outstanding", "IOPS", "avg response (us)", "max response (us)"], rows))
    return out


iops_figures = _per_drive(_iops)
throughput_figures = _per_drive(_throughput)
latency_figures = _per_drive(_latency)
wsat_figures = _per_drive(_wsat)
hir_figures = _per_drive(_hir)
xsr_figures = _per_drive(_xsr)
dirth_figures = _per_drive(_dirth)

__all__ = [
    "KIB",
    "dirth_figures",
    "hir_figures",
    "iops_figures",
    "latency_figures",
    "throughput_figures",
    "wsat_figures",
    "xsr_figures",
]
