"""A comparison table's row (one metric, every drive) has one number format: two PTS runs'
`rounds` read "1" and "10.0", and a row of 1,617 and 495.5 mixed whole and decimal."""

from __future__ import annotations

import re

from ssdlab.figures import data as D
from ssdlab.report import ReportDrive, ReportRun
from ssdlab.report.compare import compare_tables
from ssdlab.report.page import compare_table


def test_a_metric_reads_alike_for_every_drive():
    assert D.fmt_row([1.0, 10.0]) == ["1", "10"]
    assert D.fmt_row([1617.3, 495.5]) == ["1,617", "496"]
    assert D.fmt_row([29.96, 3.2, None]) == ["30.0", "3.2", "–"]
    assert D.fmt_row([0.0123, 0.5]) == ["0.012", "0.500"]
    assert D.fmt_row([float("nan"), 2.0]) == ["–", "2"]


def test_the_report_table_uses_one_format_per_metric():
    runs = [ReportRun(1, "pts-iops", [ReportDrive("a", "A", {"rounds": 1, "window_data_excursion": 1617.3})]),
            ReportRun(2, "pts-iops", [ReportDrive("b", "B", {"rounds": 10, "window_data_excursion": 495.5})])]
    (t,) = compare_tables(runs)
    html = compare_table(t)
    cells = {m: re.findall(r'<td class="num">([^<]*)</td>', row)
             for m, row in re.findall(r'<tr data-metric="([^"]+)">(.*?)</tr>', html)}
    assert cells["rounds"] == ["1", "10"]
    assert cells["window_data_excursion"] == ["1,617", "496"]
