"""fio's meaning, option by option, in the simulator's own workload: for size-bounded jobs
the I/O counts and bytes per direction are exactly what fio's null engine does with the same
job; random mixes and block-size splits match in proportion; rates hold within 1 %; a
time-based job lasts its runtime in virtual time; numjobs=4 iodepth=8 loads the drive like
one job at 32; zipf and zoned distributions hit the blocks in fio's proportions; a
steady-state rule stops the job; reads of never-written blocks are counted."""

from __future__ import annotations

import numpy as np
import pytest

from fiojobs import counts, fio_directions, fio_null, runs, sim, sim_directions, sim_stream
from ssdlab.phase import purge, seq_write

EXACT = {
    "seq-write": "[a]\nrw=write\nbs=128k\nsize=64m\n",
    "rand-read": "[a]\nrw=randread\nbs=4k\nsize=16m\n",
    "rand-runs": "[a]\nrw=randread:4\nbs=4k\nsize=1m\n",
    "io_size": "[a]\nrw=randwrite\nbs=4k\nsize=16m\nio_size=64m\n",
    "loops": "[a]\nrw=read\nbs=64k\nsize=8m\nloops=3\n",
    "number_ios": "[a]\nrw=randread\nbs=8k\nsize=16m\nnumber_ios=1000\n",
    "numjobs": "[a]\nrw=write\nbs=4k\nsize=4m\nnumjobs=4\noffset_increment=4m\n",
    "trim": "[a]\nrw=trim\nbs=64k\nsize=8m\n",
    "randtrim": "[a]\nrw=randtrim\nbs=4k\nsize=8m\n",
    "trimwrite": "[a]\nrw=trimwrite\nbs=16k\nsize=8m\n",
    "offset": "[a]\nrw=read\nbs=4k\noffset=1m\nsize=2m\n",
    "two-jobs": "[a]\nrw=read\nbs=4k\nsize=1m\n[b]\nrw=write\nbs=8k\nsize=2m\n",
    "stonewall": "[a]\nrw=write\nbs=4k\nsize=1m\n[b]\nstonewall\nrw=read\nbs=4k\nsize=1m\n",
    "zoned": "[a]\nrw=randread\nbs=4k\nsize=64m\nrandom_distribution=zoned:60/10:30/20:10/70\nio_size=16m\n",
    "zipf": "[a]\nrw=randread\nbs=4k\nsize=64m\nrandom_distribution=zipf:1.2\nio_size=16m\n",
    "strided": "[a]\nrw=read\nbs=4k\nsize=16m\nzonemode=strided\nzonesize=64k\nzoneskip=192k\n",
    "global-name": "[global]\nname=all\nbs=4k\nsize=1m\n[a]\nrw=read\n[b]\nrw=write\n",
    "filesize": "[a]\nrw=randread\nbs=4k\nfilesize=1m\nsize=4m\n",  # size clamped to the file
    "filesize-io": "[a]\nrw=read\nbs=4k\nfilesize=4m\nsize=1m\n",
    # a blank bs value is the default, a value ended by a comma stops there (fio's HOWTO)
    "bs-blank": "[a]\nrw=read\nbs=,8k\nsize=1m\n[b]\nrw=write\nbs=8k,\nsize=1m\n"
                "[c]\nrw=write\nbs=16k,,8k\nsize=1m\n",
}


@pytest.mark.parametrize("name", EXACT)
def test_size_bounded_jobs_issue_what_fio_issues(tmp_path, name):
    body = EXACT[name]
    f = fio_null(tmp_path, body)
    s = sim(tmp_path, body)
    assert len(f["jobs"]) == len(s["jobs"])
    for fj, sj in zip(f["jobs"], s["jobs"]):
        assert counts(sj, False) == counts(fj, True), fj["jobname"]


MIXES = {
    "randrw-70": ("[a]\nrw=randrw\nrwmixread=70\nbs=4k\nsize=64m\n", None),
    "rw-rwmixwrite": ("[a]\nrw=rw\nrwmixwrite=25\nbs=4k\nsize=64m\n", None),
    # mixed block sizes without the random map (with it, fio ends such a job once no free
    # run of the larger size is left, before its size: docs/methodology-fio.md)
    "bs-per-direction": ("[a]\nrw=randrw\nbs=4k,64k\nsize=256m\nnorandommap\n", None),
    "bssplit": ("[a]\nrw=randwrite\nbssplit=4k/50:16k/30:64k/20\nsize=256m\nnorandommap\n", 0.03),
    "bsrange": ("[a]\nrw=randread\nbsrange=4k-16k\nsize=256m\nnorandommap\n", 0.03),
}


@pytest.mark.parametrize("name", MIXES)
def test_mixes_and_block_size_splits_in_fios_proportions(tmp_path, name):
    body, tol = MIXES[name]
    (fj,), (sj,) = fio_null(tmp_path, body)["jobs"], sim(tmp_path, body)["jobs"]
    f, s = counts(fj, True), counts(sj, False)
    total_f, total_s = sum(b for _, b in f), sum(b for _, b in s)
    assert abs(total_s - total_f) <= 64 * 1024  # the same bytes, give or take the last block
    for (fn, fb), (sn, sb) in zip(f, s):
        assert sb / total_s == pytest.approx(fb / total_f, abs=0.02)  # direction shares
        if fn and tol:  # mean block size: the split's mix
            assert sb / sn == pytest.approx(fb / fn, rel=tol)


def test_bssplit_mix_is_the_weights(tmp_path):
    # without the random map (which cuts late I/Os short: test_parity.py), the split's weights
    (j,) = sim(tmp_path, "[a]\nrw=randwrite\nbssplit=4k/50:16k/30:64k/20\nsize=512m\nnorandommap\n")["jobs"]
    n = dict(j["write"]["bs"])
    tot = sum(n.values())
    assert n[4096] / tot == pytest.approx(0.5, abs=0.01)
    assert n[16384] / tot == pytest.approx(0.3, abs=0.01)
    assert n[65536] / tot == pytest.approx(0.2, abs=0.01)


@pytest.mark.parametrize("rate,key", [("rate=50m", "bw"), ("rate_iops=3000", "iops"),
                                      ("rate=20m\nrate_process=poisson", "bw")])
def test_rate_limited_jobs_run_at_their_rate(tmp_path, rate, key):
    (j,) = sim(tmp_path, f"[a]\nrw=randwrite\nbs=4k\niodepth=16\ntime_based\nruntime=5\n{rate}\n")["jobs"]
    secs = j["end_s"] - j["start_s"]
    assert secs == pytest.approx(5.0, abs=1e-6)
    if key == "bw":
        want = 50 * 2**20 if "50m" in rate else 20 * 2**20
        assert j["write"]["bytes"] / secs == pytest.approx(want, rel=0.01)
    else:
        assert j["write"]["ios"] / secs == pytest.approx(3000, rel=0.01)


def test_time_based_lasts_runtime_in_virtual_time(tmp_path):
    r = sim(tmp_path, "[a]\nrw=read\nbs=128k\nsize=1m\ntime_based\nruntime=3\nramp_time=1\nstartdelay=2\n")
    (j,) = r["jobs"]
    assert j["start_s"] == pytest.approx(3.0) and j["end_s"] - j["start_s"] == pytest.approx(3.0)
    assert j["read"]["bytes"] > 100 * 2**20  # a 1 MiB region read over and over
    assert r["totals"]["duration_s"] == pytest.approx(6.0, abs=0.01)
    # runtime without time_based: whichever comes first
    (j,) = sim(tmp_path, "[a]\nrw=read\nbs=4k\nsize=4g\nruntime=1\n")["jobs"]
    assert j["end_s"] - j["start_s"] == pytest.approx(1.0, abs=0.01) and j["read"]["bytes"] < 4 * 2**30
    # time_based=0 is not time-based: the job ends with its size
    (j,) = sim(tmp_path, "[a]\nrw=read\nbs=4k\nsize=1m\ntime_based=0\nruntime=60\n")["jobs"]
    assert j["read"]["bytes"] == 2**20 and j["end_s"] < 1


def test_a_start_delay_is_idle_time_in_which_the_slc_cache_folds(tmp_path):
    whole = 8 * 10**9 // 4096 * 4096  # SMALL's user capacity
    fill = [purge(), seq_write("fill", length=whole, stop_bytes=whole)]
    now, later = (sim(tmp_path, f"[a]\nrw=randread\nbs=4k\nsize=64m\n{d}", prelude=fill)["jobs"][0]["read"]["lat"]
                  for d in ("", "startdelay=600\n"))
    # right after the fill the first blocks written are still in the SLC cache: one read time
    assert now["p90_us"] == now["p50_us"]
    # ten minutes with no command fold them to TLC, as an idle phase does: slower reads,
    # spread over the page types (2-3-2: lower and upper pages fast, middle pages slow)
    assert later["p50_us"] > 1.2 * now["p50_us"] and later["p90_us"] > 1.2 * later["p50_us"]


def test_thinktime_spaces_the_ios(tmp_path):
    (j,) = sim(tmp_path, "[a]\nrw=read\nbs=4k\nnumber_ios=100\nthinktime=10ms\n")["jobs"]
    assert j["end_s"] - j["start_s"] == pytest.approx(99 * 0.010, rel=0.02)
    (j,) = sim(tmp_path, "[a]\nrw=read\nbs=4k\nnumber_ios=100\nthinktime=10ms\nthinktime_blocks=10\n")["jobs"]
    assert j["end_s"] - j["start_s"] == pytest.approx(9 * 0.010, rel=0.05)


def test_numjobs_4_at_depth_8_loads_like_one_job_at_32(tmp_path):
    fill = "[global]\nioengine=libaio\n[f]\nrw=write\nbs=128k\nsize=2g\niodepth=32\n[r]\nstonewall\nrw=randread\nbs=4k\nsize=2g\nnumber_ios=50000\n"
    one = sim(tmp_path, fill + "iodepth=32\n")
    four = sim(tmp_path, fill.replace("number_ios=50000", "number_ios=12500") + "iodepth=8\nnumjobs=4\n")
    def iops(r):
        return sum(j["read"]["ios"] for j in r["jobs"]) / max(j["end_s"] - j["start_s"] for j in r["jobs"][1:])
    assert iops(four) == pytest.approx(iops(one), rel=0.05)
    qd1 = sim(tmp_path, fill + "iodepth=1\n")
    assert iops(one) > 4 * iops(qd1)  # the depth is the job's


def _distinct_blocks(offsets: np.ndarray) -> int:
    return len(np.unique(offsets))


def _fio_offsets(tmp_path, body) -> np.ndarray:
    fio_null(tmp_path, body, iolog=True)
    rows = [ln.split() for ln in (tmp_path / "null.iolog").read_text().splitlines()]
    return np.array([int(r[3]) for r in rows if len(r) >= 5 and r[2] in ("read", "write")])


@pytest.mark.parametrize("dist", ["zipf:1.2", "zipf:0.8", "pareto:0.3", "normal:10", "normal:0"])
@pytest.mark.parametrize("randommap", ["", "norandommap\n"])
def test_skewed_distributions_touch_as_many_blocks_as_fios(tmp_path, dist, randommap):
    """The share of distinct blocks a skewed job touches (its hot set): written by the job,
    then counted by a whole-region read as the blocks that were written. With fio's random
    map or not (fio keeps no random map for these distributions)."""
    blocks, n = 16384, 12000
    body = (f"[a]\nrw=randwrite\nbs=4k\nsize={blocks * 4}k\nrandom_distribution={dist}\n"
            f"number_ios={n}\n{randommap}")
    want = _distinct_blocks(_fio_offsets(tmp_path, body))
    r = sim(tmp_path, body + f"[b]\nstonewall\nrw=read\nbs=4k\nsize={blocks * 4}k\n")
    written = blocks - r["jobs"][1]["read"]["unwritten_ios"]
    assert written == pytest.approx(want, rel=0.05)
    assert written < 0.8 * n  # skewed: far from a block per I/O


def test_zoned_distribution_hits_each_zone_in_its_share(tmp_path):
    """zoned:60/10:40/90: 60 % of the reads in the first 10 % of the region, written
    beforehand; the rest in never-written blocks (counted as such)."""
    body = ("[w]\nrw=write\nbs=128k\nsize=100m\n"
            "[r]\nstonewall\nrw=randread\nbs=4k\nsize=1000m\nnumber_ios=20000\n"
            "random_distribution=zoned:60/10:40/90\n")
    (_, j) = sim(tmp_path, body)["jobs"]
    assert j["read"]["unwritten_ios"] / j["read"]["ios"] == pytest.approx(0.4, abs=0.015)
    abs_body = body.replace("zoned:60/10:40/90", "zoned_abs:75/100m:25/900m")
    (_, j) = sim(tmp_path, abs_body)["jobs"]
    assert j["read"]["unwritten_ios"] / j["read"]["ios"] == pytest.approx(0.25, abs=0.015)


def test_reads_of_never_written_blocks_are_counted(tmp_path):
    r = sim(tmp_path, "[a]\nrw=read\nbs=4k\nsize=4m\n")
    assert r["jobs"][0]["read"]["unwritten_ios"] == 1024 and r["totals"]["unwritten_read_ios"] == 1024
    r = sim(tmp_path, "[w]\nrw=write\nbs=4k\nsize=4m\n[r]\nstonewall\nrw=read\nbs=4k\nsize=4m\n")
    assert r["jobs"][1]["read"]["unwritten_ios"] == 0


def test_steady_state_stops_the_job(tmp_path):
    body = "[a]\nrw=randread\nbs=4k\niodepth=4\ntime_based\nruntime=60\nss=iops:5%\nss_dur=3\n"
    (j,) = sim(tmp_path, body)["jobs"]
    assert j["ss_attained"] and j["end_s"] - j["start_s"] == pytest.approx(3, abs=0.01)
    (j,) = sim(tmp_path, body + "ss_ramp=20\n")["jobs"]  # the rule is judged after the ramp
    assert j["ss_attained"] and j["end_s"] - j["start_s"] == pytest.approx(23, abs=0.01)
    (j,) = sim(tmp_path, body.replace("runtime=60", "runtime=5").replace("ss_dur=3", "ss_dur=10"))["jobs"]
    assert not j["ss_attained"] and j["end_s"] - j["start_s"] == pytest.approx(5)


def test_same_job_same_numbers(tmp_path):
    body = "[a]\nrw=randrw\nbs=4k\niodepth=8\nnumjobs=2\ntime_based\nruntime=1\nrandom_distribution=zipf:1.1\n"
    a, b = sim(tmp_path, body), sim(tmp_path, body)
    assert [counts(j, False) for j in a["jobs"]] == [counts(j, False) for j in b["jobs"]]
    assert a["totals"]["duration_s"] == b["totals"]["duration_s"]


@pytest.mark.parametrize("mix", [70, 50, 10])
def test_mixed_jobs_switch_direction_as_fio_does(tmp_path, mix):
    """A randrw job's direction runs (I/Os in a row of one direction): their mean length and
    the share of single-I/O runs, per direction, are what fio's null engine issues."""
    body = f"[a]\nrw=randrw\nrwmixread={mix}\nbs=4k\nsize=64m\n"
    f = runs(fio_directions(tmp_path, body))
    (s,) = [runs(d) for d in sim_directions(tmp_path, body, 16384)]
    for d in (0, 1):
        assert np.mean(s[d]) == pytest.approx(np.mean(f[d]), rel=0.1), d
        assert np.mean(np.array(s[d]) == 1) == pytest.approx(np.mean(np.array(f[d]) == 1), abs=0.04), d


def test_mixed_jobs_follow_fios_rwmix_cycle(tmp_path):
    """fio's rule (io_u.c get_rw_ddir): after a switch, the new direction keeps on until its
    issue count reaches the old direction's count times the new direction's share; only then
    is a direction drawn again. Replayed over each clone's sequence (eight seeds), no I/O
    leaves a run that the rule forces on."""
    for mix in (10, 90):
        body = f"[a]\nrw=randrw\nrwmixread={mix}\nbs=4k\nsize=64m\nnumjobs=8\n"
        share = {0: mix, 1: 100 - mix}
        forced = 0
        for dirs in sim_directions(tmp_path, body, 20000):
            cur, need, issued = 0, 0, [0, 0]
            for d in dirs:
                if issued[cur] < need:
                    forced += 1
                    assert d == cur, f"rwmixread={mix}: left a forced run"
                elif d != cur:
                    need = issued[cur] * share[d] // 100
                cur = d
                issued[d] += 1
        assert forced > 0  # the rule did force runs here


def test_sequence_distribution_visits_the_blocks_given(tmp_path):
    """random_distribution=sequence (fio's examples/sequence-distribution.fio): the block
    indices in order, repeated; with random_sequence_stride each cycle one sequence length on."""
    body = ("[global]\nrw=randread\nbs=4k\nsize=48k\nio_size=24k\n[fixed]\nrandom_distribution=sequence:2,0,1\n"
            "[strided]\nrandom_distribution=sequence:2,0,1\nrandom_sequence_stride=1\n")
    (_, fixed, _), (_, strided, _) = sim_stream(tmp_path, body, 6)
    assert [o // 4096 for o in fixed] == [2, 0, 1, 2, 0, 1]
    assert [o // 4096 for o in strided] == [2, 0, 1, 5, 3, 4]
    assert [j["read"]["ios"] for j in sim(tmp_path, body)["jobs"]] == [6, 6]
