"""Behaviour figures (bounds any sane drive meets) whose runs no other figure needs are checks:
the search's trials do not run them; the best few and the twin do, and the report gives them."""

from __future__ import annotations

from pathlib import Path

from ssdlab.executor import Executor
from ssdlab.fit import fitting
from ssdlab.fit.evidence import from_figures

FIGS = """[facts]
capacity_gb = 8
interface = "pcie"
cell = "tlc"
mapping = "dram"

[[figure]]
name = "sequential read"
test = "quick"
seconds = 0.3
metric = "cdm_seq1m_q8t1_read_mbps"
lo = 3000
unit = "MB/s"
source = "a rating"

[[figure]]
name = "QD1 reads complete"
test = "quick"
seconds = 0.2
metric = "cdm_rnd4k_q1t1_read_mbps"
lo = 1
unit = "MB/s"
kind = "behaviour"
source = "a drive that reads"

[[figure]]
name = "QD32 reads complete"
test = "quick"
seconds = 0.3
metric = "cdm_rnd4k_q32t1_read_mbps"
lo = 1
unit = "MB/s"
kind = "behaviour"
source = "a drive that reads (its run is the rating's: no run of its own)"
"""


class Recording(Executor):
    """In this process, recording the runs each trial made."""

    def __init__(self):
        self.runs: list[list[tuple]] = []

    def run(self, units):
        for u in units:
            self.runs.append(list(u.args[2]))
        return super().run(units)


def test_a_check_runs_on_the_best_few_and_the_twin_not_on_every_trial(tmp_path: Path):
    f = tmp_path / "figs.toml"
    f.write_text(FIGS)
    ev = from_figures(f)
    fitted, whole = ev.checks_apart()
    assert whole is ev and [x.name for x in fitted.figures] == ["sequential read", "QD32 reads complete"]
    ex = Recording()
    req = fitting.Request(ev, trials=12, start="tlc-256", crossval=False, params=["nand.native.read_us"])
    res = fitting.fit(req, ex)
    check_run = ev.figures[1].run
    with_check = [r for r in ex.runs if check_run in r]
    assert len(ex.runs) >= 3 * len(with_check) and 1 <= len(with_check) <= fitting.RECHECK + 1
    row = next(r for r in res.figures if r["figure"] == "QD1 reads complete")
    assert row["twin"] is not None and row["twin"] > 1 and row["pass"]
    # nothing to set apart: the same evidence
    only = fitted.without("spec sheet")
    assert only.checks_apart() == (only, None)


def test_when_the_best_few_fail_a_check_the_next_few_are_checked():
    """The search's best points are often neighbours that share a flaw (all stall): the next
    few of its best are checked too, and the first that meets every check is taken; when none
    does, the lowest loss on the whole evidence."""
    from types import SimpleNamespace

    from ssdlab.calibration import Figure
    from ssdlab.fit.loss import Trial

    stall = Figure("d", "no stall", ("t", 0.0, None, 1, ()), lambda c: None, hi=1000.0, tol=0.15, kind="behaviour")
    ev = SimpleNamespace(figures=[stall])
    worst = {0: 5000.0, 1: 4000.0, 2: 3000.0, 3: 2500.0, 4: 900.0, 5: 800.0}  # trial -> its longest stall (ms)

    def evaluate(points):
        return [Trial(i, u, {"no stall": worst[u["i"]]}, worst[u["i"]] / 1000, 1.0) for i, u in enumerate(points)]

    checker = SimpleNamespace(ev=ev, evaluate=evaluate)
    cands = [Trial(i, {"i": i}, {}, 0.1 * i, 1.0) for i in range(3)]
    more = [Trial(i, {"i": i}, {}, 0.1 * i, 1.0) for i in range(6)]
    assert fitting.checked(checker, cands, lambda: more).u == {"i": 4}  # the first of the next few that meets it
    assert fitting.checked(checker, cands, lambda: more[:4]).u == {"i": 3}  # none does: the lowest whole loss
    assert fitting.checked(None, cands).u == {"i": 0}
