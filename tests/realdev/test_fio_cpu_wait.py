"""fio's wait for a CPU, sampled beside a real run (targets/fio/cpu_wait.py): with a busy
loop on the one CPU fio may use, the run's random writes record that fio waited, as the
series column `cpu_wait_pct` and the phase's `cpu_wait_max_pct` / `cpu_wait_mean_pct`."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys

import numpy as np
import pytest
from clirun import cli

pytestmark = pytest.mark.skipif(not shutil.which("fio"), reason="fio not installed (apt-get install fio)")


def test_a_busy_cpu_shows_as_fios_wait(tmp_path):
    cpu = min(os.sched_getaffinity(0))
    hog = subprocess.Popen([sys.executable, "-c", "while True: pass"],
                           preexec_fn=lambda: os.sched_setaffinity(0, {cpu}))
    try:
        db = tmp_path / "r.db"
        r = cli("run", "consistency", "--drive", f"file:{tmp_path}/t.bin:64M", "--seconds", "3",
                "--db", str(db), "--json", preexec_fn=lambda: os.sched_setaffinity(0, {cpu}), timeout=120)
    finally:
        hog.kill()
        hog.wait()
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["drives"][0]["status"] == "complete"
    with sqlite3.connect(db) as c:
        (pid, totals), = c.execute("SELECT id, totals FROM phases WHERE name = 'random'").fetchall()
        (data,) = c.execute("SELECT data FROM series WHERE phase_id = ? AND axis = 'time' "
                            "AND name = 'cpu_wait_pct'", (pid,)).fetchone()
        (n,) = c.execute("SELECT n FROM series WHERE phase_id = ? AND axis = 'time' AND name = 't_s'",
                         (pid,)).fetchone()
    waits = np.frombuffer(data, dtype=np.float64)
    t = json.loads(totals)
    assert len(waits) == n >= 3
    # sharing its one CPU with a busy loop, fio's job waits a good part of each second
    assert t["cpu_wait_max_pct"] >= 10.0, waits
    assert 0 < t["cpu_wait_mean_pct"] <= t["cpu_wait_max_pct"] <= 100.0
    assert t["cpu_wait_max_pct"] == pytest.approx(waits.max())
