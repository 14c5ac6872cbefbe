"""--minutes bounds the whole fit, its full-size runs included: a full-size check (the best
few again, the checks' own runs, the twin's) does not begin when it would end past its
share, judged by a guess at its time before one ran and by the last one's after; what the
time left out is said (`out_of_time`, a warning line)."""

from __future__ import annotations

import json
from types import SimpleNamespace

from clirun import cli
from ssdlab.fit import fitting, search
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


def test_a_short_fit_says_what_its_minutes_left_out(tmp_path):
    r = cli("fit", "--figures", FIGURES, "--out", str(tmp_path / "t.toml"), "--minutes", "0.1", "--no-crossval",
            "--json", timeout=300, check=True)
    doc = json.loads(r.stdout)
    assert doc["out_of_time"], doc["stages"]
    assert [x for x in r.stderr.splitlines() if "warning" in x] == [
        f"ssdlab: warning: --minutes 0.1 left no time for {x}" for x in doc["out_of_time"]]
