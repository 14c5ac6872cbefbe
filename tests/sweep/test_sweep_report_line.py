"""A sweep's last line names its store as given and its report by its absolute path, as
`report` and `review` print a report's, and docs/sweeps.md's worked example shows it so."""

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ssdlab.cli import app

pytest.importorskip("ssdlab._sim")
PAGE = (Path(__file__).resolve().parents[2] / "docs" / "sweeps.md").read_text()


def test_the_last_line_gives_the_reports_absolute_path_as_the_page_shows(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    r = CliRunner().invoke(app, ["sweep", "fill", "--drive", "sim:sn520-128", "--set", "user_capacity_gb=1",
                                 "--spare", "0,25", "--jobs", "1", "--db", "w.sqlite", "-o", "whatif"])
    assert r.exit_code == 0, r.stderr
    last = r.stdout.splitlines()[-1]
    assert re.fullmatch(rf"sweep sw-[0-9a-f]{{10}} in w\.sqlite; report: {re.escape(str(tmp_path))}/whatif/sweep\.html",
                        last), last
    shown = re.findall(r"^sweep sw-[0-9a-f]{10} in whatif\.sqlite; report: (\S+)$", PAGE, re.M)
    assert shown and all(Path(p).is_absolute() and p.endswith("/whatif/sweep.html") for p in shown), shown
