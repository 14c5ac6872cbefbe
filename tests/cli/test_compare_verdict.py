"""`ssdlab compare` of a consistency run too short to reach steady state shows `-` for its
steady figures: a warning line says why (the run's verdict), as the report does."""

from __future__ import annotations

from fakes import FakeTarget
from typer.testing import CliRunner

from ssdlab.cli import app
from ssdlab.methodology import Options
from ssdlab.phase import GB
from ssdlab.runner import run_test
from ssdlab.store import Store


def test_compare_says_which_run_never_reached_steady_state(tmp_path):
    store = Store(tmp_path / "r.sqlite")
    rid, _ = run_test(store, "consistency", [("fake:a", FakeTarget(capacity=8 * GB))], Options(seconds=3),
                      {"drives": ["fake:a"], "spare": 0.0, "seconds": 3})
    r = CliRunner().invoke(app, ["compare", str(rid), "--db", str(store.path)])
    assert r.exit_code == 0, r.output
    assert f"ssdlab: warning: run {rid} fake:a: steady state not reached in 3 s: " in r.stderr
    assert "steady_iops\t-" in r.stdout
