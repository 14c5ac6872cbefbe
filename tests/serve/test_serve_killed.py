"""`ssdlab serve` killed outright (SIGKILL, the OOM killer): no handler of its own runs, yet
what the drive recorded until then is stored and its temporary data file is removed. Killed
or stopped as it should be (SIGTERM, Ctrl-C) while its store cannot be written, what it
recorded goes to a pending file that `results import` takes back."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Callable, Iterator

import clirun
import pytest
from nbdclient import WRITE, Client
from nbdserve import TINY, needs_nbd
from ssdlab.store import Store

pytestmark = needs_nbd


def test_a_killed_serve_keeps_what_was_recorded_and_leaves_no_data_file(tmp_path: Path) -> None:
    db = tmp_path / "r.sqlite"
    cmd = [*clirun.COMMAND, "serve", "sim:sn520-128", "--db", str(db), "--json", "--interval", "0.2",
           *(x for s in TINY for x in ("--set", s))]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        ready = json.loads(proc.stdout.readline() or "{}")
        assert ready.get("event") == "ready", proc.stderr.read() if proc.poll() is not None else ""
        work = Path(ready["socket"]).parent  # the session's own temporary directory
        c = Client(ready["socket"])
        for i in range(16):
            assert c.request(WRITE, i << 16, 1 << 16, b"x" * (1 << 16))[0] == 0
        c.close()
        time.sleep(0.6)  # sampled at least twice since
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
    run = None
    for _ in range(150):
        run = Store(db).run(ready["run_id"])
        if run["status"] not in ("running", "stale") and not work.exists():
            break
        time.sleep(0.1)
    assert run is not None and run["status"] == "interrupted", run and run["status"]
    assert not work.exists(), sorted(os.listdir(work))
    rd = run["drives"][0]
    assert rd["metrics"]["writes"] == 16 and rd["metrics"]["host_write_bytes"] == 16 << 16, rd["metrics"]
    (phase,) = Store(db).phases(rd["id"])
    assert phase["name"] == "serve" and phase["series"]["write_bytes"].sum() == 16 << 16


def fill_up(fs: Path) -> None:
    """Write to `fs` until it has no room left (a megabyte at a time)."""
    with open(fs / "filler", "wb") as f:
        try:
            while True:
                f.write(bytes(1 << 20))
                f.flush()
        except OSError:
            pass


def killed_with_store_unwritable(db: Path, tmp: Path, unwritable: Callable[[], None],
                                 sig: int = signal.SIGKILL) -> str:
    """Serve (its temporary files in `tmp`), write 16 x 64 KiB, make the store unwritable,
    send serve `sig`; returns the stderr serve shared with its keeper, once the keeper ended."""
    return stopped_with_store_unwritable(db, tmp, unwritable, sig)[2]


def stopped_with_store_unwritable(db: Path, tmp: Path, unwritable: Callable[[], None],
                                  sig: int) -> tuple[int, str, str]:
    """killed_with_store_unwritable's session: (serve's exit status, its stdout after the
    ready line, the stderr it shared with its keeper)."""
    cmd = [*clirun.COMMAND, "serve", "sim:sn520-128", "--db", str(db), "--json", "--interval", "0.2",
           *(x for s in TINY for x in ("--set", s))]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "TMPDIR": str(tmp)})
    try:
        ready = json.loads(proc.stdout.readline() or "{}")
        assert ready.get("event") == "ready", proc.stderr.read() if proc.poll() is not None else ""
        c = Client(ready["socket"])
        for i in range(16):
            assert c.request(WRITE, i << 16, 1 << 16, b"x" * (1 << 16))[0] == 0
        c.close()
        time.sleep(0.6)  # sampled at least twice since
        unwritable()
        proc.send_signal(sig)
        out = proc.stdout.read()
        proc.wait(60)
        return proc.returncode, out, proc.stderr.read()  # until the keeper, which shares it, has ended
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)


def imported_whole(pending: Path, db: Path, status: str = "interrupted") -> None:
    """`results import` stores the pending file as the session's run (a killed one
    interrupted, one stopped as it should be complete)."""
    r = clirun.cli("results", "import", str(pending), "--db", str(db), timeout=60)
    assert r.returncode == 0 and r.stdout == f"imported 1 phase into run 1 in {db}\n", r.stderr
    run = Store(db, create=False).run(1)
    assert run["status"] == status and run["drives"][0]["status"] == status
    rd = run["drives"][0]
    assert rd["metrics"]["writes"] == 16 and rd["metrics"]["host_write_bytes"] == 16 << 16, rd["metrics"]
    (phase,) = Store(db, create=False).phases(rd["id"])
    assert phase["name"] == "serve" and phase["series"]["write_bytes"].sum() == 16 << 16


@pytest.fixture
def short_tmp() -> Iterator[Path]:
    """A temporary directory of a short path: the session's socket is made in it."""
    tmp = Path(tempfile.mkdtemp(prefix="kp-"))
    yield tmp
    shutil.rmtree(tmp, ignore_errors=True)


def test_a_killed_serve_whose_store_is_full_saves_a_pending_file_that_import_takes_back(
        small_fs: Path, short_tmp: Path) -> None:
    db = small_fs / "r.sqlite"
    err = killed_with_store_unwritable(db, short_tmp, lambda: fill_up(small_fs))
    # next to the store when the room the keeper's connection frees as it closes (its -shm)
    # takes it, else in the temporary directory
    (pending,) = [*small_fs.glob("r.sqlite.run1-*.pending.json"), *short_tmp.glob("r.sqlite.run1-*.pending.json")]
    assert err.count("\n") == 1 and "ssdlab serve (run 1) was killed" in err, err
    assert f"saved to {pending}; free space, then `ssdlab results import {pending}`" in err, err
    assert Store(db, create=False).run(1)["status"] == "stale"  # nothing of it stored
    (small_fs / "filler").unlink()
    imported_whole(pending, db)


def test_a_killed_serve_whose_store_was_removed_saves_a_pending_file_beside_it(tmp_path: Path,
                                                                                short_tmp: Path) -> None:
    db = tmp_path / "r.sqlite"

    def remove() -> None:
        for f in tmp_path.glob("r.sqlite*"):
            f.unlink()

    err = killed_with_store_unwritable(db, short_tmp, remove)
    (pending,) = tmp_path.glob("r.sqlite.run1-*.pending.json")
    assert err.count("\n") == 1 and f"no results store at {db}" in err and str(pending) in err, err
    imported_whole(pending, db)  # into a new store: the run is made again there


def test_a_serve_stopped_while_its_store_is_full_saves_a_pending_file_and_says_so_once(
        small_fs: Path, short_tmp: Path) -> None:
    db = small_fs / "r.sqlite"
    code, out, err = stopped_with_store_unwritable(db, short_tmp, lambda: fill_up(small_fs), signal.SIGTERM)
    # next to the store when the room the keeper's connection frees as it closes (its -shm)
    # takes it, else in the temporary directory
    (pending,) = [*small_fs.glob("r.sqlite.run1-*.pending.json"), *short_tmp.glob("r.sqlite.run1-*.pending.json")]
    assert err.count("\n") == 1 and "ssdlab serve (run 1) stopped and cannot write results store" in err, err
    assert f"saved to {pending}; free space, then `ssdlab results import {pending}`" in err, err
    assert code == 1
    end = json.loads(out.splitlines()[-1])  # --json: the end event still printed, naming the file
    assert end["event"] == "end" and end["status"] == "complete" and end["pending"] == str(pending), out
    assert end["metrics"]["writes"] == 16
    (small_fs / "filler").unlink()
    imported_whole(pending, db, "complete")



def test_a_serve_stopped_by_ctrl_c_after_its_store_was_removed_saves_a_pending_file_beside_it(
        tmp_path: Path, short_tmp: Path) -> None:
    db = tmp_path / "r.sqlite"

    def remove() -> None:
        for f in tmp_path.glob("r.sqlite*"):
            f.unlink()

    code, out, err = stopped_with_store_unwritable(db, short_tmp, remove, signal.SIGINT)
    (pending,) = tmp_path.glob("r.sqlite.run1-*.pending.json")
    assert err.count("\n") == 1 and "ssdlab serve (run 1) stopped and cannot write" in err, err
    assert f"no results store at {db}" in err and f"`ssdlab results import {pending}`" in err, err
    assert code == 1 and json.loads(out.splitlines()[-1])["pending"] == str(pending), out
    imported_whole(pending, db, "complete")  # into a new store: the run is made again there
