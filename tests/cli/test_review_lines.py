"""`ssdlab review` on a real drive runs test after test for hours: each test stored is one
line on stderr, whether or not stderr is a terminal (the bars show only at one)."""

from __future__ import annotations

from ssdlab import cli, review
from ssdlab.runner import DriveOutcome
from ssdlab.targets.sim import SimTarget


class RealDrive:  # anything but a simulated drive
    pass


class Kept:  # a store whose path still names the file written (runner.check_kept)
    def gone(self):
        return None


def _review(monkeypatch, capsys, target) -> tuple[list[dict], str]:
    def fake_run(req, jobs, ray, hooks, on_run, warn, report):
        on_run("fill", 3, [DriveOutcome(req.drives[0][0], 1, "complete")])
        on_run("consistency", 4, [DriveOutcome(req.drives[0][0], 2, "complete")])
        return "/out/report.html"

    monkeypatch.setattr(review, "run", fake_run)
    monkeypatch.setattr(cli, "run_doc", lambda run_id, test, outcomes: {"run_id": run_id, "test": test})
    docs: list[dict] = []
    req = review.Request(store=Kept(), drives=[("/dev/nvme0n1", target)], sets=[], seed=42,  # type: ignore[arg-type]
                         opts=None, args={})  # type: ignore[arg-type]
    assert cli.run_review(req, docs, None, None, lambda executor: None) == "/out/report.html"
    return docs, capsys.readouterr().err


def test_a_real_drives_review_says_each_test_as_it_is_stored(monkeypatch, capsys):
    docs, err = _review(monkeypatch, capsys, RealDrive())
    assert [d["run_id"] for d in docs] == [3, 4]
    assert err.splitlines() == ["ssdlab: review: fill stored as run 3 (complete)",
                                "ssdlab: review: consistency stored as run 4 (complete)"]


def test_a_simulated_review_keeps_its_progress_bar_only(monkeypatch, capsys):
    sim = SimTarget.__new__(SimTarget)
    docs, err = _review(monkeypatch, capsys, sim)
    assert len(docs) == 2 and err == ""
