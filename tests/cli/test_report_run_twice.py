"""A run named twice in `ssdlab report` (its id and -1, or --latest) is reported once: it
was drawn as that many drives, "(run 1) #1", "#2", with a column for each in the tables."""

from __future__ import annotations

from fakes import FakeTarget
from typer.testing import CliRunner

from ssdlab.cli import app
from ssdlab.methodology import Options
from ssdlab.phase import GB
from ssdlab.runner import run_test
from ssdlab.store import Store


def test_a_run_named_twice_is_reported_once(tmp_path):
    store = Store(tmp_path / "r.sqlite")
    rid, _ = run_test(store, "fill", [("fake:a", FakeTarget(capacity=2 * GB))], Options(), {"drives": ["fake:a"]})
    out = tmp_path / "rep"
    r = CliRunner().invoke(app, ["report", str(rid), "-1", "--latest", "--db", str(store.path), "-o", str(out)])
    assert r.exit_code == 0, r.output
    assert sorted(p.name for p in out.glob("fill-*.png")) == ["fill-1-fakedrive.png"]
    html = (out / "report.html").read_text()
    assert f"<title>ssdlab report: run {rid} (fill)</title>" in html
    assert "FakeDrive (run" not in html and html.count(f'<tr data-run="{rid}">') == 1


def test_a_run_named_twice_is_compared_once(tmp_path):
    """`compare 1 -1` of a store with one run: one column, no "% change" against itself."""
    import json

    store = Store(tmp_path / "r.sqlite")
    run_test(store, "fill", [("fake:a", FakeTarget(capacity=2 * GB))], Options(), {"drives": ["fake:a"]})
    r = CliRunner().invoke(app, ["compare", "1", "-1", "--db", str(store.path), "--json"])
    assert r.exit_code == 0, r.output
    assert len(json.loads(r.stdout)["columns"]) == 1
