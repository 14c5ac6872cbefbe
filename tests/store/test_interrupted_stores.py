"""Ctrl-C or SIGTERM while a parallel review (or pts) stores the tests its workers finished:
a finished test is stored whole (nothing of it is measured any more, it is only written),
and so is every other finished test, before the interrupt goes on."""

from __future__ import annotations

import os
import signal

import pytest

from ssdlab import interrupts
from ssdlab.store import Store

pytest.importorskip("ssdlab._sim")

from drives import SMALL  # noqa: E402
from fakes import FinishingExecutor  # noqa: E402
from ssdlab.targets import open_target  # noqa: E402


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_a_stop_while_a_finished_test_is_stored_keeps_it_and_the_others_whole(tmp_path, monkeypatch, sig):
    from ssdlab import review as rv
    from ssdlab.methodology import Options

    store = Store(tmp_path / "r.sqlite")
    add_phase, sent = store.add_phase, []

    def stopped_in_run_2(run_drive_id, seq, result, status="complete"):
        if store.run_row(2) is not None and not sent:  # the second test's first phase
            sent.append(sig)
            os.kill(os.getpid(), sig)
        return add_phase(run_drive_id, seq, result, status)

    monkeypatch.setattr(store, "add_phase", stopped_in_run_2)
    runs = []
    opts = Options(seconds=2, repeat=1, interval=0)
    with pytest.raises(KeyboardInterrupt), interrupts.handled():
        drive = open_target("sim:tlc-256", overrides=SMALL)
        req = rv.Request(store, [("sim:tlc-256", drive)], SMALL, 42, opts, {"review": True})
        rv.run_parallel(req, FinishingExecutor(2), lambda test, rid, outs: runs.append(test),
                        tests=["fill", "consistency", "working-set", "idle"])
    assert sent == [sig]
    assert runs == ["fill", "consistency", "working-set", "idle"]
    got = {r["test"]: r["status"] for r in store.runs()}
    assert got == dict.fromkeys(runs, "complete"), got
    for r in store.runs():
        (d,) = store.run(r["id"])["drives"]
        assert d["status"] == "complete" and d["metrics"]
        assert {p["status"] for p in store.phases(d["id"], with_data=False)} == {"complete"}


def test_a_stop_while_a_sweep_point_is_stored_keeps_it_whole(tmp_path, monkeypatch):
    from ssdlab import sweep as sw

    store = Store(tmp_path / "r.sqlite")
    add_phase, sent = store.add_phase, []

    def stopped_in_run_2(run_drive_id, seq, result, status="complete"):
        if store.run_row(2) is not None and not sent:
            sent.append(1)
            os.kill(os.getpid(), signal.SIGINT)
        return add_phase(run_drive_id, seq, result, status)

    monkeypatch.setattr(store, "add_phase", stopped_in_run_2)
    grid = sw.make_grid("fill", ["sim:tlc-256"], list(SMALL), ["0,7,25"])
    points = []
    with pytest.raises(KeyboardInterrupt), interrupts.handled():
        sw.run_sweep(store, grid, FinishingExecutor(3), points.append)
    assert sent == [1]
    assert [p.status for p in points] == ["complete", "complete"]  # the third never started
    assert [(r["id"], r["status"]) for r in store.runs()] == [(2, "complete"), (1, "complete")]
