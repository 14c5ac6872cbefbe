"""`ssdlab serve`'s metrics at the end, without --json: the table every command prints, a
`# run N serve DRIVE (status)` title and whole counts (179704 I/Os, not 1.797e+05), as
`results show` gives the same run. The session itself is left out (tests/serve serve drives)."""

from typer.testing import CliRunner

import ssdlab.serve.server
from ssdlab.cli import app

TOTALS = {"duration_s": 20.52, "ios": 179704.0, "writes": 179704.0, "trims": 976.0,
          "trim_bytes": 1999998976.0, "host_write_bytes": 2673213440.0, "waf": 1.199, "late_pct": 0.388}


def test_the_end_of_a_session_prints_its_metrics_as_a_table_of_whole_counts(tmp_path, monkeypatch):
    monkeypatch.setattr(ssdlab.serve.server, "serve", lambda s, store, args, on_ready, on_row: (7, TOTALS, "complete"))
    db = tmp_path / "r.sqlite"
    r = CliRunner().invoke(app, ["serve", "sim:sn520-128", "--set", "user_capacity_gb=1",
                                 "--socket", str(tmp_path / "s.sock"), "--db", str(db)])
    assert r.exit_code == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[:2] == ["# run 7 serve sim:sn520-128 (complete)", "metric\tvalue"], r.stdout
    assert {"ios\t179704", "trim_bytes\t1999998976", "host_write_bytes\t2673213440", "waf\t1.199",
            "duration_s\t20.52"} <= set(lines), r.stdout
    assert "e+" not in r.stdout and lines[-1] == f"stored as run 7 in {db} (complete)"
