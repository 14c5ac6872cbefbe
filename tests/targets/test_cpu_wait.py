"""fio's wait for a CPU (targets/fio/cpu_wait.py): the tasks of fio's session read from
/proc, the busiest task's share of each second, and the panel a report draws only when the
host held fio back."""

from __future__ import annotations

import numpy as np
import pytest
from ssdlab.figures.data import CPU_WAIT_SHOWN_PCT, _counters
from ssdlab.targets.fio.cpu_wait import busiest_share, session_tasks, waited_ns


def _task(proc, pid: int, sid: int, comm: str, tids: dict[int, int]) -> None:
    """A process in a fake /proc: its stat (session `sid`) and its threads' run-queue waits."""
    d = proc / str(pid)
    (d / "task").mkdir(parents=True)
    (d / "stat").write_text(f"{pid} ({comm}) S 1 {sid} {sid} 0 -1 4194560 0 0\n")
    for tid, wait in tids.items():
        (d / "task" / str(tid)).mkdir()
        (d / "task" / str(tid) / "schedstat").write_text(f"123 {wait} 7\n")


def test_the_tasks_of_fios_session_and_no_others(tmp_path):
    _task(tmp_path, 100, 100, "fio", {100: 5, 101: 9})
    _task(tmp_path, 102, 100, "fio (job) x", {102: 40})  # a name with spaces and parentheses
    _task(tmp_path, 200, 200, "bash", {200: 10**9})
    (tmp_path / "self").mkdir()  # not a pid
    paths = session_tasks(100, str(tmp_path))
    assert sorted(waited_ns(paths).values()) == [5, 9, 40]


def test_a_task_gone_between_listing_and_reading_is_left_out(tmp_path):
    _task(tmp_path, 100, 100, "fio", {100: 5})
    paths = session_tasks(100, str(tmp_path)) + [str(tmp_path / "100/task/999/schedstat")]
    assert list(waited_ns(paths).values()) == [5]


def test_the_busiest_tasks_share_of_the_interval():
    before = {"a": 1_000_000_000, "b": 0}
    after = {"a": 1_100_000_000, "b": 300_000_000, "new": 200_000_000}
    assert busiest_share(before, after, 1.0) == pytest.approx(30.0)  # b: 0.3 s of 1 s
    assert busiest_share(before, after, 2.0) == pytest.approx(15.0)
    assert busiest_share(after, after, 1.0) == 0.0
    assert busiest_share({}, {"a": 5 * 10**9}, 1.0) == 100.0  # never above the whole second
    assert busiest_share(before, after, 0.0) == 0.0


def test_the_report_draws_fios_wait_only_when_the_host_held_it_back():
    x = np.arange(1.0, 6.0)
    calm = {"t_s": x, "cpu_wait_pct": np.array([0.0, 1.0, 2.0, CPU_WAIT_SHOWN_PCT - 0.1, 0.5])}
    assert _counters(calm, x) is None
    busy = dict(calm, cpu_wait_pct=np.array([0.0, 1.0, 31.0, 2.0, 0.5]))
    c = _counters(busy, x)
    assert c is not None and [p.key for p in c.panels()] == ["cpu_wait"]
    assert list(c.lines["cpu_wait_pct"]) == [0.0, 1.0, 31.0, 2.0, 0.5]
