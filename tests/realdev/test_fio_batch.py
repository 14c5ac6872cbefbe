"""Consecutive io phases through fio as one process (targets/fio/batch.py) on a loop
device: each step its own result, shaped as a lone phase's, its totals those fio reported
for its job, handed over as it ends; an interrupted batch keeps the steps it finished and
the one it was running as partial."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import time

import pytest
from clirun import cli as _cli
from clirun import reaped
from clirun import start as _start
from loopdevs import REASON, loops, sectors_written  # noqa: F401  (loops: a fixture)
from ssdlab import interrupts
from ssdlab import phase as P
from ssdlab.phase import Interrupted
from ssdlab.targets import open_target
from ssdlab.targets.fio import batch

pytestmark = pytest.mark.realdev
if REASON:
    pytestmark = [pytest.mark.realdev, pytest.mark.skip(reason=REASON)]

KIB = 1024


def steps() -> list[P.Phase]:
    return [P.rand_io("r01/w4k", 0, block_size=4 * KIB, queue_depth=8, jobs=2, stop_seconds=1.2),
            P.rand_io("r01/r64k", 100, block_size=64 * KIB, queue_depth=4, stop_seconds=0.3),
            P.rand_io("r01/m8k", 65, block_size=8 * KIB, queue_depth=16, jobs=2, stop_seconds=0.3),
            P.seq_write("r01/s128k", block_size=128 * KIB, stop_bytes=8 << 20)]


def test_a_batch_is_one_fio_process_and_each_step_is_its_own_result(loops, monkeypatch):
    dev, _ = loops.make()
    started: list[int] = []
    reports: list[dict] = []
    events: list[tuple[str, int]] = []
    real = batch.Invocation

    def counted(cmd, as_reports):
        started.append(1)

        def keep(obj):
            reps = as_reports(obj)
            reports.extend(reps)
            return reps
        return real(cmd, keep)

    monkeypatch.setattr(batch, "Invocation", counted)
    samples: dict[int, list] = {}

    def on_start(i, phase):
        events.append(("start", i))
        samples[i] = []
        return samples[i].append

    with open_target(dev, destroy_data=dev) as t:
        lone = t.run(P.rand_io("lone", 0, block_size=4 * KIB, stop_seconds=0.3))
        base = sectors_written(dev)
        res = t.run_phases(steps(), on_start, lambda i, r: events.append(("end", i)))
        written = (sectors_written(dev) - base) * 512
    assert len(started) == 1, "one fio process for the whole batch"
    assert events == [(e, i) for i in range(4) for e in ("start", "end")]  # each ends before the next starts
    assert [r.phase.name for r in res] == [p.name for p in steps()]
    final = reports[-1]["jobs"]  # fio's own final figures, one group per step
    for g, r in enumerate(res):
        (job,) = [j for j in final if j["groupid"] == g]
        for d in ("read", "write"):
            assert r.totals[f"{d}_bytes"] == job[d]["io_bytes"]
        assert r.totals["ios"] == job["read"]["total_ios"] + job["write"]["total_ios"] > 0
        # the shape of a lone phase's result
        assert set(r.totals) == set(lone.totals) and set(r.latency) == set(lone.latency)
        assert set(r.series) == set(lone.series) and set(r.segments) == set(lone.segments)
        assert len(r.series["t_s"]) >= 1 and r.latency["counts"].sum() == r.totals["ios"]
        assert samples[g], "live samples for every step"
    w4k, r64k, m8k, s128k = res
    assert w4k.totals["read_bytes"] == 0 and w4k.totals["write_bytes"] == w4k.totals["ios"] * 4 * KIB
    assert r64k.totals["write_bytes"] == 0 and r64k.totals["read_bytes"] == r64k.totals["ios"] * 64 * KIB
    assert m8k.totals["read_bytes"] > 0 and m8k.totals["write_bytes"] > 0
    assert s128k.totals["write_bytes"] == 8 << 20
    assert w4k.totals["duration_s"] == pytest.approx(1.2, abs=0.1)
    # every byte the device took is in one step's totals
    assert written == sum(r.totals["write_bytes"] for r in res)


def test_a_ctrl_c_while_a_step_is_handed_over_waits_until_it_is(loops, monkeypatch):
    """The interrupt lands while a finished step's result is being read from fio's logs:
    the step is still handed over whole (and any other that had ended), then the batch
    stops with the step that was running as partial."""
    dev, _ = loops.make()
    events: list[tuple[str, int]] = []
    with open_target(dev, destroy_data=dev) as t:
        real = t._io_result

        def cut(phase, *a):
            if phase.name == "r01/w4k":
                os.kill(os.getpid(), signal.SIGINT)  # runs its handler at the next bytecode
            return real(phase, *a)

        monkeypatch.setattr(t, "_io_result", cut)
        with interrupts.handled(), pytest.raises(Interrupted) as stop:
            t.run_phases(steps(), lambda i, p: events.append(("start", i)),
                         lambda i, r: events.append(("end", i)))
    ended = [i for e, i in events if e == "end"]
    assert ended[:1] == [0] and ended == list(range(len(ended)))  # in order, none missing
    names = [p.name for p in steps()]
    assert stop.value.partial is None or stop.value.partial.phase.name == names[len(ended)]


def _round_phases(db) -> list[tuple[str, str]]:
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=1) as c:
            return c.execute("SELECT name, status FROM phases WHERE name LIKE 'r01/%' ORDER BY seq").fetchall()
    except sqlite3.Error:  # not created yet, or busy
        return []


def test_an_interrupted_batch_keeps_the_steps_it_finished(loops, tmp_path):
    dev, _ = loops.make()
    db = tmp_path / "r.sqlite"
    p = _start("pts", "--drive", dev, "--test", "iops", "--quick", "--rounds", "1", "--round-seconds", "0.5",
               "-o", str(tmp_path / "rep"), "--db", str(db), "--destroy-data", dev, "--json",
               preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    with reaped(p):
        deadline = time.monotonic() + 120
        while len(_round_phases(db)) < 3 and p.poll() is None and time.monotonic() < deadline:
            time.sleep(0.1)
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=60)
    assert p.returncode == 130, err
    shown = json.loads(_cli("results", "show", "1", "--db", str(db), "--json").stdout)
    assert shown["status"] == "interrupted"
    ph = [x for x in shown["drives"][0]["phases"] if x["name"].startswith("r01/")]
    from ssdlab.methodology.pts import iops as IOPS
    from ssdlab.methodology.pts.common import PtsOptions

    plan = [f"r01/{lb}" for lb in IOPS.labels(PtsOptions(logical_block=512))]
    assert [x["name"] for x in ph] == plan[:len(ph)]  # the round in order, none missing
    assert len(ph) >= 3 and all(x["status"] == "complete" for x in ph[:-1])
    assert ph[-1]["status"] == "partial" or len(ph) == len(plan)
    for x in ph[:-1]:
        assert x["totals"]["ios"] > 0 and x["totals"]["duration_s"] == pytest.approx(0.5, abs=0.1)


def test_a_ctrl_c_before_a_steps_first_report_keeps_it_as_partial(loops, monkeypatch):
    """The interrupt lands when fio's report first shows a step running, before the step's
    start is told: the stop then begins the step itself, and the step, as far as fio got,
    is still handed over as partial (not dropped as a new phase the stop cut off)."""
    from ssdlab import runner

    import sys

    dev, _ = loops.make()
    cls = next(c for c in vars(batch).values() if isinstance(c, type) and hasattr(c, "begin") and hasattr(c, "partial"))
    real = cls.begin
    fired: list[int] = []

    def begin(self, g):
        # a live report shows a step after the first running: stop before its start is told
        if g >= 1 and not fired and sys._getframe(1).f_code.co_name == "report":
            fired.append(g)
            os.kill(os.getpid(), signal.SIGINT)  # its handler runs at the next bytecode
        return real(self, g)

    monkeypatch.setattr(cls, "begin", begin)
    ended: list[tuple[int, str, object]] = []
    with open_target(dev, destroy_data=dev) as t:
        with interrupts.handled(), pytest.raises((Interrupted, KeyboardInterrupt)):
            runner._run_item(t, steps(), 0, lambda i, p: None, lambda i, r, st: ended.append((i, st, r)))
    (g,) = fired
    assert [(i, st) for i, st, _ in ended] == [(i, "complete") for i in range(g)] + [(g, "partial")]
    assert ended[g][2] is not None and ended[g][2].phase.name == steps()[g].name
