"""PTS tests whose fixed spans end early (XSR's groups at twice the capacity, WSAT's at 4x,
HIR's bursts cut to a shorter step): what the report and metrics say matches what ran,
in the unit it is labelled with."""

from __future__ import annotations

import numpy as np
import pytest
from ssdlab.figures.model import ReportDrive
from ssdlab.methodology import Options
from ssdlab.methodology.pts import PtsOptions
from ssdlab.methodology.pts import hir as HIR
from ssdlab.methodology.pts import wsat as WSAT
from ssdlab.methodology.pts import xsr as XSR
from ssdlab.phase import GB, PhaseResult
from ssdlab.runner import plan_phases


class Run:
    test, run_id, tags = "pts-x", 1, {}


def page(module, metrics: dict) -> dict:
    d = ReportDrive(drive="sim:x", label="X", metrics=metrics)
    _, figs, *_ = module.page("k", Run(), d)
    return {f.key.removeprefix("fig-k-").removeprefix("table-k-"): f for f in figs}


def xsr_groups(seconds: dict[str, list[float]]):
    """XSR's three groups with these per-second MB/s (a group cut at twice the capacity)."""
    res = []
    for g, mb in seconds.items():
        phase = next(p for p in XSR.phases(64 * GB, Options()) if p.name == g)
        y = np.asarray(mb, dtype=float)
        res.append(PhaseResult(phase, {"mbps": y, "iops": y}, {}, {}, {"duration_s": float(y.size)}))
    return res


def test_an_xsr_group_of_minutes_is_judged_per_minute():
    # 8 minutes each: 1-minute averages, as the specification records XSR, not seconds
    per_min = {"ag1": [400.0] * 8, "ag2": [150.0] * 8, "ag3": [300, 350, 400, 400, 400, 400, 400, 400]}
    # the third group ends 9 s into a ninth minute (its byte cap): no minute of its own
    res = xsr_groups({g: list(np.repeat(v, 60)) + ([100.0] * 9 if g == "ag3" else [])
                      for g, v in per_min.items()})
    m = XSR.TEST.analyze(res, Options())
    ag3 = m["groups"]["ag3"]
    assert ag3["mbps_by_minute"] == pytest.approx(per_min["ag3"])
    assert ag3["step_s"] == 60 and ag3["settled_window"] == [3, 7] and ag3["final_steady"]
    assert m["recovery_minutes"] == 7 and ag3["mbps"] == pytest.approx(400)


def test_a_short_xsr_group_is_drawn_in_minutes_and_says_its_span_in_seconds():
    # groups under 5 minutes (quick runs, a fast small drive at twice its capacity) are
    # analysed per second: the time axis is still in minutes, the figures name seconds
    res = xsr_groups({"ag1": [400.0] * 120, "ag2": [150.0] * 180, "ag3": [200.0] * 10 + [400.0] * 110})
    m = XSR.TEST.analyze(res, Options())
    assert {g: v["step_s"] for g, v in m["groups"].items()} == {"ag1": 1, "ag2": 1, "ag3": 1}
    figs = page(XSR, m)
    lines = {ln.name: ln for ln in figs["time"].lines}
    ag1, ag2, ag3 = (lines[f"{g}: {XSR.GROUPS[g][0]}"] for g in ("ag1", "ag2", "ag3"))
    assert max(ag1.x) == pytest.approx(2.0) and min(ag2.x) > 2.0 and max(ag2.x) == pytest.approx(5.0)
    assert max(ag3.x) == pytest.approx(7.0)
    a, b = lines["ag3 settled"].x
    assert 5.0 < a < b < 7.0  # within the third group, where it settled
    rows = {r[0]: r for r in figs["groups"].rows}
    assert str(rows["ag3"][-1]).startswith("seconds 11-15")  # from its 11th second at 400 MB/s
    assert not any("last 5 min" in c for c in figs["groups"].columns)


def wsat_result(seconds: int) -> tuple[PhaseResult, Options]:
    opts = Options(own=PtsOptions.quick())
    phase = next(p for p in WSAT.phases(4 * GB, opts) if p.name == "wsat")
    y = np.full(seconds, 1000.0)
    return PhaseResult(phase, {"iops": y, "mbps": y * 4096 / 1e6}, {}, {},
                       {"duration_s": float(seconds), "write_bytes": seconds * 1000 * 4096}), opts


def test_wsat_under_two_minutes_says_its_last_five_seconds():
    r, opts = wsat_result(90)
    m = WSAT.TEST.analyze([r], opts)
    assert m["step_s"] == 1
    cap = page(WSAT, m)["time"].caption
    assert "last 5 seconds: 1,000 IOPS" in cap and "last 5 minutes" not in cap


def test_hir_bursts_are_reported_as_long_as_they_ran():
    po = PtsOptions(round_seconds=2.0, max_rounds=1, scale=0.01, wait_scale=0.1)
    phases = plan_phases("pts-hir", 4 * GB, Options(own=po))
    assert {p.stop_seconds for p in phases if p.name.startswith("ws5/burst")} == {2.0}
    res = [PhaseResult(p, {}, {}, {}, {"iops": 100.0, "duration_s": float(p.stop_seconds or p.seconds or 0)})
           for p in phases if p.name.startswith("ws")]
    m = HIR.TEST.analyze(res, Options(own=po))
    assert m["conditions"]["burst_s"] == 2.0
    assert m["conditions"]["wait_states_s"] == pytest.approx([0.5, 1, 1.5, 2.5, 5])
    stim, figs = HIR.page("k", Run(), ReportDrive(drive="sim:x", label="X", metrics=m))
    assert "(2 s writes, wait)" in stim and "wait states 0.5, 1, 1.5, 2.5, 5 s" in stim
    names = [ln.name for f in figs if f.key.endswith("timeline") for ln in f.lines]
    assert "2 s write bursts" in names
    table = next(f for f in figs if f.key.endswith("waits"))
    assert [r[0] for r in table.rows] == ["0.5", "1", "1.5", "2.5", "5"]  # the idle each had


def test_enterprise_throughput_header_counts_the_rounds_of_each_block_size():
    from ssdlab.figures.model import ReportRun
    from ssdlab.methodology.pts import common as C
    from ssdlab.methodology.pts import throughput as TP

    def part(n: int) -> dict:
        return C.steady_metrics({"x": [100.0] * n}, 25) | {"read_mbps": 1.0, "write_mbps": 1.0}

    m = {"bs1m": part(11), "bs128k": part(18), "steady_reached": True, "steady_round": 5,
         "rounds": 11, "conditions": C.conditions(PtsOptions(segment="enterprise", round_seconds=5.0))}
    run = ReportRun(run_id=1, test="pts-throughput",
                    drives=[ReportDrive(drive="sim:x", label="X", metrics=m)])
    head = TP.TEST.figures([run])[0]
    rows = [r for r in head.rows if r[0] == "rounds"]
    assert len(rows) == 1 and rows[0][1].startswith("11 for 1024 KiB, 18 for 128 KiB run")
    assert rows[0][1].endswith("run, at most 25 each; each step 5 s")


def test_wsat_draws_a_last_minute_cut_short_where_the_run_ended():
    r, opts = wsat_result(150)  # 4x the capacity written 30 s into the third minute
    m = WSAT.TEST.analyze([r], opts)
    assert m["step_s"] == 60 and m["minutes"] == pytest.approx([1.0, 2.0, 2.5])
