"""The fill of an area that is not a whole number of segments ends with a last, partial one
(a 40.5 GB area in 1 GB segments: 0.5 GB). The simulator records whole segments only, so the
curve stopped at 40 GB and the rates read from it (post-cache, last 16 GB) left the end of the
pass out; the curve now ends with that segment at its own speed over its own size. The
simulator's own segments end with it too, so every reader of the stored segments (exports,
the trim test, the fingerprint) sees the whole write."""

from __future__ import annotations

import numpy as np
import pytest

from ssdlab import phase as ph
from ssdlab.figures.fill import fill_curves
from ssdlab.figures.model import ReportDrive, ReportPhase, ReportRun
from ssdlab.methodology import Options, get
from ssdlab.phase import GB, PhaseResult

TEST = get("fill")


def pass_with_a_slow_tail() -> PhaseResult:
    """40 whole 1 GB segments (4 at 2000 MB/s, 36 at 500), then 0.5 GB at 100 MB/s that only
    the totals hold: 40.5 GB in 2 + 72 + 5 s."""
    v = np.r_[np.full(4, 2000.0), np.full(36, 500.0)]
    gb = np.arange(1.0, 41.0)
    t = np.cumsum(1000.0 / v)
    wb, dur = 40.5e9, float(t[-1]) + 5.0
    totals = {"duration_s": dur, "write_bytes": wb, "mbps": wb / dur / 1e6}
    p = ph.seq_write("fill", offset=0, length=int(wb), stop_bytes=int(wb), segment_bytes=GB)
    return PhaseResult(p, {}, {"gb": gb, "mbps": v, "t_s": t}, {}, totals)


def test_the_rates_read_from_the_curve_include_the_last_partial_segment():
    m = TEST.analyze([pass_with_a_slow_tail()], Options())
    assert m["slc_cache_gb"] == 4.0
    # the last 16 GB: 15.5 GB at 500 MB/s (31 s) and the 0.5 GB tail at 100 (5 s)
    assert m["last16_mbps"] == pytest.approx(16000.0 / 36.0)
    # after the cache: 36.5 GB in 72 + 5 s (bytes over time: the tail weighs its 0.5 GB)
    assert m["post_cache_mbps"] == pytest.approx(36500.0 / 77.0)
    assert m["peak_mbps"] == 2000.0 and m["recovery_peaks"] == 0


def test_the_fill_curve_reaches_the_end_of_the_pass():
    r = pass_with_a_slow_tail()
    drive = ReportDrive("sim:x", "x", phases=[ReportPhase.from_result("fill", r)])
    (c,) = fill_curves([ReportRun(1, "fill", [drive])])
    assert c.gb[-1] == pytest.approx(40.5) and c.mbps[-1] == pytest.approx(100.0)
    assert len(c.gb) == 41


def test_a_simulated_fill_curve_covers_the_whole_area():
    """sim:tlc-256 shrunk to 40.5 GB: the curve ends where the pass did, and the last 16 GB
    are the pass's last 16 GB (bytes over time from its per-second series)."""
    pytest.importorskip("ssdlab._sim")
    from ssdlab.profiles import load_text
    from ssdlab.runner import walk_phases
    from ssdlab.targets.sim import SimTarget

    t = SimTarget(load_text("tlc-256"), ["user_capacity_gb=40.5", "nand.blocks_per_plane=240"])
    opts = Options()
    results = walk_phases(TEST, t, t.identify().capacity, opts)
    r = next(x for x in results if x.phase.name == "fill")
    drive = ReportDrive("sim:tlc-256", "x", phases=[ReportPhase.from_result("fill", r)])
    (c,) = fill_curves([ReportRun(1, "fill", [drive])])
    assert c.gb[-1] * 1e9 == pytest.approx(r.totals["write_bytes"]) and c.gb[-1] > 40.4
    cum = np.cumsum(r.series["host_write_bytes"])
    start = np.interp(cum[-1] - 16e9, cum, r.series["t_s"])
    want = 16e9 / (r.series["t_s"][-1] - start) / 1e6
    assert TEST.analyze(results, opts)["last16_mbps"] == pytest.approx(want, rel=0.005)


def test_the_simulators_segments_end_with_the_partial_one():
    """A write of 2.5 segments records three: the last of 0.5 segment, at the phase's end,
    its speed its bytes over its own time; and a run stopped mid-segment keeps its tail."""
    pytest.importorskip("ssdlab._sim")
    from ssdlab.profiles import load_text
    from ssdlab.runner import walk_phases
    from ssdlab.targets.sim import SimTarget

    t = SimTarget(load_text("tlc-256"), ["user_capacity_gb=40.5", "nand.blocks_per_plane=240"])
    results = walk_phases(TEST, t, t.identify().capacity, Options())
    r = next(x for x in results if x.phase.name == "fill")
    gb, mbps, ts = (np.asarray(r.segments[k]) for k in ("gb", "mbps", "t_s"))
    assert gb[-1] * 1e9 == pytest.approx(r.totals["write_bytes"], abs=1.0)
    assert ts[-1] == pytest.approx(r.totals["duration_s"])
    tail = gb[-1] - gb[-2]
    assert 0 < tail < 1.0 and np.allclose(np.diff(gb[:-1]), 1.0)
    assert mbps[-1] == pytest.approx(tail * 1000.0 / (ts[-1] - ts[-2]))
