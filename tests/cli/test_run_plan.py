"""`run TEST --plan` on a real drive: read like `review --plan`: the verdict and the estimate
first, the device once, each phase a line (a quick test's repeats as one, a repeated cycle
of phases once and a row for its repeats); every fio job
file and command with `--fio-jobs`, and in --json always (docs/cli.md "--plan")."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from ssdlab.cli import app


def _invoke(*args: str):
    return CliRunner().invoke(app, list(args))


def test_a_quick_plan_of_a_file_target_is_its_verdict_device_and_phases(tmp_path):
    f = tmp_path / "drive.bin"
    drive = f"file:{f}:2G"
    r = _invoke("run", "quick", "--drive", drive, "--plan")
    assert r.exit_code == 0, r.output
    lines = r.stdout.splitlines()
    assert len(lines) < 100, len(lines)  # every job file made it over 4,000
    assert lines[0] == "# safety: writing is allowed"
    assert lines[1].startswith("# estimate: about ")
    assert r.stdout.count(f"# ssdlab plan for {drive} (2147483648 bytes)\n") == 1  # the device, once
    assert "# purge method: punch-hole" in r.stdout
    assert "--fio-jobs" in r.stdout  # where the job files are
    assert "[global]" not in r.stdout and "$ fio " not in r.stdout
    rows = [x.split("\t") for x in lines if not x.startswith("#")]
    names = [row[1] for row in rows]
    assert names[:3] == ["purge", "test_file", "cdm_seq1m_q8t1_read#0..#5"]  # repeats: one line
    assert all(row[2] in ("purge", "io", "idle") for row in rows if not row[1].startswith("repeat #"))
    assert not f.exists()  # planned, nothing made


def test_the_fio_jobs_are_shown_with_fio_jobs_and_json_keeps_them(tmp_path, monkeypatch):
    # fio's memory against a given budget: what this machine has available moves between two plans
    monkeypatch.setenv("SSDLAB_FIO_MEMORY", "4G")
    f = tmp_path / "drive.bin"
    drive = f"file:{f}:256M"
    r = _invoke("run", "idle", "--drive", drive, "--plan", "--fio-jobs", "--seconds", "1")
    assert r.exit_code == 0, r.output
    assert r.stdout.startswith(f"# ssdlab plan for {drive} (268435456 bytes)\n")
    assert "[global]" in r.stdout and "rw=randwrite" in r.stdout and "$ fio " in r.stdout
    assert r.stdout.count("# safety: ") == 1 and r.stdout.splitlines()[-1].startswith("# estimate: about ")
    docs = [json.loads(_invoke("run", "idle", "--drive", drive, "--plan", "--json", "--seconds", "1", *more).stdout)
            for more in ([], ["--fio-jobs"])]
    assert docs[0] == docs[1]
    (p,) = docs[0]["plan"]
    assert set(p) == {"drive", "capacity", "phases", "commands", "safety", "estimate", "fio_memory"}
    assert "[global]" in p["commands"]


def test_a_refused_plan_says_so_first(tmp_path):
    f = tmp_path / "drive.bin"
    f.write_bytes(b"x" * 2**20)  # data ssdlab did not write
    r = _invoke("run", "fill", "--drive", f"file:{f}:256M", "--plan")
    assert r.exit_code == 0, r.output
    assert r.stdout.startswith(f"# safety: a run would be REFUSED: refusing file:{f}: the file exists")


def test_fio_jobs_goes_with_plan(tmp_path):
    r = _invoke("run", "fill", "--drive", f"file:{tmp_path / 'd.bin'}:256M", "--fio-jobs",
                "--db", str(tmp_path / "r.sqlite"))
    assert r.exit_code == 2 and r.stderr.count("\n") == 1 and "--fio-jobs goes with --plan" in r.stderr
    assert not (tmp_path / "r.sqlite").exists() and not (tmp_path / "d.bin").exists()


def test_a_quick_plan_shows_a_repeated_cycle_of_phases_once_and_a_row_for_its_repeats(tmp_path):
    """AS SSD's part of a quick test runs its 10 phases 5 times: they show once, then one
    row that stands for the 40 other phases (its first column: their numbers)."""
    drive = f"file:{tmp_path / 'drive.bin'}:2G"
    r = _invoke("run", "quick", "--drive", drive, "--plan")
    assert r.exit_code == 0, r.output
    assert len(r.stdout.splitlines()) < 50, r.stdout  # the cycle's every phase was a line: over 80
    rows = [x.split("\t") for x in r.stdout.splitlines() if not x.startswith("#")][1:]  # past the header
    names = [row[1] for row in rows]
    assert names.count("asssd_seq_read#1") == 1 and not any(n.startswith("asssd_seq_read#2") for n in names)
    (i,) = [k for k, row in enumerate(rows) if row[1].startswith("repeat")]
    first = int(rows[i - 10][0])
    assert rows[i - 10][1] == "asssd_interval_1" and rows[i - 1][1] == "asssd_access_write#1"
    assert rows[i] == [f"{first + 10}..{first + 49}", "repeat #2..#5", "",
                       f"the 10 phases {first}..{first + 9} again, 4 more times"]
    (p,) = json.loads(_invoke("run", "quick", "--drive", drive, "--plan", "--json").stdout)["plan"]
    assert len(p["phases"]) == first + 50 and p["phases"][-1]["name"] == "asssd_access_write#5"  # numbered right


def test_fio_jobs_on_simulated_drives_only_says_it_shows_nothing_more():
    """A simulated drive runs no fio: its plan is the phase table with --fio-jobs or without,
    and a warning says so rather than leaving the flag to look ignored."""
    plain = _invoke("run", "fill", "--drive", "sim:tlc-256", "--set", "user_capacity_gb=1", "--plan")
    r = _invoke("run", "fill", "--drive", "sim:tlc-256", "--set", "user_capacity_gb=1", "--plan", "--fio-jobs")
    assert r.exit_code == 0 and plain.exit_code == 0, r.output
    assert r.stdout == plain.stdout and plain.stderr == ""
    assert r.stderr.count("\n") == 1 and r.stderr.startswith("ssdlab: warning: --fio-jobs"), r.stderr
