"""Values fio runs although they look out of range, against fio itself (its null engine, or
a scratch file): ssdlab runs each as fio does and says in a note what fio makes of it;
what fio refuses, or would run without end, ssdlab refuses in one line before anything
runs. Block sizes: bssplit shares that do not add up to 100 %, over 64 of them, blank
directions of bssplit and bsrange, a bsrange written MAX-MIN."""

from __future__ import annotations

import collections
import json
import shutil
import subprocess

import pytest
from fiojobs import both_logged, counts, fio_null, job, refused, run_fio, sim_stream

from ssdlab.fiojob.compile import compile_job

RANDWRITE = "[a]\nrw=randwrite\nbs=4k\nsize=16m\n"
RANDRW = "[a]\nrw=randrw\nbs=4k\nsize=16m\n"


def _run(tmp_path, body: str):
    r = run_fio(tmp_path, job(tmp_path, body), "--output-format", "json")
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)["jobs"], r.stderr


@pytest.mark.parametrize("extra,word", [
    ("loops=0", "loops=0"), ("number_ios=-5", "number_ios=-5"), ("runtime=-1", "runtime=-1"),
    ("size=0\nsize=16m\nloops=0", "loops=0"),
])
def test_values_fio_reads_as_no_bound_or_one_pass_run_as_fio_runs_them(tmp_path, extra, word):
    body = RANDWRITE + extra + "\n"
    (fj,), ((sj,), err) = fio_null(tmp_path, body)["jobs"], _run(tmp_path, body)
    assert counts(sj, True) == counts(fj, True) == [(0, 0), (4096, 16 << 20), (0, 0)]
    assert f"note: {word}" in err and "so does ssdlab" in err


@pytest.mark.parametrize("extra,reads", [("rwmixread=-1", 0.01), ("rwmixwrite=-30", 0.70),
                                         ("rwmixread=-150", 1.0), ("rwmixwrite=-150", 1.0)])
def test_a_negative_mix_is_its_number_as_fio_33_reads_it(tmp_path, extra, reads):
    """fio splits `-1` at the '-' (a range separator) and sets the mix twice: from -1, then
    from 1: rwmixread=-1 is 1 % reads."""
    body = RANDRW + "norandommap\nsize=64m\n" + extra + "\n"
    (fj,), ((sj,), err) = fio_null(tmp_path, body)["jobs"], _run(tmp_path, body)
    for j in (fj, sj):
        (r, _), (w, _), _ = counts(j, True)
        assert r / (r + w) == pytest.approx(reads, abs=0.01)
    assert f"note: {extra}: fio " in err
    if reads == 1.0:
        assert "max value out of range" in err and "every I/O a read" in err


def test_loops_minus_1_runs_until_the_runtime_as_fio_does(tmp_path):
    """fio stores loops=-1 unsigned (2^32-1 passes): a job with a runtime runs its passes
    until then (a non-time_based job: each pass its size)."""
    body = "[a]\nrw=read\nbs=64k\nsize=1m\nloops=-1\nruntime=50ms\n"
    (fj,), ((sj,), err) = fio_null(tmp_path, body)["jobs"], _run(tmp_path, body)
    for j in (fj, sj):
        assert j["read"]["total_ios"] > 10 * 16  # more than ten passes
    # fio's last pass ends past the runtime by as long as the machine keeps it waiting
    assert sj["job_runtime"] == pytest.approx(50, abs=2) and 48 <= fj["job_runtime"] <= 500
    assert "note: loops=-1: fio stores it unsigned (4294967295 passes): the job runs until its runtime" in err


def test_over_64_bssplit_sizes_fio_keeps_the_first_64(tmp_path):
    """fio: "hit max of 64 split entries", the rest ignored: 63 x 4k/1 and 8k/37 are drawn,
    the 16k and 32k after them never."""
    split = ":".join(["4k/1"] * 63 + ["8k/37", "16k/50", "32k/50"])
    body = f"[a]\nrw=randwrite\nnorandommap\nsize=400m\nnumber_ios=20000\nbssplit={split}\n"
    fio, mine = _shares(_sizes_fio(tmp_path, body)["write"]), _shares(_sizes_sim(tmp_path, body, 20000)["write"])
    for shares in (fio, mine):
        assert set(shares) == {4096, 8192} and shares[4096] == pytest.approx(0.63, abs=0.02)
    _, err = _run(tmp_path, body)
    assert 'fio says "hit max of 64 split entries" and keeps the first 64' in err


def test_size_0_is_the_whole_device_as_fio_takes_it(tmp_path):
    """fio's size=0 is its default: the file's or device's size (here a 4 MiB scratch file:
    fio moves all of it); ssdlab's job with size=0 is the job without size."""
    if shutil.which("fio") is None:
        pytest.skip("fio not installed (make sysdeps)")
    (tmp_path / "scratch.img").write_bytes(b"\0" * (4 << 20))
    job(tmp_path, "[a]\nioengine=psync\nfilename=scratch.img\nrw=write\nbs=64k\nsize=0\n", "f.fio")
    r = subprocess.run(["fio", "--output-format=json", "f.fio"], capture_output=True, text=True,
                       cwd=tmp_path, timeout=120)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout[r.stdout.index("{"):])["jobs"][0]["write"]["io_bytes"] == 4 << 20
    zero = compile_job(job(tmp_path, "[a]\nrw=write\nbs=64k\nsize=0\n", "z.fio"), 1 << 30)
    none = compile_job(job(tmp_path, "[a]\nrw=write\nbs=64k\n", "n.fio"), 1 << 30)
    assert zero.jobs[0].size == zero.jobs[0].io_size == none.jobs[0].size == 1 << 30
    assert any(n.startswith("size=0: fio's default") for n in zero.notes)


def test_log_avg_msec_minus_1_is_one_window_for_the_job_as_fio_logs_it(tmp_path):
    """fio stores -1 unsigned: 2^32-1 ms. Its latency logs get one entry (the job's end),
    its bandwidth and IOPS logs none, and the JSON has no bandwidth samples."""
    body = ("[a]\nrw=randread\nbs=4k\nsize=64m\nlog_avg_msec=-1\nwrite_bw_log=a\nwrite_lat_log=a\n"
            "write_iops_log=a\n")
    fj, sj, logs, r = both_logged(tmp_path, body)
    assert sj["read"]["bw_samples"] == fj["read"]["bw_samples"] == 0
    for kind in ("bw", "iops", "lat", "clat", "slat"):
        mine, fios = (logs / f"a_{kind}.1.log").read_text(), (tmp_path / f"a_{kind}.1.log").read_text()
        assert len(mine.splitlines()) == len(fios.splitlines()) == (1 if kind in ("lat", "clat") else 0)
    assert "note: log_avg_msec=-1: fio stores it unsigned (4294967295 ms" in r.stderr


def _blocks_touched(offsets) -> int:
    return len(set(offsets))


def test_zipf_0_draws_every_block_alike_as_fio_does(tmp_path):
    """fio's zipf with theta 0 is uniform, without the random map: 4 096 draws over 4 096
    blocks touch 1 - 1/e of them (2 589), not all (the map) nor a hot few (a skew)."""
    body = RANDWRITE + "random_distribution=zipf:0\n"
    fio_null(tmp_path, body, iolog=True)
    rows = [ln.split() for ln in (tmp_path / "null.iolog").read_text().splitlines()]
    fio_touched = _blocks_touched(int(r[3]) for r in rows if len(r) >= 5 and r[2] == "write")
    ((_, offs, _),) = sim_stream(tmp_path, body, 4096)
    assert _blocks_touched(offs) == pytest.approx(fio_touched, abs=100)
    assert fio_touched == pytest.approx(4096 * (1 - 1 / 2.718281828), abs=100)
    _, err = _run(tmp_path, body)
    assert "note: random_distribution=zipf:0: a zipf theta of 0 has no skew" in err


@pytest.mark.parametrize("body,words", [
    (RANDWRITE + "runtime=-1\ntime_based\n", ("runtime=-1 with time_based", "without end", "runtime=60")),
    (RANDWRITE + "random_distribution=zipf:1\n", ("zipf:1", "must not be 1")),
    ("[a]\nrw=read\nbs=4k\nsize=16m\nloops=-1\n", ("loops=-1 without a runtime", "4294967295 passes",
                                                   "without end", "runtime=60")),
    ("[a]\nrw=read\nbs=4k\nsize=16m\nloops=-1\nnumber_ios=1000\n", ("loops=-1", "without end")),
    (RANDWRITE + "bssplit=4k/80:8k/80:16k:32k\n", ("bssplit=", "over 100", "fio refuses it")),
    (RANDWRITE + "verify=crc32c\ntrim_percentage=50\ntrim_backlog=16\n",
     ("trim_percentage with verify and trim_backlog", "fio 3.33 aborts", "rw=trimwrite")),
])
def test_what_fio_refuses_or_runs_without_end_is_refused_in_one_line(tmp_path, body, words):
    refused(tmp_path, run_fio(tmp_path, job(tmp_path, body)), *words)


def test_fio_refuses_blank_bssplit_shares_over_100(tmp_path):
    if shutil.which("fio") is None:
        pytest.skip("fio not installed (make sysdeps)")
    job(tmp_path, "[a]\nioengine=null\nfilename=x\nrw=randwrite\nsize=1m\nbssplit=4k/80:8k/80:16k:32k\n",
        "f.fio")
    r = subprocess.run(["fio", "--output-format=json", "f.fio"], capture_output=True, text=True,
                       cwd=tmp_path, timeout=60)
    assert r.returncode != 0 and "bssplit percentages add to more than 100%" in r.stderr


def _sizes_fio(tmp_path, body: str) -> dict[str, collections.Counter]:
    fio_null(tmp_path, body, iolog=True)
    out: dict[str, collections.Counter] = {"read": collections.Counter(), "write": collections.Counter()}
    for ln in (tmp_path / "null.iolog").read_text().splitlines():
        p = ln.split()
        if len(p) >= 5 and p[2] in out:
            out[p[2]][int(p[4])] += 1
    return out


def _sizes_sim(tmp_path, body: str, n: int) -> dict[str, collections.Counter]:
    ((dirs, _, lens),) = sim_stream(tmp_path, body, n)
    out: dict[str, collections.Counter] = {"read": collections.Counter(), "write": collections.Counter()}
    for d, b in zip(dirs, lens):
        if d < 2:
            out[("read", "write")[d]][int(b)] += 1
    return out


def _shares(c: collections.Counter) -> dict[int, float]:
    n = sum(c.values())
    return {b: k / n for b, k in c.items()}


@pytest.mark.parametrize("split,expect", [
    ("4k/60:8k/60", {4096: 0.6, 8192: 0.4}),  # over 100 %: cut at 100 in order of share
    ("8k/60:4k/60", {8192: 0.6, 4096: 0.4}),  # equal shares: as written
    ("4k/150:8k/10", {8192: 0.1, 4096: 0.9}),  # a share is at most 100
    ("4k/80:8k/80:16k", {16384: 1.0}),  # one blank after 160 %: it wraps and takes all
    ("4k/30:8k/30", {4096: 0.3, 8192: 0.7}),  # under 100 %: the largest share takes the rest
    ("4k/0:8k/50", {4096: 0.5, 8192: 0.5}),  # a share of 0 is blank
])
def test_bssplit_shares_are_drawn_as_fio_draws_them(tmp_path, split, expect):
    body = f"[a]\nrw=randwrite\nnorandommap\nsize=400m\nnumber_ios=20000\nbssplit={split}\n"
    fio, mine = _shares(_sizes_fio(tmp_path, body)["write"]), _shares(_sizes_sim(tmp_path, body, 20000)["write"])
    for b, share in expect.items():
        assert fio.get(b, 0) == pytest.approx(share, abs=0.02)
        assert mine.get(b, 0) == pytest.approx(share, abs=0.02)
    assert all(b in expect for shares in (mine, fio) for b, x in shares.items() if x > 0.001)
    _, err = _run(tmp_path, body)
    assert ("fio draws" in err) == (split != "4k/0:8k/50")


@pytest.mark.parametrize("option", [
    "bs=8k\nbssplit=,4k/50:16k/50",  # reads: the job's bs
    "bssplit=,4k/50:16k/50",  # reads: fio's 4k
    "bssplit=16k/100,",  # writes and trims: 4k
    "bsrange=,4k-16k",
    "bsrange=16k-4k,",  # MAX-MIN: swapped
])
def test_blank_directions_keep_the_default_block_size_as_fio_does(tmp_path, option):
    body = f"[a]\nrw=randrw\nnorandommap\nsize=400m\nnumber_ios=4000\n{option}\n"
    fio, mine = _sizes_fio(tmp_path, body), _sizes_sim(tmp_path, body, 4000)
    for d in ("read", "write"):
        assert set(mine[d]) == set(fio[d]), (d, mine[d], fio[d])
