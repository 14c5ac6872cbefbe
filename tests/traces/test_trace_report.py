"""The report of a trace run says what was replayed: the file, its format, its I/Os and
how it was timed, so that two runs put side by side can be seen to replay the same."""

from __future__ import annotations

from ssdlab.figures.model import ReportDrive, ReportRun
from ssdlab.figures.trace import figures
from ssdlab.figures import FigureOptions


def _run(run_id: int, trace: str, mode: str, ios: float) -> ReportRun:
    args = {"trace": {"trace": trace, "format": None, "speed": 1.0, "idle_cap_s": None, "qd": None,
                      "state": "empty", "wrap": False}}
    metrics = {"trace_format": "fio-v3", "trace_mode": mode, "trace_ios": ios,
               "trace_duration_s": 0.5, "empty_data_rate_mbps": 100.0}
    return ReportRun(run_id, "trace", [ReportDrive("sim:a", "A", metrics=metrics)], tags={"args": args})


def test_the_report_names_the_trace_and_how_it_was_replayed():
    runs = [_run(3, "/traces/app<1>.iolog", "open loop, speed x2, idle cap 25 ms", 2048.0),
            _run(4, "builtin:destroyer-like@0.01", "closed loop QD6", 498100.0)]
    html = "".join(f.html() for f in figures(runs, FigureOptions()))
    assert "/traces/app&lt;1&gt;.iolog" in html  # escaped
    assert "fio-v3" in html and "2,048 I/Os" in html and "open loop, speed x2, idle cap 25 ms" in html
    assert "builtin:destroyer-like@0.01" in html and "closed loop QD6" in html
    assert html.index("run 3") < html.index("run 4")
