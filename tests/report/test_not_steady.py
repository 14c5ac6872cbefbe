"""A consistency run too short to reach steady state has no steady figure: the report's
comparison says that (the run's own verdict, as the command's summary does), not "no
result", which reads as a run that failed."""

from __future__ import annotations

from fakes import FakeTarget
from typer.testing import CliRunner

from ssdlab.cli import app
from ssdlab.methodology import Options
from ssdlab.phase import GB
from ssdlab.runner import run_test
from ssdlab.store import Store


def test_the_comparison_says_steady_state_was_not_reached(tmp_path):
    store = Store(tmp_path / "r.sqlite")
    rid, outcomes = run_test(store, "consistency", [("fake:a", FakeTarget(capacity=8 * GB))], Options(seconds=3),
                             {"drives": ["fake:a"], "spare": 0.0, "seconds": 3})
    assert outcomes[0].status == "complete" and outcomes[0].metrics["steady_reached"] is False
    r = CliRunner().invoke(app, ["report", str(rid), "--db", str(store.path), "-o", str(tmp_path / "rep")])
    assert r.exit_code == 0, r.output
    html = (tmp_path / "rep" / "report.html").read_text()
    start = html.rindex('<div class="table-wrap">', 0, html.index('id="table-compare-consistency'))
    table = html[start:html.index("</div>", start)]
    assert "no result" not in table
    assert "FakeDrive: steady state not reached in 3 s" in table
