"""A report written into the directory of an earlier one (`ssdlab report --latest -o
reports/last`, again) leaves none of the earlier report's files beside it: its PNGs of
other drives and tests looked like the new report's figures. Files the earlier report did
not write stay, and a name it listed that is now a link is removed, never followed."""

from __future__ import annotations

import os

from ssdlab.figures.model import ReportRun
from ssdlab.report import build_runs_report
from ssdlab.report.synthetic import fill_drive, working_set_drive


def test_a_report_removes_what_the_earlier_one_wrote_and_nothing_else(tmp_path):
    out = tmp_path / "rep"
    build_runs_report([ReportRun(1, "fill", [fill_drive("A 128 GB", 16, 1500, 400, 4),
                                             fill_drive("B 256 GB", 16, 1700, 500, 4)]),
                       ReportRun(2, "working-set", [working_set_drive("B 256 GB", 80000, 32)])], out)
    first = {p.name for p in out.iterdir()}
    assert {"fill-overlay.png", "working-set.png", "fill-2-b-256-gb.png"} <= first
    (out / "notes.txt").write_text("mine")
    (out / "mine.png").write_bytes(b"mine")
    outside = tmp_path / "outside.png"
    outside.write_bytes(b"keep")
    (out / "working-set.png").unlink()
    os.symlink(outside, out / "working-set.png")

    build_runs_report([ReportRun(3, "fill", [fill_drive("C 512 GB", 16, 1200, 300, 4)])], out)
    assert {p.name for p in out.iterdir()} == {"report.html", "fill-1-c-512-gb.png", ".report-files",
                                              "notes.txt", "mine.png"}
    assert outside.read_bytes() == b"keep" and (out / "mine.png").read_bytes() == b"mine"
