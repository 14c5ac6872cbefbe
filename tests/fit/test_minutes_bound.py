"""--minutes bounds the whole fit, its full-size runs included: a full-size check (the best
few again, the checks' own runs, the twin's) does not begin when it would end past its
share, judged by a guess at its time before one ran and by the last one's after; at the
fit's end the trials still running are stopped (whatever the guesses said, the first batch
too); what the time left out is said (`out_of_time`, a warning line)."""

from __future__ import annotations

import importlib
import json
import pickle
import pkgutil
import time
from types import SimpleNamespace

import pytest

from typer.testing import CliRunner

import ssdlab.fit
from ssdlab import runner
from ssdlab.errors import UserError
from ssdlab.cli import app
from ssdlab.executor import Executor
from ssdlab.fit import evidence, fitting, search
from ssdlab.methodology import get

from test_search import Linear

FIGURES = "python/ssdlab/calibration/figures/sn520-128.toml"


class Timed(Linear):
    """Each round of trials takes 5 s of a fake clock."""

    def __init__(self, clock):
        super().__init__(scalable=False)
        self.clock, self.began = clock, []

    def _run(self, points, full=False, first=0):
        self.began.append(self.clock[0])
        self.clock[0] += 5.0
        return super()._run(points, full, first)


def test_a_round_that_would_end_past_the_deadline_does_not_begin(monkeypatch):
    clock = [0.0]
    monkeypatch.setattr(search.time, "monotonic", lambda: clock[0])
    s = Timed(clock)
    pts = [s.x0] * 4
    s.evaluate(pts, until=8.0, rounds=1)  # begun while before the deadline: the second ends at 10
    assert s.began == [0.0, 5.0]
    clock[0], s.began = 0.0, []
    s.evaluate(pts, until=8.0, rounds=1, round_s=5.0)
    assert s.began == [0.0] and clock[0] <= 8.0
    clock[0], s.began = 0.0, []
    assert s.evaluate(pts, until=4.0, rounds=1, round_s=5.0) == [] and s.began == []


def test_checks_that_cannot_end_in_time_are_not_begun(monkeypatch):
    clock = [0.0]
    monkeypatch.setattr(search.time, "monotonic", lambda: clock[0])
    monkeypatch.setattr(fitting.time, "monotonic", lambda: clock[0])
    checker = Timed(clock)
    cands = checker._run([checker.x0], first=0)
    clock[0], checker.began = 0.0, []
    assert fitting.checked(checker, cands, until=3.0, round_s=5.0) is cands[0] and checker.began == []


def test_the_guess_is_the_search_pace_at_the_checks_cost_and_the_drives_size():
    runs = [("fill", 0.0, None, 1, ())]
    trial_search = SimpleNamespace(measured=SimpleNamespace(runs=lambda: runs), pace=2.0,
                                   trials=[SimpleNamespace(scale=0.25)])
    checker = SimpleNamespace(measured=SimpleNamespace(runs=lambda: runs + [("consistency", 0.0, None, 1, ())]),
                              executor=SimpleNamespace(workers=2))
    ratio = (get("fill").cost + get("consistency").cost) / get("fill").cost
    assert search.Search.full_round_s(checker, trial_search) == 2 * 2.0 * ratio / 0.25


def test_a_short_fit_says_what_its_minutes_left_out(tmp_path, sim_clock):
    """The command's own account of a fit its minutes cut short (on the simulated clock, in
    this process: the same on a loaded machine): `out_of_time` in its JSON, a warning line
    for each entry."""
    r = CliRunner().invoke(app, ["fit", "--figures", FIGURES, "--out", str(tmp_path / "t.toml"), "--minutes",
                                 "25", "--no-crossval", "--jobs", "1", "--json"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert doc["out_of_time"], doc["stages"]
    assert doc["seconds"] <= 25 * 60 + 1 and sim_clock[0] <= 25 * 60 + 1
    assert [x for x in r.stderr.splitlines() if "warning" in x] == [
        f"ssdlab: warning: --minutes 25 left no time for {x}" for x in doc["out_of_time"]]


@pytest.fixture
def sim_clock(monkeypatch):
    """The fit's clock (time.monotonic and time.time in its modules) moves only in the
    simulator, a second a simulated second: each sample row a run hands its listener (those
    the fit listens to, and the others), so a fit's time is its trials' simulated seconds and
    the same on any machine. Trials run in this process (the inline executor)."""
    clock = [0.0]
    fake = SimpleNamespace(monotonic=lambda: clock[0], time=lambda: clock[0])
    # every module of the fit, and the command, where --minutes starts counting
    names = [f"ssdlab.fit.{m.name}" for m in pkgutil.iter_modules(ssdlab.fit.__path__)] + ["ssdlab.cli.fit"]
    for name in names:
        module = importlib.import_module(name)
        if getattr(module, "time", None) is time:
            monkeypatch.setattr(module, "time", fake)
    real = runner.walk_phases

    def walk(test, target, cap, opts, on_start=None, on_end=None):
        def start(seq, phase):
            listener = on_start(seq, phase) if on_start else None

            def sample(row):
                clock[0] += 1.0
                if listener is not None:
                    listener(row)
            return sample
        return real(test, target, cap, opts, on_start=start, on_end=on_end)

    monkeypatch.setattr(runner, "walk_phases", walk)
    return clock


def test_the_fits_end_stops_the_trials_still_running(sim_clock):
    """A trial of these figures is a full-size fill of about 580 simulated seconds: 25 minutes
    end in the search's first batch (the die-count scan, which no share stops: a search needs
    a best), in its second trial. The fit ends there, one simulated second past at most, with
    the trial that ended kept, the one it stopped not counted, and what it left out said."""
    ev = evidence.from_figures(FIGURES)
    res = fitting.fit(fitting.Request(ev, minutes=25, crossval=False), Executor())
    assert sim_clock[0] <= 25 * 60 + 1
    assert res.trials >= 1 and res.seconds <= 25 * 60 + 1
    assert "the rest of 1 trial running at its end (stopped, not counted)" in res.out_of_time
    assert "the checks and the figures not fitted, on the twin" in res.out_of_time


def test_a_fit_whose_time_ends_before_its_first_trial_fits_nothing(sim_clock):
    ev = evidence.from_figures(FIGURES)
    with pytest.raises(UserError, match="--minutes 5 ended before any trial of the search did: nothing was fitted"):
        fitting.fit(fitting.Request(ev, minutes=5, crossval=False), Executor())
    assert sim_clock[0] <= 5 * 60 + 1


def test_a_trial_past_the_fits_end_does_not_begin_and_says_so_through_the_pool():
    from ssdlab.fit.deadline import OutOfTime

    with pytest.raises(OutOfTime) as e:
        search.run_trial("", {}, [("fill", 0.0, None, 1, ())], {}, 42, stop_at=time.time() - 1.0)
    again = pickle.loads(pickle.dumps(e.value))  # as a worker process hands it back
    assert isinstance(again, OutOfTime) and again.began is False and e.value.began is False
