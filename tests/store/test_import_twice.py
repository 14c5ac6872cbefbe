"""A pending-results file imported again adds nothing, into whichever store it went: its
run is known there by the run's token (the secret the file carries), so a second import
neither duplicates the run nor changes it once finished."""

from __future__ import annotations

import json
from pathlib import Path

import clirun

from ssdlab.store import Store


def pending_file(tmp_path: Path) -> Path:
    doc = {"format": "ssdlab-pending/1", "store": str(tmp_path / "gone.sqlite"),
           "run": {"id": 7, "test": "fill", "args": {}, "token": "ab" * 16,
                   "created": "2026-12-01T10:00:00+00:00", "status": "complete"},
           "drives": {"0": {"position": 0, "spec": "sim:sn520-128", "identity": {},
                            "metrics": {"mbps": 123.0}, "status": "complete", "phases": []}}}
    f = tmp_path / "r.run7.pending.json"
    f.write_text(json.dumps(doc))
    return f


def test_importing_a_file_twice_into_another_store_keeps_one_run(tmp_path: Path) -> None:
    f = pending_file(tmp_path)
    db = tmp_path / "other.sqlite"
    for _ in range(2):
        r = clirun.cli("results", "import", str(f), "--db", str(db), timeout=60)
        assert r.returncode == 0, r.stderr
        assert "into run 1 " in r.stdout, r.stdout
    store = Store(db, create=False)
    assert [x["id"] for x in store.runs()] == [1]
    run = store.run(1)
    assert run["status"] == "complete" and run["drives"][0]["metrics"]["mbps"] == 123.0
    finished = run["finished"]
    # a finished run is never altered by the file again, even with other metrics in it
    doc = json.loads(f.read_text())
    doc["drives"]["0"]["metrics"]["mbps"] = 1.0
    f.write_text(json.dumps(doc))
    r = clirun.cli("results", "import", str(f), "--db", str(db), timeout=60)
    assert r.returncode == 0 and "imported 0 phases into run 1 " in r.stdout, r.stdout + r.stderr
    run = Store(db, create=False).run(1)
    assert run["drives"][0]["metrics"]["mbps"] == 123.0 and run["finished"] == finished


LIVE_RUN = """
import json, sys
from pathlib import Path
from ssdlab.store import Store
s = Store(Path(sys.argv[1]))
rid = s.create_run("fill", {})
r = s.run_row(rid)
print(json.dumps({"id": rid, "token": r["token"], "created": r["created"]}), flush=True)
sys.stdin.read()
"""


def test_a_file_whose_run_is_still_alive_is_not_imported(tmp_path: Path) -> None:
    """The run a pending file belongs to may still be going (its disk filled mid-run and it
    goes on into the file): an import would finish that live run under it. Refused, in one
    line, until its process has ended; then taken."""
    import subprocess
    import sys

    db = tmp_path / "r.sqlite"
    live = subprocess.Popen([sys.executable, "-c", LIVE_RUN, str(db)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            text=True, env=clirun.environ())
    try:
        own = json.loads(live.stdout.readline())
        f = pending_file(tmp_path)
        doc = json.loads(f.read_text())
        doc["store"] = str(db)
        doc["run"].update(id=own["id"], token=own["token"], created=own["created"])
        f.write_text(json.dumps(doc))
        r = clirun.cli("results", "import", str(f), "--db", str(db), timeout=60)
        assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stdout + r.stderr
        assert f"run {own['id']} is still running" in r.stderr, r.stderr
        assert Store(db, create=False).run(own["id"])["status"] == "running"
    finally:
        live.communicate("", timeout=30)
    r = clirun.cli("results", "import", str(f), "--db", str(db), timeout=60)
    assert r.returncode == 0 and f"into run {own['id']} " in r.stdout, r.stdout + r.stderr
    assert Store(db, create=False).run(own["id"])["status"] == "complete"
