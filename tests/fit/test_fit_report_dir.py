"""A fit into a report directory an earlier fit wrote leaves only its own outputs there: a
PNG it does not draw this time (fit-crossval.png after --no-crossval) does not stay beside
the new report as if it were this fit's."""

from __future__ import annotations

from ssdlab.fit import report

ROW = {"figure": "peak", "group": "fill", "measured": "800", "twin": 790.0, "unit": "MB/s", "error": -0.0125,
       "tolerance": 0.15, "pass": True, "source": "", "fitted": True}
DOC = {"class": "tlc-256", "trials": 4, "seconds": 1.0, "evidence": ["figures f.toml"], "passed": 1, "total": 1,
       "parameters": [], "figures": [ROW], "conflicts": [], "left_out": [], "scaled_trials": False,
       "crossval": [{"group": "fill", "figure": "peak", "measured": "800", "predicted": 780.0, "error": -0.025,
                     "passed": True, "fold_loss": 0.1}]}


def test_a_fit_without_cross_validation_removes_the_earlier_ones_plot(tmp_path):
    report.write(DOC, tmp_path, [], "Twin of x")
    assert (tmp_path / "fit-crossval.png").is_file()
    page = report.write({**DOC, "crossval": []}, tmp_path, [], "Twin of x")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fit-figures.png", "report.html"]
    assert "fit-crossval" not in page.read_text()


def test_files_it_does_not_own_are_left(tmp_path):
    (tmp_path / "notes.txt").write_text("mine")
    (tmp_path / "fit-fingerprint.png").mkdir()  # not a file it writes: left as it is
    report.write({**DOC, "crossval": []}, tmp_path, [], "Twin of x")
    assert (tmp_path / "notes.txt").read_text() == "mine" and (tmp_path / "fit-fingerprint.png").is_dir()
