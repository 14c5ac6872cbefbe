"""A consistency run reports steady state only once the drive's spare area is used up and
garbage collection runs: a run that ends in the burst says "not reached", not a steady figure."""

import numpy as np
import pytest
from bounded import run_cli
from drives import SMALL, set_flags
from fakes import FakeTarget

from ssdlab.analysis.gc_onset import gc_onset_s, spare_floor_bytes
from ssdlab.methodology import Options
from ssdlab.phase import GB
from ssdlab.runner import run_test

STEADY = ("steady_iops", "steady_stdev", "p1_low_iops", "min_iops", "steady_start_s", "steady_waf")


def run(store, fake, seconds=60, spare=0.0):
    opts = Options(seconds=seconds, spare=spare)
    return run_test(store, "consistency", [("fake", fake)], opts, {"spare": spare})[1][0].metrics


def test_gc_onset_from_the_bytes_written_and_the_counter():
    iops = np.full(100, 1000.0)  # 4.096 MB a second
    assert gc_onset_s({"iops": iops}, 4096, 40.96e6) == 9  # the 10th second reaches it
    assert gc_onset_s({"iops": iops}, 4096, 1e9) is None  # never written
    moves = np.r_[np.zeros(30), np.ones(70)]
    assert gc_onset_s({"iops": iops, "gc_moves": moves}, 4096, 0) == 30  # the counter says when
    assert gc_onset_s({"iops": iops, "gc_moves": np.zeros(100)}, 4096, 0) is None
    # the unwritten LBAs (--spare) and the drive's own spare, at least 7 % of its capacity
    assert spare_floor_bytes(75 * GB, 25.0) == pytest.approx(100 * GB * 1.07 - 75 * GB)


def test_a_run_that_ends_in_the_burst_is_not_steady(store):
    fake = FakeTarget(capacity=256 * GB)
    fake.burst_s = 1000  # 50 000 IOPS for the whole 60 s: 12 GB, under the spare area
    m = run(store, fake)
    assert m["steady_reached"] is False
    assert all(m[k] is None for k in STEADY), m


def test_a_run_past_the_spare_area_is_steady(store):
    m = run(store, FakeTarget())  # 16 GB: the 10 s burst writes 2 GB, more than its spare
    assert m["steady_reached"] is True
    assert 9 <= m["steady_start_s"] <= 15 and m["steady_iops"] == pytest.approx(12_000, rel=0.1)


def test_a_simulated_burst_is_not_steady_state(tmp_path):
    """sim:sn520-128 writes 6 GB in 60 s, its spare area is 9 GB: the 24 000 IOPS of the
    burst are not its steady state (about 5 000 after 2000 s)."""
    r = run_cli("run", "consistency", "--drive", "sim:sn520-128", "--seconds", "60",
                "--db", str(tmp_path / "r.db"))
    assert r.returncode == 0, r.stderr[-2000:]
    assert "steady state not reached in 60 s" in r.stdout, r.stdout
    assert "23661" not in r.stdout


def test_a_sweep_says_which_points_never_reached_steady_state(tmp_path):
    """tlc-256 shrunk to 8 GB still climbs back from GC's onset after 20 s."""
    r = run_cli("sweep", "consistency", "--drive", "sim:tlc-256", *set_flags(SMALL), "--spare", "0,25",
                "--seconds", "20", "--jobs", "1", "--db", str(tmp_path / "s.db"))
    assert r.returncode == 0, r.stderr[-2000:]
    assert "2 of 2 points: steady state not reached in 20 s" in r.stdout, r.stdout


@pytest.mark.parametrize("seconds", [60, 1000, 1200, 2000])
def test_the_steady_waf_title_names_the_seconds_it_covers(seconds):
    """The figure title says over which seconds steady_waf is: the last 600 s of a 1200 s
    run or longer, the second half of a shorter one."""
    from ssdlab.figures.data import metric_title
    from ssdlab.methodology.consistency import steady_waf

    host = np.full(seconds, 1.0)
    nand = np.arange(seconds, dtype=float)  # each second its own WAF: which ones count shows
    got = steady_waf({"host_write_bytes": host, "nand_write_bytes": nand})
    title = metric_title("steady_waf")
    span = "last 600 s" if seconds >= 1200 else "second half"
    assert span in title, title
    n = 600 if seconds >= 1200 else seconds // 2
    assert got == pytest.approx(nand[-n:].mean())
