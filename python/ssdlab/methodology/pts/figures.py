"""What every PTS report page shares, as SNIA's report format and the TKperf and
CloudHarmony reports lay it out: the header (drive, platform, purge, write cache,
preconditioning, test stimulus, the steady-state rounds x-4..x or NOT ACHIEVED), the
steady-state convergence plot and a measurement-window plot for every tracking variable.
Each test module draws its own tables and plots below (its `figures`). `runs` are
report.model.ReportRun of one test (duck-typed: drives with label, drive, status, metrics,
identity and phases named as the phase generators name them)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from ...figures.pts_plots import Line, Plot, Table
from . import common as C

SPEC = "PTS 2.0.2"


def drives(runs: Sequence[Any]) -> Iterable[tuple[str, Any, Any]]:
    for r in runs:
        for i, d in enumerate(r.drives):
            yield f"{r.test}-{r.run_id}-{i}", r, d


def slug(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")


# -- the header ------------------------------------------------------------------------
def _extra(d: Any) -> dict:
    ident = getattr(d, "identity", None) or {}
    return ident.get("extra") or {}


def purge_used(d: Any) -> str:
    """The purge method(s) the run's purge phases used, as the target recorded them."""
    from ...targets.guard.purge import METHODS

    used = []
    for p in d.phases:
        if p.kind != "purge":
            continue
        code = p.totals.get("purge_method_code")
        if code is not None and 1 <= int(code) <= len(METHODS):
            m = METHODS[int(code) - 1]
        elif d.kind == "sim":
            m = "simulated purge: every block erased, the mapping cleared"
        else:
            m = "not recorded"
        if m not in used:
            used.append(m)
    return ", ".join(used) or "no purge phase stored"


def write_cache_measured(d: Any) -> str:
    """The drive's volatile write cache as the run's write_cache phases left it (read back
    from the drive), or as the target found it."""
    x = _extra(d)
    if d.kind == "sim":
        kib = ((x.get("profile") or {}).get("host") or {}).get("write_buffer_kib")
        return (f"enabled: the simulated drive's {kib} KiB write buffer (its profile; the "
                "simulator cannot switch it off)" if kib else "enabled (the simulated drive's write buffer)")
    read_back = [p.totals.get("write_cache_on") for p in d.phases if p.kind == "write_cache"]
    read_back = [v for v in read_back if v is not None and v == v]  # NaN: not readable
    if read_back:
        return ("enabled" if read_back[-1] else "disabled") + " (set by the run and read back from the drive)"
    wc = str(x.get("write_cache") or "")
    why = ("the kernel's queue/write_cache: {}; on NVMe it shows that the drive has a volatile "
           "cache, not how feature 6 is set")
    if wc == "write back":
        return "enabled (" + why.format(wc) + ")"
    if wc == "write through":
        return "disabled (" + why.format(wc) + ")"
    return "not measured (no block device)" if d.kind != "block" else "not measured"


def _platform(d: Any, run: Any) -> tuple[str, str, str]:
    x = _extra(d)
    pf = x.get("platform") or {}
    host = ", ".join(v for v in (pf.get("cpu"), pf.get("machine")) if v) or "not recorded"
    os_ = str(pf.get("os") or "not recorded")
    if d.kind == "sim":
        engine = (getattr(run, "tags", {}) or {}).get("engine_version") or "ssdsim"
        return (f"simulated drive: {engine}, in virtual time, on {host}", os_,
                "none: the simulator runs the phases itself")
    fio = " ".join(str(v) for v in (x.get("fio"), x.get("engine")) if v) or "not recorded"
    where = f" (on {x['host']})" if x.get("host") else ""
    return host + where, os_, fio


def logical_block_text(d: Any) -> str:
    lb = _extra(d).get("logical_block")
    if not lb:
        return "not known"
    return f"{int(lb)} bytes" + (" (4Kn)" if int(lb) == 4096 else "")


def _int(v: Any) -> int | None:
    return None if v is None else int(v)


def steady_text(m: dict) -> str:
    """SNIA's header line: the measurement window rounds x-4..x, or NOT ACHIEVED."""
    a, b = _int(m.get("window_first_round")), _int(m.get("window_last_round"))
    if "steady_reached" not in m:
        return "no steady-state rule (fixed duration)"
    if m.get("steady_reached"):
        return f"rounds {a}-{b} (steady state reached at round {b})"
    failing = ", ".join(m.get("not_steady") or [])
    win = f"rounds {a}-{b} reported" if a is not None else "fewer than 2 rounds"
    return f"NOT ACHIEVED in {C.n_rounds(m.get('rounds'))}: {win}" + (f"; not steady: {failing}" if failing else "")


def rounds_limit(cond: dict, each: str = "") -> str:
    return (f"at most {_int(cond.get('max_rounds'))}{each}; each step "
            f"{float(cond.get('round_seconds', 60)):g} s")


def header_table(key: str, run: Any, d: Any, title: str, stimulus: str,
                 steady: list[tuple[str, str]] | None = None) -> Table:
    """SNIA's page header as a table: `stimulus` says what the test ran; `steady` the
    steady-state lines (default: the test's one verdict), with a "rounds" line of its own
    when the test counts its rounds in parts."""
    m = d.metrics or {}
    cond = dict(m.get("conditions") or {})
    ident = getattr(d, "identity", None) or {}
    seg = cond.pop("segment", "client")
    host, os_, fio = _platform(d, run)
    cap = ident.get("capacity")
    spec_wc = cond.pop("write_cache_spec", "enabled")
    measured = write_cache_measured(d)
    differs = ("" if measured.startswith(spec_wc) or measured.startswith("not measured")
               else " - DIFFERS from the specification")
    tags = getattr(run, "tags", {}) or {}
    rows: list[list] = [
        ["test", f"{title} ({SPEC}, {'PTS-E enterprise' if seg == 'enterprise' else 'PTS-C client'})"],
        ["drive", ident.get("model") or d.label],
        ["device", d.drive],
        ["firmware", ident.get("firmware") or "-"],
        ["serial", ident.get("serial") or "-"],
        ["user capacity", f"{int(cap) / 1e9:,.1f} GB ({int(cap):,} bytes)" if cap else "-"],
        ["logical block", logical_block_text(d)],
        ["0.5 KiB steps", cond.pop("small_blocks", "not part of this test")],
        ["platform", host],
        ["operating system", os_],
        ["fio", fio],
        ["purge", purge_used(d)],
        ["write cache", f"specification: {spec_wc}; measured: {measured}{differs}"],
        ["active range", f"{cond.pop('active_range_pct', '-')} % of the LBAs (preconditioning and test)"],
        ["preconditioning", cond.pop("wipc", "-")],
        ["test stimulus", stimulus],
    ]
    for name, text in steady or [("steady state", steady_text(m))]:
        rows.append([name, text])
    if m.get("tracking_variables"):
        rows.append(["tracking variables", ", ".join(m["tracking_variables"])])
    if "rounds" in m and not any(name == "rounds" for name, _ in steady or []):
        rows.append(["rounds", f"{_int(m['rounds'])} run, {rounds_limit(cond)}"])
    rows.append(["data pattern", cond.pop("data_pattern", "-")])
    rows.append(["status", d.status])
    rows.append(["ssdlab", f"{tags.get('tool_version') or '-'}, run {run.run_id}, "
                           f"{tags.get('created') or ''}".rstrip(", ")])
    for k in ("wipc_threads", "wipc_queue_depth", "wipc_capacities", "logical_block",
              "round_seconds", "max_rounds"):
        cond.pop(k, None)
    for k, v in cond.items():  # the test's own conditions, as stored
        if isinstance(v, list) and all(isinstance(x, (int, float)) for x in v):
            v = ", ".join(f"{float(x):g}" for x in v)  # block sizes: 1024, not 1,024
        rows.append([k.replace("_", " "), v])
    return Table(f"table-{key}-conditions", f"{run.test}: report header\n{d.label}",
                 ["item", "value"], rows)


# -- steady state ----------------------------------------------------------------------
def convergence(key: str, test: str, d: Any, lines: dict[str, dict[int, float]], ylabel: str,
                what: str = "", suffix: str = "convergence") -> Plot:
    """Per round, each line (the tracking variable and its neighbours)."""
    return Plot(f"fig-{key}-{suffix}", f"{test}: steady-state convergence{what}\n{d.label}",
                "round", ylabel,
                [Line(lbl, sorted(v), [v[n] for n in sorted(v)]) for lbl, v in lines.items() if v])


def window_plots(key: str, test: str, d: Any, ylabel: Callable[[str], str] | None = None,
                 m: dict | None = None) -> list[Plot]:
    """The measurement window of every tracking variable: its values, their average, 90 %
    and 110 % of it, the least-squares line; the caption gives both excursions against
    their limits. The first variable's key is fig-<k>-window, the others' add their name."""
    m = d.metrics if m is None else m
    variables = m.get("tracking_variables") or (
        {m["tracking"]: m.get("tracking_by_round") or {}} if m.get("tracking") else {})
    wins = dict(m.get("windows") or {})
    if not wins and m.get("tracking") and m.get("window_first_round") is not None:
        # a run stored before several tracking variables: its one window, flat
        wins[m["tracking"]] = {k: m.get(f"window_{k}") for k in (
            "first_round", "last_round", "average", "data_excursion", "slope", "intercept",
            "slope_excursion")}
        wins[m["tracking"]]["steady"] = m.get("steady_reached")
    out: list[Plot] = []
    for i, (name, by_round) in enumerate(variables.items()):
        w = wins.get(name)
        if not w:
            continue
        track = {int(k): float(v) for k, v in by_round.items() if v is not None}
        a, b = int(w["first_round"]), int(w["last_round"])
        rs = [n for n in sorted(track) if a <= n <= b]
        avg = float(w["average"])
        fit = [float(w["intercept"]) + float(w["slope"]) * n for n in rs]
        ok = "steady" if w.get("steady") else "NOT steady"
        verdict = "steady state reached" if m.get("steady_reached") else "steady state NOT ACHIEVED"
        out.append(Plot(
            f"fig-{key}-window" + ("" if i == 0 else f"-{slug(name)}"),
            f"{test}: measurement window, rounds {a}-{b}: {name} {ok}\n{d.label}",
            "round", ylabel(name) if ylabel else name, [
                Line(name, rs, [track[n] for n in rs]),
                Line("average", rs, [avg] * len(rs), "lines", "dash"),
                Line("110 % of average", rs, [1.1 * avg] * len(rs), "lines", "dot"),
                Line("90 % of average", rs, [0.9 * avg] * len(rs), "lines", "dot"),
                Line("least-squares fit", rs, fit, "lines"),
            ], xticks=rs,
            caption=(f"{verdict} (every tracking variable in the same rounds); "
                     f"{name}: average {avg:,.4g}; data excursion {w['data_excursion']:,.4g} (limit "
                     f"20 % of the average: {0.2 * avg:,.4g}); slope excursion "
                     f"{w['slope_excursion']:,.4g} (limit 10 %: {0.1 * avg:,.4g}); fit "
                     f"y = {w['slope']:,.4g} x round + {w['intercept']:,.4g}")))
    return out


Page = tuple  # (the header's test-stimulus line, figures[, the header's steady-state lines])


def per_drive(title: str, build: Callable[[str, Any, Any], Page]
              ) -> Callable[[Sequence[Any], Any], list]:
    """A test's figures: for each run and drive the header, then what `build(key, run,
    drive)` returns: the test-stimulus line of the header, the figures, and optionally
    the header's steady-state lines (a test with several verdicts)."""
    def figures(runs: Sequence[Any], opts: Any = None) -> list:
        out: list = []
        for key, r, d in drives(runs):
            stimulus, figs, *steady = build(key, r, d)
            out.append(header_table(key, r, d, title, stimulus, steady[0] if steady else None))
            out.extend(figs)
        return out
    return figures


def by_label(d: Any, labels: Iterable[str], value: Callable[[Any], float | None]
             ) -> dict[str, dict[int, float]]:
    """{label: {round: value}} of the drive's round phases."""
    rounds = C.by_round(d.phases)
    out: dict[str, dict[int, float]] = {}
    for lb in labels:
        vals = {n: value(r[lb]) for n, r in rounds.items() if lb in r}
        out[lb] = {n: float(v) for n, v in vals.items() if v is not None}
    return out


__all__ = ["by_label", "convergence", "drives", "header_table", "per_drive", "purge_used",
           "slug", "steady_text", "window_plots", "write_cache_measured"]
