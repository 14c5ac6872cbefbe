"""The fingerprint battery (`ssdlab run fingerprint`) on small simulated drives: its phases,
its metrics (rates, latencies and shares, the same at any drive size), the plan a stored run
is read back as, and what each phase shows of the drive."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pytest

from drives import SMALL, set_flags
from clirun import cli
from ssdlab.methodology import Options, get
from ssdlab.methodology import fingerprint as fp
from ssdlab.methodology.common import area_bytes
from ssdlab.profiles import load_text
from ssdlab.runner import walk_phases
from ssdlab.store import Store
from ssdlab.targets.sim import SimTarget

TEST = get("fingerprint")
SHORT = Options(seconds=60, interval=5)


def run(sets, opts=SHORT, profile="tlc-256"):
    t = SimTarget(load_text(profile), sets)
    cap = t.identify().capacity
    res = walk_phases(TEST, t, cap, opts)
    return res, TEST.analyze(res, opts)


@pytest.fixture(scope="module")
def small():
    return run(SMALL)


def test_phases_in_order_with_their_stops():
    names = [p.name for p in TEST.phases(8 * 10**9, SHORT)]
    assert names == ["purge", "unmapped_qd1_read", "unmapped_qd32_read", "cache_write", "cache_seq_read", "cache_qd1_read", "cache_qd32_read",
                     "cache_qd1_write", "cache_rand_write", "fill", "settle", "qd1_read", "read_qd32", "read_seq",
                     "read_seq_qd1", "ws_1/8", "ws_1/4", "ws_1/2", "qd1_write", "stretch", "pause", "recovery", "trim_spare",
                     "trimmed"]
    ph = {p.name: p for p in TEST.phases(8 * 10**9, SHORT)}
    area = 8 * 10**9 // 2**20 * 2**20
    assert ph["stretch"].stop_bytes == pytest.approx(2 * area, abs=4096) and ph["stretch"].stop_seconds == 60
    assert ph["pause"].seconds == 5 and ph["settle"].seconds == 5 and ph["settle"].until_quiet
    assert ph["qd1_read"].queue_depth == 1 and ph["read_qd32"].queue_depth == 32
    assert ph["unmapped_qd1_read"].queue_depth == 1 and ph["unmapped_qd32_read"].queue_depth == 32
    assert ph["unmapped_qd1_read"].length == area and ph["unmapped_qd1_read"].stop_seconds == fp.UNMAPPED_S
    assert ph["ws_1/8"].length == area // 8 // 4096 * 4096
    # QD1 sequential reads of the fill's second half (its layout over the dies)
    q = ph["read_seq_qd1"]
    assert (q.pattern, q.queue_depth, q.read_pct, q.stop_seconds) == ("seq", 1, 100, fp.DEPTH_S)
    assert q.offset == area // 2 // 2**17 * 2**17 and q.offset + q.length == area
    # the last quarter trimmed, random writes over the rest: a quarter of the area or 300 s
    # (--seconds when shorter)
    keep = int(0.75 * area) // 4096 * 4096
    assert (ph["trim_spare"].kind, ph["trim_spare"].offset, ph["trim_spare"].length) == ("trim", keep, area - keep)
    t = ph["trimmed"]
    assert (t.pattern, t.queue_depth, t.offset, t.length) == ("rand", 32, 0, keep)
    assert t.stop_bytes == pytest.approx(0.25 * area, abs=4096) and t.stop_seconds == 60
    assert {p.name: p for p in TEST.phases(8 * 10**9, Options())}["trimmed"].stop_seconds == fp.TRIMMED_S
    # --interval 0: no idle phases at all
    assert not [p for p in TEST.phases(8 * 10**9, Options(interval=0)) if p.kind == "idle"]
    assert TEST.in_review is False and TEST.default_seconds == 1800


def test_metrics_of_a_small_drive(small):
    _, m = small
    assert m["slc_cache_share"] == pytest.approx(1 / 7.75, rel=0.1)  # 1 GB of 7.75 GB (area in GB of 1e9)
    assert m["peak_mbps"] > 3 * m["post_cache_mbps"]
    assert len(m["fill_mbps_by_share"]) == fp.FILL_BINS
    # a 1 GB cache is 13 % of the area: the head is all cached
    assert set(m["fill_head_mbps_by_share"]) == {"0.00625", "0.0125", "0.01875"}
    assert min(m["fill_head_mbps_by_share"].values()) == pytest.approx(m["cached_mbps"], rel=0.05)
    assert set(m["cache_write_head_mbps_by_share"]) == set(m["fill_head_mbps_by_share"])
    # page types: 2-3-2 TLC reads fall in two groups, lower/upper pages faster than middle ones
    assert m["qd1_read_p25_us"] < m["qd1_read_p75_us"]
    assert m["qd1_read_p10_us"] <= m["qd1_read_p50_us"] <= m["qd1_read_p90_us"] <= m["qd1_read_p99_9_us"]
    assert m["read_qd32_iops"] > 5 * 1e6 / m["qd1_read_mean_us"]  # parallelism of 8 dies x 2 planes
    assert set(m["qd1_read_mean_us_by_span"]) == {"1/8", "1/4", "1/2", "1"}
    assert m["qd1_write_iops"] > 0 and m["qd1_write_p50_us"] > 0
    # data in the SLC cache reads at the SLC read time, faster than the filled drive's TLC pages
    assert m["cache_qd1_read_mean_us"] < 0.8 * m["qd1_read_mean_us"]
    assert m["cache_seq_read_mbps"] > 0 and m["cache_qd32_read_iops"] > m["read_qd32_iops"]
    assert m["cache_rand_write_iops"] > 2 * m["steady_iops"]
    assert len(m["stretch_iops_by_share"]) == fp.STRETCH_BINS
    assert m["steady_iops"] > 0 and m["stretch_waf"] > 1
    assert len(m["recovery_iops_by_share"]) == fp.RECOVERY_BINS
    # the bursts' averages from their start: the bins' harmonic means (each bin's time is its
    # bytes over its rate), the first the first bin, the last the whole burst's
    for name in ("stretch", "recovery"):
        bins, avg = list(m[f"{name}_iops_by_share"].values()), m[f"{name}_avg_iops_by_share"]
        assert list(avg) == list(m[f"{name}_iops_by_share"])
        for k, v in enumerate(avg.values()):
            assert v == pytest.approx((k + 1) / sum(1 / b for b in bins[:k + 1]), rel=1e-9)
        assert min(bins) <= list(avg.values())[-1] <= max(bins)
    assert len(m["trimmed_iops_by_share"]) == fp.TRIMMED_BINS and m["trimmed_waf"] < m["stretch_waf"]


def test_the_figure_follows_every_random_write_phase(small, tmp_path):
    """The third panel: stretch, recovery and trimmed stretch one after another in drive
    writes, the pause and the trim marked where they fall."""
    from ssdlab.figures.fingerprint import fingerprint_png, print_of
    from ssdlab.figures.model import ReportPhase

    res, _ = small
    p = print_of("tlc", [ReportPhase.from_result(r.phase.name, r) for r in res])
    assert p is not None
    assert 0 < p.recovery_from < p.trimmed_from < p.burst_dw[-1]
    assert (np.diff(p.burst_dw) >= 0).all()
    after = p.burst_iops[p.burst_dw > p.trimmed_from]
    assert after.size and after[-1] > p.burst_iops[p.burst_dw <= p.recovery_from][-1]  # trimmed: faster
    fingerprint_png([p], tmp_path, "fp")
    assert any(f.suffix == ".png" for f in tmp_path.iterdir())


def test_metrics_do_not_depend_on_the_drive_size():
    """The same dies with twice the blocks, and the user capacity and cache grown with the
    blocks that hold data (all but the GC threshold and two open blocks per die, which do
    not grow): every rate, latency and share stays (within a few %)."""
    grow = (92 - 4) / (46 - 4)
    big = [f"user_capacity_gb={8 * grow:.4f}", "nand.blocks_per_plane=92", f"slc.dynamic_max_gb={grow:.4f}"]
    opts = Options(seconds=10_000, interval=5)
    (_, m_s), (_, m_b) = run(SMALL, opts), run(big, opts)
    # the cache's end: to about a segment's fold on drives this small
    assert m_b["slc_cache_share"] == pytest.approx(m_s["slc_cache_share"], rel=0.08)
    for key in ("cached_mbps", "post_cache_mbps", "qd1_read_mean_us", "read_qd32_iops",
                "qd1_write_mean_us", "steady_iops", "trimmed_gain"):
        assert m_b[key] == pytest.approx(m_s[key], rel=0.05), key


def test_trimmed_stretch_tells_spare_area_from_program_time_and_gc():
    """The stretch's steady level moves with spare area, program time and GC pace alike;
    its gain after a quarter of the area is trimmed falls steeply with the spare area (the
    victims were less full to begin with) and barely moves with the others."""
    opts = Options(seconds=60, interval=5)
    _, base = run(SMALL, opts)
    _, spare = run([*SMALL, "nand.blocks_per_plane=50"], opts)  # 15 % -> 26 % spare area
    _, slow = run([*SMALL, "nand.native.prog_us=3000"], opts)  # 1.5 x the program time
    _, pace = run([*SMALL, "ftl.gc_pace=3"], opts)
    assert spare["steady_iops"] > 1.5 * base["steady_iops"] and slow["steady_iops"] < 0.8 * base["steady_iops"]
    assert spare["trimmed_gain"] < 0.5 * base["trimmed_gain"]
    assert slow["trimmed_gain"] == pytest.approx(base["trimmed_gain"], rel=0.1)
    assert pace["trimmed_gain"] == pytest.approx(base["trimmed_gain"], rel=0.3)


def test_reads_of_the_purged_drive_show_the_host_path_and_controller_not_the_nand():
    """No LBA is mapped after the purge: a QD1 read's latency is the host's round trip, the
    command's firmware time and the link, and QD32 is bounded by the firmware's time per
    command; the NAND's read time moves neither (the filled drive's reads it moves)."""
    opts = Options(seconds=5, interval=1)
    _, base = run(SMALL, opts)
    _, host = run([*SMALL, "host.host_latency_us=50"], opts)
    _, fw = run([*SMALL, "host.command_overhead_us=30"], opts)
    _, nand = run([*SMALL, "nand.native.read_us=150", "nand.slc.read_us=90"], opts)
    assert base["unmapped_qd1_read_mean_us"] < 0.5 * base["qd1_read_mean_us"]
    assert base["unmapped_qd32_read_iops"] > 3 * base["read_qd32_iops"]
    # tlc-256: a host round trip of 8 us, 1.5 us of firmware per command
    assert host["unmapped_qd1_read_mean_us"] - base["unmapped_qd1_read_mean_us"] == pytest.approx(50 - 8, rel=0.02)
    assert fw["unmapped_qd32_read_iops"] == pytest.approx(1e6 / 30, rel=0.05)
    assert fw["unmapped_qd1_read_mean_us"] - base["unmapped_qd1_read_mean_us"] == pytest.approx(30 - 1.5, rel=0.02)
    for key in ("unmapped_qd1_read_mean_us", "unmapped_qd32_read_iops"):
        assert nand[key] == pytest.approx(base[key], rel=0.01), key
    assert nand["qd1_read_mean_us"] > 1.5 * base["qd1_read_mean_us"]


def test_hmb_drive_shows_its_mapping_cache_in_the_span_sweep():
    """A DRAM-less drive whose cache covers 1 GB reads a small span faster than the whole
    area; the DRAM drive reads every span alike."""
    _, dram = run(SMALL, Options(seconds=5, interval=1))
    _, hmb = run([*SMALL, "mapping.kind=hmb", "mapping.cache_mib=1"], Options(seconds=5, interval=1))
    d, h = dram["qd1_read_mean_us_by_span"], hmb["qd1_read_mean_us_by_span"]
    assert d["1"] == pytest.approx(d["1/8"], rel=0.03)
    assert h["1/8"] == pytest.approx(d["1/8"], rel=0.03)  # 1/8 of 7.75 GB: inside the cache's 1 GB
    assert h["1"] > 1.3 * h["1/8"] and h["1/8"] < h["1/4"] < h["1/2"] < h["1"]


def through_fill(sets, plan=None, profile="mx100-256"):
    """The battery through the fill on a full-size drive (a second or two of CPU) and its
    metrics (the cached region's and the fill's); `plan(area)`: a replay's plan."""
    t = SimTarget(load_text(profile), sets)
    area = area_bytes(t.identify().capacity, Options())
    walk = fp.plan_phases(area, plan(area) if plan else fp.default_plan(area, Options()))
    res = [t.run(next(walk))]
    while res[-1].phase.name != "fill":
        res.append(t.run(walk.send(res[-1])))
    return res, TEST.analyze(res, Options())


def stored(res):
    """Phases as the store gives them to `plan_of`."""
    return [{"name": r.phase.name, "kind": r.phase.kind, "spec": r.phase.model_dump(), "totals": r.totals}
            for r in res]


HEAD = "fill_head_mbps_by_share"


def test_the_fill_head_shows_a_cache_the_fill_curve_averages_away():
    """An MLC drive without an SLC cache against the same drive with 0.94 GB of one (0.4 % of
    its 256 GB): 1.6 GB, the head's first share (1/160), at 416 MB/s against 328, over twice
    the figure's tolerance apart; the 2.5 % points (cache and 5.5 GB at 328 MB/s) and the 5 %
    bins read the two drives within their tolerances. A cache open only while at most 1.5 % of
    the LBAs are mapped is gone by the fill's start: the cached region's write, the battery's
    first, shows it as the fill shows the other."""
    from ssdlab.fit.evidence import tolerance

    _, none = through_fill([])
    _, cached = through_fill(["slc.dynamic_max_gb=0.94"])
    _, gated = through_fill(["slc.dynamic_max_gb=0.94", "slc.dynamic_mapped_max_pct=1.5"])
    assert list(cached[HEAD]) == ["0.00625", "0.0125", "0.01875"] and fp.HEAD_SHARES[0] == 1 / fp.TRIAL_SEGMENTS
    assert cached[HEAD]["0.00625"] > (1 + 2 * tolerance(HEAD)) * none[HEAD]["0.00625"]
    assert cached[HEAD]["0.0125"] > (1 + tolerance(HEAD)) * none[HEAD]["0.0125"]
    # the drive without: its table checkpoints' stalls do not count, the head reads its native speed
    assert max(none[HEAD].values()) == pytest.approx(min(none[HEAD].values()), rel=0.01)
    for key in ("fill_avg_mbps_by_share", "fill_mbps_by_share"):
        for k, v in none[key].items():
            assert cached[key][k] == pytest.approx(v, rel=tolerance(key)), (key, k)
    first = "cache_write_head_mbps_by_share"
    assert list(gated[first]) == list(gated[HEAD])
    for k, v in none[HEAD].items():
        assert gated[HEAD][k] == pytest.approx(v, rel=0.01), k
        assert none[first][k] == pytest.approx(v, rel=0.01), k
        assert gated[first][k] == pytest.approx(cached[first][k], rel=0.01), k
    assert gated[first]["0.00625"] > (1 + 2 * tolerance(first)) * none[first]["0.00625"]


def test_a_trials_fill_resolves_the_caches_end_to_the_runs_share():
    """A trial replays a run in a 160th of its area a segment, as the run was measured: on the
    closed loop's one-die trial drive (about 5 GB) a 64 MiB floor left some 75 segments, so the
    trial read the cache's share in steps of about twice the figure's tolerance (one of the
    run's segments over the share): a loss of plateaus, and a twin with a cache 10 % large."""
    run_area, trial_area = 16 * 10**9 // 2**20 * 2**20, 5 * 10**9 // 2**20 * 2**20
    plan = fp.default_plan(run_area, SHORT).scaled(0.31)

    def fill_segment(area, pl):
        return next(q.segment_bytes for q in fp.plan_phases(area, pl) if q.name == "fill")

    run_step = fill_segment(run_area, fp.default_plan(run_area, SHORT)) / run_area
    trial_step = fill_segment(trial_area, plan) / trial_area
    assert trial_area // fill_segment(trial_area, plan) == fp.TRIAL_SEGMENTS
    assert trial_step == pytest.approx(run_step, rel=0.01)


def test_the_cached_writes_head_is_measured_to_its_last_share_on_a_trials_small_drive():
    """A fit trial's plan (its segments a 160th of the area, at least MIN_SEGMENT) on a 2 GB
    area: a segment is 16.8 MB, 0.84 % of the area, so the cached region (2 %) holds two whole
    ones and the recorder keeps no partial third: the write goes on to the end of the third,
    and the head's last share (1.875 %) is measured, not extrapolated past the write's end
    (which read 44 % fast on a closed loop's trial drive)."""
    opts = replace(SHORT, spare=75.0)  # the area: a quarter of the 8 GB drive
    t = SimTarget(load_text("tlc-256"), SMALL)
    area = area_bytes(t.identify().capacity, opts)
    plan = fp.default_plan(area, opts).scaled(0.5)  # a trial on a drive of fewer blocks
    for p in fp.plan_phases(area, plan):
        r = t.run(p)
        if p.name == "cache_write":
            break
    assert p.segment_bytes == fp.MIN_SEGMENT and fp.CACHE_SHARE * area < 3 * fp.MIN_SEGMENT
    assert len(r.segments["gb"]) == 3 and p.stop_bytes == 3 * fp.MIN_SEGMENT
    head = fp._head(r, float(area))
    assert head is not None and list(head) == [f"{x:g}" for x in fp.HEAD_SHARES]
    # all of it in the SLC cache: one speed, the write buffer's head start aside (4 MiB, a
    # quarter of a segment here: the average to two segments reads 6 % above that to three)
    assert head["0.01875"] < head["0.0125"] < head["0.00625"], head
    assert head["0.01875"] == pytest.approx(head["0.0125"], rel=0.08), head
    # a trial at the run's own size writes the run's own segments
    run = fp.default_plan(area, opts)

    def segments(pl):
        return [(q.name, q.segment_bytes, q.stop_bytes) for q in fp.plan_phases(area, pl) if q.name in ("cache_write", "fill")]

    assert segments(run.scaled(1.0)) == segments(run) and segments(plan) != segments(run)


def test_a_replay_starts_the_fill_with_the_cache_as_the_run_left_it():
    """On a 256 GB drive the cached region's random writes stop at their 3 s cap, a fifth of the
    region; a replay writes the run's share of the area, so its fill meets the SLC cache as the
    run's did: the head reads as the run's on the same drive, and on a fit trial's drive (a
    fifth of the blocks) within its tolerance. Written over the whole region, the random writes
    leave the cache holding data spread over it, which the fill frees only slowly: the cache
    barely shows."""
    import tomllib

    from ssdlab.fit.evidence import tolerance
    from ssdlab.fit.search import TRIAL_BLOCKS
    from ssdlab.fit.space import scaled

    sets = ["slc.dynamic_max_gb=0.94"]
    run_, m = through_fill(sets)
    area = area_bytes(SimTarget(load_text("mx100-256"), sets).identify().capacity, Options())
    plan = fp.plan_of(stored(run_), area)
    written = {r.phase.name: r.totals["write_bytes"] for r in run_}
    assert plan.cache_rand_write_share == pytest.approx(written["cache_rand_write"] / area)
    assert plan.cache_rand_write_share < 0.5 * fp.CACHE_SHARE  # the cap stopped it
    assert plan.cache_qd1_write_share == pytest.approx(written["cache_qd1_write"] / area)
    _, same = through_fill(sets, lambda a: plan.scaled(1.0))
    extra, f = scaled(sets, tomllib.loads(load_text("mx100-256")), TRIAL_BLOCKS)
    _, trial = through_fill(sets + extra, lambda a: plan.scaled(f))
    _, whole = through_fill(sets, lambda a: replace(plan, cache_qd1_write_share=None,
                                                    cache_rand_write_share=None).scaled(1.0))
    for k, v in m[HEAD].items():
        assert same[HEAD][k] == pytest.approx(v, rel=0.02), k
        assert trial[HEAD][k] == pytest.approx(v, rel=tolerance(HEAD)), k
    assert whole[HEAD]["0.00625"] < m[HEAD]["0.00625"] / (1 + tolerance(HEAD))


def test_plan_of_a_stored_run_and_its_scaled_copy(tmp_path):
    db = tmp_path / "r.sqlite"
    r = cli("run", "fingerprint", "--drive", "sim:tlc-256", *set_flags(SMALL), "--seconds", "30",
            "--interval", "5", "--db", str(db), "--json", check=True)
    doc = json.loads(r.stdout)
    store = Store(db)
    rd = store.run(doc["run_id"])["drives"][0]
    phases = store.phases(rd["id"], with_data=False)
    area = int(rd["identity"]["capacity"]) // 2**20 * 2**20
    plan = fp.plan_of(phases, area)
    written = {p["name"]: p["totals"]["write_bytes"] for p in phases if p["kind"] == "io"}
    assert plan.spans == 3 and plan.pause_s == 5
    assert plan.stretch_share == pytest.approx(written["stretch"] / area)
    # the same battery at half the size: the same shares of its area, the pause halved,
    # no seconds caps (a scaled copy follows the bytes)
    listed = list(fp.plan_phases(area // 2, plan.scaled(0.5)))
    half = {p.name: p for p in listed}
    rounds = [p for p in listed if p.name == "stretch"]  # results unknown: every round of the stretch
    assert len(rounds) == fp.STEADY_ROUNDS
    assert sum(p.stop_bytes for p in rounds) == pytest.approx(written["stretch"] / 2, rel=1e-3)
    assert half["stretch"].stop_seconds is None and half["pause"].seconds == 2.5
    assert [p.name for p in fp.plan_phases(area, plan)] == [p["name"] for p in phases]
    assert plan.trim_share == pytest.approx(0.25, abs=1e-6)
    assert plan.trimmed_share == pytest.approx(written["trimmed"] / area)
    assert half["trimmed"].stop_bytes == pytest.approx(written["trimmed"] / 2, rel=1e-3)
    assert half["trim_spare"].length == pytest.approx(area // 2 * 0.25, rel=1e-3)
    # the cached region's writes: the run's shares of the area (a run stored before them: the battery's own)
    assert plan.cache_rand_write_share == pytest.approx(written["cache_rand_write"] / area)
    # at half the size half the bytes, as many modulo WRITE_ALIGN as the run's (where the fill's
    # pages land hangs on what they leave half done); at the run's own size the run's bytes
    own = {p.name: p for p in fp.plan_phases(area, plan.scaled(1.0))}
    for name in ("cache_write", "cache_qd1_write", "cache_rand_write"):
        bs = own[name].block_size  # whole requests are written
        assert own[name].stop_bytes // bs * bs == written[name], name
        assert (half[name].stop_bytes // bs * bs - written[name]) % fp.WRITE_ALIGN == 0, name
    for name in ("cache_qd1_write", "cache_rand_write"):
        assert abs(half[name].stop_bytes - written[name] / 2) <= fp.WRITE_ALIGN / 2 + 4096, name
    # the sequential reads: the run's time caps read a share of the area; a copy reads that share
    read = {p["name"]: p["totals"]["read_bytes"] for p in phases if p["kind"] == "io"}
    for name in ("read_seq", "read_seq_qd1"):
        assert half[name].stop_seconds is None
        assert half[name].stop_bytes == pytest.approx(read[name] / 2, rel=1e-2), name
    # a run of the battery before the trimmed stretch replays without it
    old = fp.plan_of([p for p in phases if p["name"] not in ("trim_spare", "trimmed")], area)
    assert old.trim_share == 0 and [p.name for p in fp.plan_phases(area, old)][-1] == "recovery"
    # and one before the reads of the purged drive, without them
    old = fp.plan_of([p for p in phases if not p["name"].startswith("unmapped_")], area)
    assert plan.unmapped and not old.unmapped
    assert [p.name for p in fp.plan_phases(area, old)][:2] == ["purge", "cache_write"]
    # and one before the QD1 sequential reads, without them
    old = fp.plan_of([p for p in phases if p["name"] != "read_seq_qd1"], area)
    assert plan.seq_qd1 and not old.seq_qd1 and "read_seq_qd1" not in [p.name for p in fp.plan_phases(area, old)]
    store.close()


def test_qd1_sequential_reads_show_how_a_reclaim_laid_out_the_fill():
    """An SLC reclaim moving cached data to native blocks in small batches while the fill
    writes (50 MB each 65 MB, as a closed-loop twin of a drive without one had grown: 491
    against 705 MB/s here) interleaves its moves with the host's pages: the fill's consecutive pages land on
    fewer dies, and a QD1 128 KiB read waits for them one after another. Reads at depth keep
    every die busy anyway and do not see it."""
    from ssdlab.fit.evidence import tolerance

    reclaim = ["slc.reclaim_gb=0.05", "slc.reclaim_interval_gb=0.065", "slc.reclaim_pace=0.05",
               "slc.reclaim_min_free_pct=2"]
    _, plain = run(SMALL, profile="bg4-256")
    _, moved = run([*SMALL, *reclaim], profile="bg4-256")
    key = "read_seq_qd1_mbps"
    assert moved[key] < (1 - 3 * tolerance(key)) * plain[key], (moved[key], plain[key])
    assert moved["read_seq_mbps"] == pytest.approx(plain["read_seq_mbps"], rel=tolerance("read_seq_mbps"))


def test_a_trials_stretch_stops_at_steady_state_and_reads_as_the_whole_stretch():
    """A fit's trial (a scaled plan) runs the stretch in rounds and stops once a window of
    them is steady, not before STEADY_FIRST; the steady window's seconds stand for the rest:
    its figures, and the gain after it, read as the whole stretch's."""
    t = SimTarget(load_text("tlc-256"), SMALL)
    cap = t.identify().capacity
    base = replace(fp.default_plan(area_bytes(cap, Options()), Options(interval=5)), stretch_share=1.0)

    def fingerprint(plan):
        res = walk_phases(TEST, SimTarget(load_text("tlc-256"), SMALL), cap, Options(own=plan))
        return sum(r.phase.name == "stretch" for r in res), TEST.analyze(res, Options(own=plan))

    n_whole, whole = fingerprint(base.scaled(1.0, until_steady=False))
    n, stopped = fingerprint(base.scaled(1.0))
    assert n_whole == 1 and fp.STEADY_FIRST <= n < fp.STEADY_ROUNDS
    assert stopped["steady_iops"] == pytest.approx(whole["steady_iops"], rel=0.02)
    for k, v in whole["stretch_iops_by_share"].items():
        assert stopped["stretch_iops_by_share"][k] == pytest.approx(v, rel=0.1), k
    assert stopped["stretch_p1_low_iops"] == pytest.approx(whole["stretch_p1_low_iops"], rel=0.1)
    assert stopped["trimmed_gain"] == pytest.approx(whole["trimmed_gain"], rel=0.03)
    # the rule itself: flat rounds are steady, a level still falling by more than the excursion is not
    flat = [_round(100.0 + d) for d in (0, 1, -1, 0.5, 0)]
    falling = [_round(100.0 - 1.5 * k) for k in range(5)]
    assert fp.steady(flat) and not fp.steady(falling) and not fp.steady(flat[:4])


def _round(mbps: float):
    """A round of ten one-second samples at `mbps` MB/s."""
    from ssdlab.phase import PhaseResult, rand_io

    t = np.arange(1.0, 11.0)
    return PhaseResult(rand_io("stretch", read_pct=0, offset=0, length=2**30, stop_bytes=2**20),
                       {"t_s": t, "iops": np.full(10, mbps * 1e6 / 4096), "host_write_bytes": np.full(10, mbps * 1e6)},
                       {}, {}, {})


def test_a_twin_is_not_held_to_a_median_between_two_page_types():
    """The stored QD1 reads of an MLC drive, half lower and half upper pages: the median's
    tolerance (ssdlab fit) spans both modes, the other quantiles keep their own."""
    hist = {"edges_us": [124.928, 172.032], "counts": [34_100, 34_200]}
    phases = [{"name": "qd1_read", "histogram": hist, "latency": {"hist_edges": "upper"}, "segments": {}}]
    steps = fp.resolution_of(phases, {})
    assert 1 - steps["qd1_read_p50_us"] < 124.928 / 172.032
    assert steps["qd1_read_p25_us"] < 0.02 and steps["qd1_read_p90_us"] < 0.03
    assert "qd1_write_p50_us" not in steps  # no such phase stored


def _stretch(rates: list[float]) -> dict:
    """A stored stretch of one-second samples, each rate for 2 M writes (a round's worth of
    the 25: the rounds are shares of the bytes)."""
    iops = np.concatenate([np.full(int(2e6 / r), float(r)) for r in rates])
    return {"series": {"t_s": np.arange(1, iops.size + 1, dtype=np.float64), "iops": iops}}


def test_a_replay_stops_at_steady_state_only_where_the_run_it_replays_did():
    """A QLC drive's stretch holds a plateau (its SLC cache absorbs the writes) for 0.85 of its
    bytes before GC sets in and never settles: a trial that stopped on the plateau would
    report the plateau as the drive's steady state. A run that settled early lets the trial
    stop as early as its own rounds settle."""
    plateau = _stretch([33_000] * 21 + [23_000, 8_000, 6_500, 6_800])
    assert fp.steady_share(plateau) == 1.0
    settled = _stretch([50_000, 30_000] + [10_000] * 23)
    assert fp.steady_share(settled) == pytest.approx(2 / fp.STEADY_ROUNDS)
    assert fp.steady_share(None) == 0.0
    # flat rounds: a plan stops at STEADY_FIRST, unless the run it replays settled later
    def rounds(steady_after: float) -> int:
        gen = fp.plan_phases(64 * 2**30, replace(fp.Plan(spans=1), until_steady=True, caps=False,
                                                 steady_after=steady_after))
        n, sent = 0, None
        try:
            while True:
                p = gen.send(sent)
                n += p.name == "stretch"
                sent = _round(100.0) if p.name == "stretch" else None
        except StopIteration:
            return n

    assert rounds(0.0) == fp.STEADY_FIRST and rounds(1.0) == fp.STEADY_ROUNDS
    assert rounds(0.84) == 0.84 * fp.STEADY_ROUNDS + fp.STEADY_WINDOW - 1  # its window ends at 0.84 + 5 rounds


def test_a_bursts_average_moves_smoothly_where_its_bin_jumps():
    """A burst of 30 K IOPS whose end moves through a bin: the bin jumps by the burst's share
    in it, the average from the start by that over the bins so far; a bin without a rate ends
    the averages."""
    early = fp._cumulative([30000.0] * 8 + [10000.0, 7000.0])
    late = fp._cumulative([30000.0] * 8 + [14000.0, 7000.0])
    assert late[8] / early[8] - 1 < 0.1 < 14000 / 10000 - 1
    assert late[9] / early[9] - 1 < 0.06
    assert fp._cumulative([5.0, None, 4.0]) == [5.0, None, None]


def test_the_stretch_level_is_known_to_its_last_tenths_spread():
    """A plateau that ends in the stretch's ninth tenth: the level (the mean of the last two)
    and the gains over it are known to half their difference over their mean; a steady end
    leaves them their own tolerance."""
    ending = fp.resolution_of([], {"stretch_iops_by_share": {"0.8": 33000.0, "0.9": 9800.0, "1": 6800.0}})
    assert ending["steady_iops"] == pytest.approx(3000 / 16600)
    assert ending["recovery_gain"] == ending["trimmed_gain"] == ending["steady_iops"]
    steady = fp.resolution_of([], {"stretch_iops_by_share": {"0.9": 6810.0, "1": 6800.0}})
    assert steady["steady_iops"] < 0.001
