"""fio's memory on a long phase. fio keeps every histogram window (15 KB) of each job and
direction to the end of a phase: a phase that may run more than an hour (its stop_seconds,
or its stop_bytes at the slowest rate a drive is taken to write) keeps fewer, longer
windows and reads its per-GB series from a bandwidth log averaged over 100 ms; every phase
of an hour or less is as it was. The local path refuses, before anything is written, a
phase whose fio would take more memory than the machine has (or than SSDLAB_FIO_MEMORY
gives). Job files and estimates need no I/O; the rest runs on loop devices of a few MiB."""

from __future__ import annotations

import clirun
import pytest
from refusals import one_line_error, sha

from loopdevs import MIB, REASON, loops  # noqa: F401  (loops: a fixture)
from ssdlab import phase as P
from ssdlab.fioformat import logs as flogs
from ssdlab.methodology import TESTS, fill
from ssdlab.methodology.common import Options
from ssdlab.runner import plan_phases
from ssdlab.targets import open_target
from ssdlab.targets.fio import jobs as fio_jobs
from ssdlab.targets.remote import fio_memory

TB = 10**12
WINDOW_BYTES = 1856 * 8  # one histogram window fio keeps (FIO_IO_U_PLAT_NR counters)
realdev = pytest.mark.skipif(bool(REASON), reason=REASON or "")


def whole_fill(area: int) -> P.Phase:
    return P.seq_write("fill", offset=0, length=area, stop_bytes=area, segment_bytes=fill.segment_bytes(area))


def options(p: P.Phase, capacity: int) -> dict[str, str]:
    text = fio_jobs.job_text(p.resolve(capacity), "/dev/sdx", engine="libaio", log_prefix="/w/p1")
    return {k.strip(): v.strip() for k, _, v in (x.partition("=") for x in text.splitlines() if "=" in x)}


def histograms_held(o: dict[str, str], seconds: float) -> float:
    """Bytes of histogram windows fio holds at the end of a job of `o` that ran `seconds`."""
    return seconds * 1000 / int(o["log_hist_msec"]) * WINDOW_BYTES


@pytest.mark.parametrize("area, held", [(4 * TB, 0.8e9), (TB, 0.2e9)])
def test_a_long_fill_keeps_fewer_histogram_windows(area, held):
    """A 4 TB fill at 150 MB/s (7.4 h) in 100 ms windows held 3.96 GB of fio's memory, a
    1 TB one 0.99 GB; in windows of half a sample interval, a fifth of that. Its per-GB
    series keeps 100 ms: the bandwidth log alone is averaged that finely."""
    o = options(whole_fill(area), area)
    assert histograms_held(o, area / 150e6) <= held
    assert int(o["log_hist_msec"]) <= 500  # each 1 s interval still holds a whole window (stalls)
    assert o["bwavgtime"] == "100" and o["log_avg_msec"] == "1000"


def test_a_fills_windows_come_from_its_longest_duration():
    """The window over stop_bytes at 50 MB/s: 36,000 of them where half a sample allows."""
    for area, window in ((180 * 10**9, 100), (256 * 10**9, 143), (512 * 10**9, 285), (TB, 500)):
        o = options(whole_fill(area), area)
        assert int(o["log_hist_msec"]) == window, area
        assert area / fio_jobs.SLOWEST_BPS * 1000 / window <= 36_000 or window == 500
    # small blocks at 1000 IOPS (4 KiB: 4.1 MB/s): 20 GB of them in up to 81 min
    assert options(P.rand_io("r", 0, stop_bytes=20 * 10**9), TB)["log_hist_msec"] == "136"
    # stop_seconds bounds a phase whatever the drive's speed (PTS XSR: 8 h or 128 GB)
    xsr = options(P.seq_write("ag", block_size=1 << 20, stop_bytes=128 * 10**9, stop_seconds=8 * 3600), TB)
    assert xsr["log_hist_msec"] == "500" and xsr["bwavgtime"] == "100"


def test_phases_of_an_hour_or_less_are_unchanged():
    """Every io phase of every test on a drive of 180 GB (a whole-drive pass at 50 MB/s:
    an hour) keeps the logs it had: 100 ms windows, the bandwidth log averaged over the
    sample interval, and its figures read from them as before."""
    cap = 180 * 10**9
    logs_as_before = {"write_iops_log": "/w/p1", "write_bw_log": "/w/p1", "write_lat_log": "/w/p1",
                      "log_avg_msec": "1000", "write_hist_log": "/w/p1", "log_hist_msec": "100",
                      "log_hist_coarseness": "3"}
    seen = 0
    for name in sorted(TESTS):
        for p in plan_phases(name, cap, Options()):
            if p.kind != "io":
                continue
            o = options(p, cap)
            assert "bwavgtime" not in o, (name, p.name)
            want = dict(logs_as_before, log_avg_msec=str(round(p.sample_interval_s * 1000)))
            assert {k: o[k] for k in want} == want, (name, p.name)
            assert fio_jobs.fine_bw_ms(fio_jobs.phase_hist_ms(p.resolve(cap))) is None  # hist -> per-GB
            seen += 1
    assert seen > 100
    hour = options(P.rand_io("hour", 0, stop_seconds=3600), cap)
    assert hour["log_hist_msec"] == "100" and "bwavgtime" not in hour


def test_the_estimate_counts_a_fills_logs():
    """What fio takes for a phase that stops after its bytes, counted over those bytes at
    50 MB/s (it counted its buffers alone: 4 MiB for any fill)."""
    assert fio_memory.footprint(whole_fill(4 * TB)) == pytest.approx(2.45e9, rel=0.01)
    assert fio_memory.footprint(whole_fill(TB)) == pytest.approx(0.615e9, rel=0.01)
    assert fio_memory.logs(P.rand_io("r", 0, stop_seconds=10)) > 0  # a timed phase: as before


def test_the_per_gb_series_from_a_fine_bandwidth_log(tmp_path):
    """Each entry's KiB/s times its 100 ms; after a stall (no entries from 400 to 2900 ms)
    the next entry's bytes were moved in its last window alone, not through the stall; the
    IOPS log times the block size gives the per-second bandwidth."""
    kib = 10**6 / 1024  # 1 MB/s in KiB/s
    rows = [(t, 100 * kib) for t in range(100, 500, 100)] + [(t, 100 * kib) for t in range(3000, 4100, 100)]
    (tmp_path / "p_bw.1.log").write_text("".join(f"{t}, {v:.6f}, 1, 0, 0\n" for t, v in rows))
    seg = flogs.segments_from_bw(tmp_path / "p", 10**7, 100.0)  # 100 MB/s: 10 MB every 100 ms
    # 4 x 10 MB, 15 MB in the 150 ms to 3.0 s (an entry counts at most 1.5 windows), 10 x 10 MB
    assert seg["gb"][-1] == pytest.approx(0.155) and len(seg["gb"]) == 16
    assert list(seg["t_s"][:4]) == pytest.approx([0.1, 0.2, 0.3, 0.4])
    assert seg["t_s"][4] == pytest.approx(2.95)  # not spread over the stall (at 50 MB: 2.85 s + 2/3 of 150 ms)
    assert list(seg["mbps"][:4]) == pytest.approx([100.0] * 4) and seg["mbps"][4] == pytest.approx(10 / 2.55)
    assert list(seg["mbps"][5:]) == pytest.approx([100.0] * 11)
    (tmp_path / "p_iops.1.log").write_text("1000, 3200, 1, 0, 0\n2000, 3000, 1, 0, 0\n")
    s = flogs.series_from_logs(tmp_path / "p", 1000.0, block_size=4096)
    assert list(s["write_mbps"]) == pytest.approx([3200 * 4096 / 1e6, 3000 * 4096 / 1e6])


# ---- the local path --------------------------------------------------------------------------

def cli(*args: str, env: dict | None = None):
    return clirun.cli(*args, timeout=120, env=clirun.environ(**(env or {})))


@realdev
def test_a_fill_whose_fio_would_take_more_than_it_may_is_refused_before_any_write(loops, tmp_path):
    dev, _ = loops.make(8 * MIB)
    before = sha(dev)
    db = tmp_path / "r.sqlite"
    r = cli("run", "fill", "--drive", dev, "--destroy-data", dev, "--db", str(db), env={"SSDLAB_FIO_MEMORY": "1M"})
    one_line_error(r, f"drive {dev}: phase fill: fio would take about 4.2", "more than the 1.05 MB SSDLAB_FIO_MEMORY "
                   "gives", "set SSDLAB_FIO_MEMORY=SIZE")
    assert not db.exists() and sha(dev) == before  # refused before the store and the purge
    r = cli("run", "fill", "--drive", dev, "--destroy-data", dev, "--db", str(db), env={"SSDLAB_FIO_MEMORY": "lots"})
    one_line_error(r, "SSDLAB_FIO_MEMORY=lots: size 'lots'")
    r = cli("run", "fill", "--drive", dev, "--destroy-data", dev, "--db", str(db), env={"SSDLAB_FIO_MEMORY": "64M"})
    assert r.returncode == 0, r.stderr  # within what it gives: the fill runs


@realdev
def test_a_phase_over_what_the_machine_has_is_refused_by_preflight(loops, monkeypatch):
    dev, _ = loops.make(8 * MIB)
    before = sha(dev)
    monkeypatch.delenv("SSDLAB_FIO_MEMORY", raising=False)
    monkeypatch.setattr("ssdlab.targets.fio.memory.available", lambda: 2e6)  # a machine with 2 MB free
    with open_target(dev, destroy_data=dev) as t:
        with pytest.raises(ValueError, match=r"fio would take about 4.2. MB of memory \(4.19 MB of I/O buffers.*"
                                             r"more than the 2 MB this machine has available") as e:
            t.preflight([P.purge(), whole_fill(8 * MIB)])
        assert getattr(e.value, "exit_code", None) == 2
        t.preflight([P.purge(), P.seq_write("small", queue_depth=1, stop_bytes=MIB)])  # 128 KiB: fits
    assert sha(dev) == before


@realdev
def test_a_long_phases_per_gb_series_comes_from_its_fine_bandwidth_log(loops, monkeypatch):
    """A 3 s phase taken for a long one (36,000 windows made 5): 500 ms histogram windows,
    a bandwidth log of 100 ms read into the per-GB series, the IOPS log of 1 s into the
    per-second one; the two agree with fio's report."""
    monkeypatch.setattr(fio_jobs, "MAX_HIST_WINDOWS", 5)
    seen: dict[str, tuple[int, int]] = {}
    real = flogs.segments_from_bw

    def spy(prefix, *a, **kw):
        bw = [flogs.read_log(f) for f in flogs.job_logs(prefix, "bw")]
        iops = [flogs.read_log(f) for f in flogs.job_logs(prefix, "iops")]
        seen["entries"] = (sum(len(x) for x in bw), sum(len(x) for x in iops))
        return real(prefix, *a, **kw)

    monkeypatch.setattr(flogs, "segments_from_bw", spy)
    dev, _ = loops.make(16 * MIB)
    seg = 64 * MIB
    with open_target(dev, destroy_data=dev) as t:
        r = t.run(P.seq_write("w", queue_depth=4, stop_seconds=3, segment_bytes=seg))
    bw_entries, iops_entries = seen["entries"]
    assert bw_entries >= 20 and iops_entries <= 4, seen  # 100 ms and 1 s
    moved = r.totals["write_bytes"]
    s = r.segments
    assert len(s["gb"]) == -(-int(moved) // seg) and s["gb"][-1] == pytest.approx(moved / 1e9)
    assert (s["mbps"] > 0).all() and (s["t_s"] <= r.totals["duration_s"] + 1e-6).all()
    # the per-GB series moves the report's bytes in the report's time
    assert float((seg / s["mbps"][:-1] / 1e6).sum()) <= r.totals["duration_s"]
    assert float(r.series["write_mbps"].sum()) * 1e6 == pytest.approx(moved, rel=0.02)
