"""Nothing measured is lost: a results disk that fills up mid-run
sends the phase to a pending file that `ssdlab results import` takes back; repeated Ctrl-C
never kills the cleanup; a killed run reads as `stale`."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import clirun
import pytest

from ssdlab.store import Store


def fake_cli(tmp_path: Path, *args: str, **env: str) -> subprocess.Popen:
    """The slow fake-drive command (clirun.py); Ctrl-C raises KeyboardInterrupt in it."""
    return clirun.fake_cli(tmp_path / "ready", *args, env=env,
                           preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))


def wait_ready(tmp_path: Path, p: subprocess.Popen) -> None:
    t0 = time.monotonic()
    while not (tmp_path / "ready").exists() and p.poll() is None and time.monotonic() - t0 < 60:
        time.sleep(0.02)
    assert p.poll() is None, p.communicate()


@pytest.mark.parametrize("gaps", [(0.001,) * 6, (0.005,) * 6, (0.02,) * 8, (0.05, 0.1, 0.2, 0.3),
                                  (0.0, 0.15, 0.002, 0.3)])
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_repeated_signals_never_lose_the_partial_phase(tmp_path, gaps, sig):
    db = tmp_path / "r.sqlite"
    p = fake_cli(tmp_path, "run", "consistency", "--drive", "fake:a", "--seconds", "600",
                 "--db", str(db), "--json")
    with clirun.reaped(p):
        wait_ready(tmp_path, p)
        time.sleep(0.2)
        p.send_signal(sig)
        for g in gaps:  # more while it stops: they land in the cleanup and after it
            time.sleep(g)
            if p.poll() is None:
                p.send_signal(sig)
        out, err = p.communicate(timeout=60)
    assert p.returncode == (130 if sig == signal.SIGINT else 143), err
    assert err == "ssdlab: run 1 interrupted; what was recorded is kept\n", err
    assert json.loads(out)["drives"][0]["status"] == "interrupted"
    store = Store(db, create=False)
    run = store.run(1)
    assert run["status"] == "interrupted" and run["drives"][0]["status"] == "interrupted"
    ph = store.phases(run["drives"][0]["id"], with_data=False)
    assert [(x["name"], x["status"]) for x in ph] == [("purge", "complete"), ("fill", "complete"),
                                                      ("random", "partial")]


def test_killed_run_reads_as_stale_and_keeps_its_running_phase_checkpointed(tmp_path):
    db = tmp_path / "r.sqlite"
    p = fake_cli(tmp_path, "run", "consistency", "--drive", "fake:a", "--seconds", "600", "--db", str(db),
                 CHECKPOINT_S="0.2")
    wait_ready(tmp_path, p)
    time.sleep(1.0)  # samples every 0.05 s: a few checkpoints of the random phase
    p.kill()
    p.wait()
    store = Store(db, create=False)
    (run,) = store.runs()
    assert run["status"] == "stale" and run["pid"] == p.pid and run["host"]
    assert store.run(1)["status"] == "stale"
    # its drive is not `running` either (`results show` and reports print the drive's status)
    assert [d["status"] for d in store.run(1)["drives"]] == ["stale"]
    ph = store.phases(store.run(1)["drives"][0]["id"])
    assert [(x["name"], x["status"]) for x in ph] == [("purge", "complete"), ("fill", "complete"),
                                                      ("random", "partial")]
    assert len(ph[2]["series"]["t_s"]) >= 4 and ph[2]["series"]["iops"].min() > 0
    # a run whose process lives (this one: the test's own) is `running`, as is one from
    # another host (nothing can be told about it)
    with store.tx() as c:
        c.execute("UPDATE runs SET pid=?, pid_start=? WHERE id=1",
                  (os.getpid(), __import__("ssdlab.store").store.process_start(os.getpid())))
    assert store.run(1)["status"] == "running"
    assert [d["status"] for d in store.run(1)["drives"]] == ["running"]
    with store.tx() as c:
        c.execute("UPDATE runs SET pid=?, host='elsewhere' WHERE id=1", (p.pid,))
    assert store.run(1)["status"] == "running"


def test_results_disk_full_saves_the_phase_and_import_takes_it_back(small_fs, tmp_path):
    db = small_fs / "r.sqlite"
    pend_dir = tmp_path / "tmp"
    pend_dir.mkdir()
    p = fake_cli(tmp_path, "run", "consistency", "--drive", "fake:a", "--seconds", "3",
                 "--db", str(db), FILLER=str(small_fs / "filler"), TMPDIR=str(pend_dir))
    out, err = p.communicate(timeout=120)
    assert p.returncode == 1, err
    assert err.count("\n") == 1 and "database or disk is full" in err, err
    (pending,) = pend_dir.glob("r.sqlite.run1-*.pending.json")  # not next to the full store
    assert f"phase 'fill' not stored: saved to {pending}" in err
    assert f"`ssdlab results import {pending}`" in err
    doc = json.loads(pending.read_text())
    assert [x["seq"] for x in doc["drives"]["0"]["phases"]] == [1]  # the fill
    assert doc["run"]["status"] == "failed" and doc["drives"]["0"]["status"] == "failed"
    # nothing lost: free the space, import, and the store has the fill with every value
    (small_fs / "filler").unlink()
    r = clirun.cli("results", "import", str(pending), "--db", str(db), timeout=60)
    assert r.returncode == 0 and r.stdout == f"imported 1 phase into run 1 in {db}\n", r.stderr
    store = Store(db, create=False)
    run = store.run(1)
    assert run["status"] == "failed" and "disk is full" in run["error"]
    ph = store.phases(run["drives"][0]["id"])
    assert [x["name"] for x in ph] == ["purge", "fill"]
    seg = ph[1]["segments"]
    saved = doc["drives"]["0"]["phases"][0]
    assert seg["gb"].tolist() == saved["segments"]["gb"] and len(seg["gb"]) >= 6
    assert seg["mbps"].tolist() == saved["segments"]["mbps"] and (seg["mbps"] > 0).all()
    assert ph[1]["series"]["t_s"].tolist() == saved["series"]["t_s"]
    assert ph[1]["totals"]["write_bytes"] == doc["drives"]["0"]["phases"][0]["totals"]["write_bytes"]


def test_too_little_room_for_the_store_is_refused_up_front(small_fs):
    with open(small_fs / "filler", "wb") as f:
        f.write(bytes(20 * 2**20))
    r = clirun.cli("run", "fill", "--drive", "sim:tlc-256", "--db", str(small_fs / "r.sqlite"), timeout=60)
    assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr
    assert "MB free and a run needs at least 64 MB" in r.stderr
    assert os.listdir(small_fs) == ["filler"]  # not even an empty store
