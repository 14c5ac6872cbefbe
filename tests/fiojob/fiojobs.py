"""Shared helpers of the fio-job tests: a job run on a small simulated drive, and the same
job under fio's null engine (fio does no I/O and opens no file), for comparison."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

SMALL = ["user_capacity_gb=8", "nand.blocks_per_plane=46", "slc.dynamic_max_gb=1"]
runner = CliRunner()


def job(tmp_path: Path, body: str, name: str = "job.fio") -> Path:
    f = tmp_path / name
    f.write_text(body)
    return f


def run_fio(tmp_path: Path, jobfile: Path, *extra):
    """`ssdlab run fio JOBFILE` on an 8 GB simulated drive, its store in tmp_path."""
    pytest.importorskip("ssdlab._sim")
    from ssdlab.cli import app

    return runner.invoke(app, ["run", "fio", str(jobfile), "--drive", "sim:tlc-256", "--set",
                               "user_capacity_gb=8", "--db", str(tmp_path / "r.sqlite"), *extra])


def refused(tmp_path: Path, r, *words) -> str:
    """Exit 2, one line naming the cause, before the store exists: the line."""
    assert r.exit_code == 2, r.output
    err = r.stderr.strip().splitlines()
    assert len(err) == 1 and all(w in err[0] for w in words), r.stderr
    assert not (tmp_path / "r.sqlite").exists()  # refused before the store exists
    return err[0]


def sim(tmp_path: Path, body: str, overrides=SMALL, profile="tlc-256", prelude: list | None = None) -> dict:
    """Run the job text on a fresh simulated drive; the simulator's result dict."""
    _sim = pytest.importorskip("ssdlab._sim")
    from ssdlab import profiles
    from ssdlab.fiojob.compile import compile_job

    f = tmp_path / "sim.fio"
    f.write_text(body)
    d = _sim.Drive(profiles.load_text(profile), overrides=list(overrides))
    c = compile_job(f, int(d.info()["user_bytes"]))
    for ph in prelude or []:
        d.run(ph.resolve(int(d.info()["user_bytes"])))
    return d.run_fiojob(c.spec())


def fio_null(tmp_path: Path, body: str, iolog: bool = False) -> dict:
    """fio's own JSON for the job with the null engine (a test's own job text only)."""
    if shutil.which("fio") is None:
        pytest.skip("fio not installed (make sysdeps)")
    f = tmp_path / "null.fio"
    extra = f"write_iolog={tmp_path / 'null.iolog'}\n" if iolog else ""
    f.write_text(f"[global]\nioengine=null\nfilename=ssdlab-null\n{extra}" + body)
    r = subprocess.run(["fio", "--output-format=json", f.name], capture_output=True, text=True,
                       cwd=tmp_path, timeout=300)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout[r.stdout.index("{"):])


def fio_null_unstalled(tmp_path: Path, body: str, on_time, tries: int = 3) -> dict:
    """fio's job JSON (one job) of a run on wall-clock rates that kept `on_time(job)`: a host
    that stalls fio (a loaded machine) costs a rated job I/Os it never makes up (97 reads at
    100 a second, once). Up to `tries` runs; the last is returned when none kept it, for the
    test's assertion to name."""
    for _ in range(tries):
        (fj,) = fio_null(tmp_path, body)["jobs"]
        if on_time(fj):
            break
    return fj


def both_logged(tmp_path: Path, body: str):
    """The job run by fio (null engine) and by ssdlab, each writing its logs: fio's job JSON,
    ssdlab's job JSON, ssdlab's log directory (fio's logs are in tmp_path) and ssdlab's result."""
    (fj,) = fio_null(tmp_path, body)["jobs"]
    logs = tmp_path / "logs"
    logs.mkdir()
    r = run_fio(tmp_path, job(tmp_path, body), "--log-dir", str(logs), "--output-format", "json")
    assert r.exit_code == 0, r.output
    (sj,) = json.loads(r.stdout)["jobs"]
    return fj, sj, logs, r


def fio_null_zoned(tmp_path: Path, body: str) -> tuple[dict, list[int]]:
    """fio's JSON for a zonemode=zbd job with the null engine, and each job's zone resets
    (fio prints them in its text output: "; N zone resets"). fio keeps the zones of a
    regular file itself (its emulated zones); the file is empty and never written."""
    if shutil.which("fio") is None:
        pytest.skip("fio not installed (make sysdeps)")
    (tmp_path / "ssdlab-null").write_bytes(b"")
    f = tmp_path / "null.fio"
    f.write_text("[global]\nioengine=null\nfilename=ssdlab-null\n" + body)
    r = subprocess.run(["fio", "--output-format=json,normal", f.name], capture_output=True,
                       text=True, cwd=tmp_path, timeout=300)
    assert r.returncode == 0, r.stderr
    out = r.stdout
    doc = json.loads(out[out.index("{"):out.rindex("}") + 1])
    resets = [int(x) for x in re.findall(r"(\d+) zone resets", out)]
    return doc, resets


def counts(job: dict, fio: bool) -> list[tuple[int, int]]:
    if fio:
        return [(job[d]["total_ios"], job[d]["io_bytes"]) for d in ("read", "write", "trim")]
    return [(job[d]["ios"], job[d]["bytes"]) for d in ("read", "write", "trim")]


def sim_stream(tmp_path: Path, body: str, n: int) -> list[tuple[list[int], list[int], list[int]]]:
    """Each job's first `n` I/Os as the simulator issues them: (directions: 0 read, 1 write,
    2 trim; offsets; lengths), on an 8 GB drive."""
    _sim = pytest.importorskip("ssdlab._sim")
    from ssdlab.fiojob.compile import compile_job

    f = tmp_path / "stream.fio"
    f.write_text(body)
    return [_sim.fiojob_stream(j, n) for j in compile_job(f, 8 * 10**9).spec()]


def sim_directions(tmp_path: Path, body: str, n: int) -> list[list[int]]:
    """Each job's first `n` I/O directions."""
    return [list(d) for d, _, _ in sim_stream(tmp_path, body, n)]


def fio_directions(tmp_path: Path, body: str) -> list[int]:
    """The I/O directions fio's null engine issues for a one-job body, in order (its iolog)."""
    fio_null(tmp_path, body, iolog=True)
    rows = [ln.split() for ln in (tmp_path / "null.iolog").read_text().splitlines()]
    return [("read", "write", "trim").index(r[2]) for r in rows
            if len(r) >= 5 and r[2] in ("read", "write", "trim")]


def runs(dirs: list[int]) -> dict[int, list[int]]:
    """Lengths of the runs of one direction, per direction."""
    out: dict[int, list[int]] = {}
    i = 0
    while i < len(dirs):
        j = i
        while j < len(dirs) and dirs[j] == dirs[i]:
            j += 1
        out.setdefault(dirs[i], []).append(j - i)
        i = j
    return out
