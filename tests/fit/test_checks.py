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

    def evaluate(points, **deadline):  # until, rounds, round_s: no deadline here
        return [Trial(i, u, {"no stall": worst[u["i"]]}, worst[u["i"]] / 1000, 1.0) for i, u in enumerate(points)]

    checker = SimpleNamespace(ev=ev, evaluate=evaluate)
    cands = [Trial(i, {"i": i}, {}, 0.1 * i, 1.0) for i in range(3)]
    more = [Trial(i, {"i": i}, {}, 0.1 * i, 1.0) for i in range(6)]
    assert fitting.checked(checker, cands, lambda: more).u == {"i": 4}  # the first of the next few that meets it
    assert fitting.checked(checker, cands, lambda: more[:4]).u == {"i": 3}  # none does: the lowest whole loss
    assert fitting.checked(None, cands).u == {"i": 0}


MISSING = """
[[figure]]
name = "QD1 reads, a mechanism away"
test = "quick"
seconds = 0.2
metric = "cdm_rnd4k_q1t1_read_mbps"
value = 400
tolerance = 0.1
unit = "MB/s"
source = "a drive with a read cache the simulator lacks"
expected_failure = "the simulator has no read cache"
"""


def test_a_figure_marked_expected_failure_is_measured_and_reported_but_not_fitted(tmp_path: Path):
    """A figure whose mechanism the simulator lacks would pull every parameter to a compromise
    (the search trades the figures it can reach for it): the fit is the one without it, and the
    twin's value of it is still measured and reported."""
    plain, marked = tmp_path / "plain.toml", tmp_path / "marked.toml"
    plain.write_text(FIGS)
    marked.write_text(FIGS + MISSING)
    params = ["nand.native.read_us", "host.host_latency_us"]
    without = fitting.fit(fitting.Request(from_figures(plain), trials=16, start="tlc-256", crossval=False,
                                          params=params), Executor())
    res = fitting.fit(fitting.Request(from_figures(marked), trials=16, start="tlc-256", crossval=False,
                                      params=params), Executor())
    assert res.values == without.values
    row = next(r for r in res.figures if r["figure"] == "QD1 reads, a mechanism away")
    assert row["fitted"] is False and row["expected_failure"] == "the simulator has no read cache"
    assert row["twin"] is not None and not row["pass"]
    assert all(r["fitted"] for r in res.figures if r["figure"] == "sequential read")


def test_a_figures_file_of_expected_failures_only_is_refused(tmp_path: Path):
    import pytest

    from ssdlab.errors import UserError

    f = tmp_path / "figs.toml"
    f.write_text('[facts]\ncapacity_gb = 8\ninterface = "pcie"\ncell = "tlc"\nmapping = "dram"\n' + MISSING)
    with pytest.raises(UserError, match="expected_failure"):
        fitting.fit(fitting.Request(from_figures(f), trials=4, start="tlc-256", crossval=False), Executor())


def test_when_no_best_meets_a_check_the_parameter_that_breaks_it_is_moved_until_it_holds():
    """The search reached its figures with a mechanism that stalls where they do not look (a
    reclaim "a" that stops the host at a low pace "p"): set back to the class, the mechanism
    would lose the figures; run alongside at a higher pace (the pace over the screening grid)
    it meets the check and keeps them, and becomes the best. A class that fails the check too
    leaves the best as it was."""
    from types import SimpleNamespace

    from ssdlab.calibration import Figure
    from ssdlab.fit.loss import Trial

    stall = Figure("d", "no stall", ("t", 0.0, None, 1, ()), lambda c: None, hi=1000.0, tol=0.15, kind="behaviour")
    ev = SimpleNamespace(figures=[stall])
    x0 = {"a": 0.0, "p": 0.05}  # the class: no reclaim
    best_u = {"a": 0.9, "p": 0.3}

    def figures_loss(u):  # the figures want the reclaim (a = 0.9), and care little for its pace
        return 10 * (u["a"] - 0.9) ** 2 + (u["p"] - 0.3) ** 2

    def stalls(u):
        return 3000.0 if u["a"] > 0.1 and u["p"] < 0.5 else 500.0

    def checker_eval(points, until=None, worst=stalls, **rounds):
        return [Trial(i, u, {"no stall": worst(u)}, figures_loss(u) + (50.0 if worst(u) > 1000 else 0.0), 1.0)
                for i, u in enumerate(points)]

    trials = [Trial(0, best_u, {}, figures_loss(best_u), 1.0)]
    search = SimpleNamespace(x0=x0, free=lambda: ["a", "p"], trials=trials, scalable=False,
                             evaluate=lambda pts: [Trial(-1, u, {}, figures_loss(u), 1.0) for u in pts])
    checker = SimpleNamespace(ev=ev, evaluate=checker_eval)
    out, record = fitting.repair(search, checker, trials[0], until=float("inf"))
    assert out.u == {"a": 0.9, "p": 0.55} and out.number == 1 and search.trials[-1] is out
    assert record is not None and record["failed"] == ["no stall"] and record["outcome"] == "moved"
    assert record["met"] >= 2 and record["tried"] > record["met"]  # the pace and the class met it
    # the class stalls too: nothing to go back to
    search.trials = trials[:1]
    always = SimpleNamespace(ev=ev, evaluate=lambda pts, until=None, **rounds: checker_eval(pts, worst=lambda u: 3000.0))
    kept, record = fitting.repair(search, always, trials[0], until=float("inf"))
    assert kept is trials[0] and record is not None and record["outcome"] == "class fails it too"


def test_a_check_met_only_by_giving_up_figures_is_reported_as_a_conflict():
    """When only the class meets the check, the repaired best loses the figures the search's
    best passed: the fit says which, next to the check (the report's conflicts)."""
    from types import SimpleNamespace

    from ssdlab.calibration import Figure
    from ssdlab.fit.loss import Trial

    stall = Figure("d", "no stall", ("t", 0.0, None, 1, ()), lambda c: None, hi=1000.0, tol=0.15, kind="behaviour")
    drop = Figure("d", "drop", ("t", 0.0, None, 1, ()), lambda c: None, lo=0.4, hi=0.6, tol=0.15)
    ev = SimpleNamespace(figures=[drop, stall])
    x0, best_u = {"a": 0.0}, {"a": 0.9}

    def evaluate(points, until=None, **rounds):  # the drop needs the mechanism, which stalls at any setting
        return [Trial(i, u, {"no stall": 3000.0 if u["a"] > 0.1 else 500.0, "drop": 0.5 if u["a"] > 0.5 else 1.0},
                      (0.0 if u["a"] > 0.5 else 40.0) + (50.0 if u["a"] > 0.1 else 0.0), 1.0)
                for i, u in enumerate(points)]

    trials = [Trial(0, best_u, {}, 0.0, 1.0)]
    search = SimpleNamespace(x0=x0, free=lambda: ["a"], trials=trials, scalable=False,
                             evaluate=lambda pts: [Trial(-1, u, {}, 0.0, 1.0) for u in pts])
    out, record = fitting.repair(search, SimpleNamespace(ev=ev, evaluate=evaluate), trials[0], until=float("inf"))
    assert out.u == x0 and record is not None
    assert record["outcome"] == "class" and record["gave_up"] == ["drop"] and record["failed"] == ["no stall"]
    res = fitting.Result(None, out, {}, {}, [], [], [], 1, 1.0, search, check_repair=record)  # type: ignore[arg-type]
    assert res.conflict_texts() == [next(c for c in res.conflict_texts() if c.startswith("no stall:"))]
    assert "fails drop" in res.conflict_texts()[0]
