"""`run TEST --plan` and `review --plan` on a real drive show fio's memory: the largest io
phase's estimate (targets/fio/memory.py) and, when this machine could not hold it, the
refusal a run would meet, the same line; the --json documents keep their keys and add
`fio_memory`. Planned on a file target that is never made."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from ssdlab.cli import app
from ssdlab.methodology import Options
from ssdlab.runner import plan_phases
from ssdlab.targets.fio import memory

SIZE = 256 * 2**20


def _invoke(*args: str):
    return CliRunner().invoke(app, list(args))


def largest_of_fill() -> float:
    return max(memory.footprint(p) for p in plan_phases("fill", SIZE, Options()) if p.kind == "io")


def test_a_run_plan_shows_fios_memory_for_its_largest_phase(tmp_path):
    drive = f"file:{tmp_path / 'drive.bin'}:256M"
    r = _invoke("run", "fill", "--drive", drive, "--plan")
    assert r.exit_code == 0, r.output
    (line,) = [x for x in r.stdout.splitlines() if x.startswith("# fio memory: ")]
    assert line.startswith(f"# fio memory: about {memory.size(largest_of_fill())} for its largest phase, fill (")
    doc = json.loads(_invoke("run", "fill", "--drive", drive, "--plan", "--json").stdout)
    (p,) = doc["plan"]
    assert {"drive", "capacity", "phases", "commands", "safety", "estimate"} <= set(p)
    assert p["fio_memory"] == {"bytes": largest_of_fill(), "phase": "fill", "allowed": True, "refusal": None}
    assert not (tmp_path / "drive.bin").exists()


def test_a_plan_says_a_run_would_be_refused_for_memory_as_the_run_is(tmp_path, monkeypatch):
    """SSDLAB_FIO_MEMORY=2M: the fill's 4 MiB of I/O buffers alone are over it."""
    monkeypatch.setenv(memory.OVERRIDE_ENV, "2M")
    f = tmp_path / "drive.bin"
    drive = f"file:{f}:256M"
    doc = json.loads(_invoke("run", "fill", "--drive", drive, "--plan", "--json").stdout)
    m = doc["plan"][0]["fio_memory"]
    assert m["allowed"] is False and "phase fill: fio would take about" in m["refusal"]
    assert f"# fio memory: a run would be REFUSED: {m['refusal']}" in doc["plan"][0]["commands"]
    run = _invoke("run", "fill", "--drive", drive, "--destroy-data", drive, "--db", str(tmp_path / "r.sqlite"))
    assert run.exit_code == 2 and m["refusal"] in " ".join(run.output.split())
    assert not f.exists()


def test_a_review_plan_shows_the_largest_phase_over_its_tests_and_the_refusal(tmp_path, monkeypatch):
    drive = f"file:{tmp_path / 'drive.bin'}:256M"
    args = ("review", "--drive", drive, "--plan", "--seconds", "1", "--db", str(tmp_path / "r.sqlite"),
            "-o", str(tmp_path / "out"))
    doc = json.loads(_invoke(*args, "--json").stdout)
    (d,) = doc["drives"]
    per_test = [(t["test"], t["plan"][0]["fio_memory"]) for t in doc["tests"]]
    test, big = max(per_test, key=lambda x: x[1]["bytes"])
    assert d["fio_memory"] == {"bytes": big["bytes"], "phase": f"{test}: {big['phase']}", "allowed": True,
                               "refusal": None}
    assert {"drive", "capacity", "safety", "estimate"} <= set(d)
    text = _invoke(*args).stdout.splitlines()
    assert text[1] == f"# fio memory: about {memory.size(big['bytes'])} for the largest phase ({test}: {big['phase']})"
    monkeypatch.setenv(memory.OVERRIDE_ENV, "2M")
    (d,) = json.loads(_invoke(*args, "--json").stdout)["drives"]
    assert d["fio_memory"]["allowed"] is False and d["fio_memory"]["refusal"].startswith(f"{doc['tests'][0]['test']}: ")
