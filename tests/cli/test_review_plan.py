"""`review --plan`: every run a review would make, each planned as `run TEST --plan` plans
it (a real drive's verdict as data, `safety`, and an estimate of its time), and nothing run,
stored or drawn (docs/cli.md "--plan")."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from ssdlab import methodology
from ssdlab.cli import app


def _invoke(*args: str):
    return CliRunner().invoke(app, list(args))


def test_a_review_plan_lists_every_test_of_a_real_drive_with_its_verdict_and_estimate(tmp_path):
    f, db, out = tmp_path / "drive.bin", tmp_path / "r.sqlite", tmp_path / "report"
    f.write_bytes(b"x" * 2**20)  # data ssdlab did not write
    drive = f"file:{f}:256M"
    r = _invoke("review", "--drive", drive, "--plan", "--json", "--seconds", "1", "--db", str(db), "-o", str(out))
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert set(doc) == {"tests", "drives"}
    assert [t["test"] for t in doc["tests"]][:len(methodology.TESTS)] == list(methodology.TESTS)
    for t in doc["tests"]:  # each as `run TEST --plan --json` has it, with an estimate
        (p,) = t["plan"]
        assert {"drive", "capacity", "phases", "commands", "safety", "estimate"} <= set(p)
        assert p["safety"]["allowed"] is False and f"--destroy-data={f}" in p["safety"]["refusal"]
    (d,) = doc["drives"]
    assert d["drive"] == drive and d["safety"]["allowed"] is False and d["safety"]["writes"] is True
    assert d["safety"]["refusal"].startswith("fill: refusing ")
    est = d["estimate"]
    assert est["seconds"] >= est["timed_s"] >= 600  # the idle test alone idles 2 x 300 s
    assert est["bytes"] >= 2**28 and est["assumed_mbps"] > 0 and est["untimed_phases"] >= len(methodology.TESTS)
    assert est["timed_s"] == sum(t["plan"][0]["estimate"]["timed_s"] for t in doc["tests"])
    assert not db.exists() and not out.exists() and f.stat().st_size == 2**20  # nothing made

    r = _invoke("review", "--drive", drive, "--plan", "--seconds", "1", "--destroy-data", str(f))
    assert r.exit_code == 0, r.output
    assert "# ---- review: idle\n" in r.stdout and "# idle on " in r.stdout
    assert r.stdout.startswith(f"# ---- review of {drive}: writing is allowed; estimate: about ")
    assert r.stdout.count("# estimate: about ") == len(doc["tests"])


def test_a_review_plan_says_the_verdict_once_and_leaves_the_job_files_to_run_plan(tmp_path):
    """A reviewer reads the plan to decide whether to start: the drive's verdict and the
    review's estimate once, at the top; each test its phases (one line each, repeats as one)
    and its estimate; the fio job files are `run TEST --plan --fio-jobs`'s (and --json's)."""
    f = tmp_path / "drive.bin"
    f.write_bytes(b"x" * 2**20)  # data ssdlab did not write: refused
    drive = f"file:{f}:256M"
    r = _invoke("review", "--drive", drive, "--plan", "--seconds", "1")
    assert r.exit_code == 0, r.output
    lines = r.stdout.splitlines()
    assert lines[0].startswith(f"# ---- review of {drive}: a review would be REFUSED: fill: refusing ")
    assert r.stdout.count("REFUSED") == 1 and "# safety: " not in r.stdout
    assert f"ssdlab run TEST --drive {drive} --plan --fio-jobs" in r.stdout  # where the job files are
    assert "[global]" not in r.stdout and "$ fio " not in r.stdout
    assert "cdm_seq1m_q8t1_read#0..#5\t" in r.stdout  # the repeats of a quick test, one line
    assert len(lines) < 300, len(lines)  # it was over 6,000
    doc = json.loads(_invoke("review", "--drive", drive, "--plan", "--seconds", "1", "--json").stdout)
    assert all("[global]" in t["plan"][0]["commands"] for t in doc["tests"][:len(methodology.TESTS)])
    # one test's plan keeps every command and job file
    r = _invoke("run", "idle", "--drive", drive, "--plan", "--fio-jobs", "--seconds", "1")
    assert r.exit_code == 0 and "rw=randwrite" in r.stdout and r.stdout.count("# safety: ") == 1


def test_run_plan_of_a_real_drive_has_an_estimate(tmp_path):
    f = tmp_path / "drive.bin"
    r = _invoke("run", "working-set", "--drive", f"file:{f}:256M", "--seconds", "2", "--plan", "--json")
    assert r.exit_code == 0, r.output
    est = json.loads(r.stdout)["plan"][0]["estimate"]
    # the settle idle (300 s), two seconds per working set and for the QD1 reads, the fill
    assert est == {"seconds": est["timed_s"] + 2**28 / 500e6, "timed_s": 300.0 + 2 * 2, "bytes": 2**28,
                   "assumed_mbps": 500.0, "untimed_phases": 1}


def test_a_simulated_review_plan_is_the_phase_tables(tmp_path):
    r = _invoke("review", "--drive", "sim:tlc-256", "--plan", "--seconds", "1")
    assert r.exit_code == 0, r.output
    assert "# fill on sim:tlc-256\n#\tname\tkind\twhat\n" in r.stdout and "# ---- review of" not in r.stdout
    doc = json.loads(_invoke("review", "--drive", "sim:tlc-256", "--plan", "--json").stdout)
    assert doc["drives"] == [] and "safety" not in doc["tests"][0]["plan"][0]


def test_a_review_without_plan_still_needs_its_report_directory():
    r = _invoke("review", "--drive", "sim:tlc-256")
    assert r.exit_code == 2 and r.stderr.count("\n") == 1 and "--out" in r.stderr


def test_a_review_plan_shows_the_quick_tests_repeated_cycle_once(tmp_path):
    drive = f"file:{tmp_path / 'drive.bin'}:2G"
    r = _invoke("review", "--drive", drive, "--plan", "--seconds", "1")
    assert r.exit_code == 0, r.output
    quick = r.stdout.split("# ---- review: quick\n")[1].split("# ---- review: ")[0]
    assert len(quick.splitlines()) < 45, quick  # the AS SSD cycle's every phase was a line: over 80
    assert quick.count("\tasssd_seq_read") == 1 and "\trepeat #2..#5\t\tthe 10 phases " in quick
