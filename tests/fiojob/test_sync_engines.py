"""What a synchronous engine changes in fio 3.33 (its FIO_SYNCIO engines: psync, fio's
default, sync, vsync, pvsync, pvsync2, and the null engine at iodepth 1, each I/O completed in
the call that issues it): fio counts only I/Os it queued towards a pass's bytes (do_io's
bytes_issued), so such a pass ends when its offsets do, after a sync then due, and the next
pass starts with one (fio's last_was_sync reset between passes); and the null engine, which
counts submissions and reaps in its commit hook, counts none at iodepth 1 (no I/O reaches
it), where psync counts one of each per I/O."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest
from fiojobs import fio_null, job, run_fio

pytest.importorskip("ssdlab._sim")

LOOPS = "[a]\nrw=write\nbs=4k\nsize=64k\nfsync=4\nloops={loops}\n"


def _json(tmp_path, body: str) -> dict:
    r = run_fio(tmp_path, job(tmp_path, body), "--output-format", "json")
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)["jobs"][0]


def _fio_file(tmp_path, body: str) -> dict:
    """fio's own JSON for the job on a file in tmp_path (an engine the null one is not)."""
    if shutil.which("fio") is None:
        pytest.skip("fio not installed (make sysdeps)")
    f = tmp_path / "file.fio"
    f.write_text(f"[global]\nfilename={tmp_path / 'data.bin'}\n" + body)
    r = subprocess.run(["fio", "--output-format=json", str(f)], capture_output=True, text=True, cwd=tmp_path,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout[r.stdout.index("{"):])["jobs"][0]


def _ios(j: dict) -> tuple[int, int]:
    return j["write"]["total_ios"], j["sync"]["total_ios"]


@pytest.mark.parametrize("loops", [1, 2, 3])
@pytest.mark.parametrize("engine", ["psync", "null"])
def test_a_synchronous_engines_pass_ends_on_its_offsets_after_the_sync_due(tmp_path, loops, engine):
    # fio 3.33 (null at iodepth 1, and psync or sync on a file): 3, 8, 13 syncs; each pass but
    # the last syncs after its 16th write, and the next starts with another
    body = LOOPS.format(loops=loops)
    fj = fio_null(tmp_path, body)["jobs"][0]
    assert _ios(fj) == (16 * loops, 5 * loops - 2)
    assert _ios(_json(tmp_path, f"[global]\nioengine={engine}\n" + body)) == _ios(fj)


@pytest.mark.parametrize("loops", [2, 3])
def test_an_asynchronous_engines_pass_ends_on_its_bytes(tmp_path, loops):
    # fio 3.33, libaio on a file: 7 and 11 syncs (each pass ends on its bytes, before the
    # sync due; the next starts with it)
    body = "[a]\nioengine=libaio\n" + LOOPS.format(loops=loops).removeprefix("[a]\n")
    fj = _fio_file(tmp_path, body)
    assert _ios(fj) == (16 * loops, 4 * loops - 1)
    assert _ios(_json(tmp_path, body)) == _ios(fj)


@pytest.mark.parametrize("engine", ["psync", "libaio"])
def test_a_time_based_synchronous_job_with_verify_never_reads_back(tmp_path, engine):
    # fio 3.33 warns and, at iodepth 1 on null or psync, writes until its runtime; an
    # asynchronous engine's pass ends on its bytes and is read back
    body = "[a]\nrw=write\nbs=4k\nsize=1m\ntime_based\nruntime=50ms\nverify=crc32c\n"
    assert fio_null(tmp_path, body)["jobs"][0]["read"]["total_ios"] == 0
    sj = _json(tmp_path, f"[global]\nioengine={engine}\n" + body)
    assert sj["write"]["total_ios"] > 256
    assert (sj["read"]["total_ios"] == 0) == (engine == "psync")


@pytest.mark.parametrize("extra", ["", "fsync=4\n", "rw=trim\n"])
def test_the_null_engine_at_iodepth_1_counts_no_submission_or_reap(tmp_path, extra):
    # fio 3.33: IO depths 1=100 % (over it with syncs), submit and complete all 0 %
    body = f"[a]\nrw=randwrite\nbs=4k\nsize=1m\n{extra}"
    fj = fio_null(tmp_path, body)["jobs"][0]
    sj = _json(tmp_path, "[global]\nioengine=null\n" + body)
    for key in ("iodepth_level", "iodepth_submit", "iodepth_complete"):
        assert sj[key] == fj[key], key
    assert set(sj["iodepth_submit"].values()) == {0.0}
    # psync counts one submission and one reap per I/O: all in fio's "4" bucket (1 to 4)
    pj = _json(tmp_path, body)
    assert pj["iodepth_submit"]["4"] == pj["iodepth_complete"]["4"] == 100.0
