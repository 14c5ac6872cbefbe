"""Evidence from a real drive's runs during which fio waited for a CPU (the host held it
back, targets/fio/cpu_wait.py) carries a caution naming the run and its worst phase."""

from __future__ import annotations

import json
import math
import sqlite3

import pytest
from drives import SMALL
from fitruns import evidence_of, fingerprint_run

from ssdlab.figures.data import CPU_WAIT_SHOWN_PCT
from ssdlab.fit.evidence import held_back


def phase(name: str, **totals: float) -> dict:
    return {"name": name, "totals": totals}


def test_the_worst_phase_at_or_over_the_reports_threshold_is_named():
    phases = [phase("purge"), phase("fill", cpu_wait_max_pct=12.4), phase("random", cpu_wait_max_pct=31.0)]
    assert held_back(phases) == "fio waited for a CPU up to 31 % of a second in its 'random' phase"
    assert held_back([phase("fill", cpu_wait_max_pct=CPU_WAIT_SHOWN_PCT)]) is not None


def test_a_calm_unsampled_or_simulated_run_has_none():
    assert held_back([phase("fill", cpu_wait_max_pct=CPU_WAIT_SHOWN_PCT - 0.1)]) is None
    assert held_back([phase("short", cpu_wait_max_pct=math.nan), phase("fill", cpu_wait_max_pct=1.0)]) is None
    assert held_back([phase("fill", write_bytes=1.0)]) is None  # a simulated drive's totals


@pytest.fixture(scope="module")
def fingerprint(tmp_path_factory):
    return fingerprint_run(tmp_path_factory, SMALL, "2")


def test_a_run_the_host_held_back_gives_the_evidence_a_caution(fingerprint):
    assert evidence_of(fingerprint).cautions == []
    db, rid = fingerprint
    with sqlite3.connect(db) as c:  # as a real drive's phase stores it (the simulator's has no such total)
        pid, name, totals = c.execute("SELECT id, name, totals FROM phases WHERE kind = 'io' ORDER BY seq").fetchone()
        c.execute("UPDATE phases SET totals = ? WHERE id = ?", (json.dumps({**json.loads(totals), "cpu_wait_max_pct": 42.0}), pid))
    (caution,) = evidence_of(fingerprint).cautions
    assert caution == (f"run {rid}: fio waited for a CPU up to 42 % of a second in its '{name}' phase: figures "
                       "from it are partly the host's; run it again on a quiet host")
