"""`ssdlab serve` killed outright (SIGKILL, the OOM killer): no handler of its own runs, yet
what the drive recorded until then is stored and its temporary data file is removed."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import clirun
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
