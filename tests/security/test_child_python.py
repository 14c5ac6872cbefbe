"""The Pythons ssdlab starts (a fleet's runs, serve's keeper, the worker processes of a
sweep, a review, a fit) never import a module from the working directory: Python puts it
first on the module path of `python -m` and `python -c`, and a module another user left
there (in /tmp, say) ran as whoever ran ssdlab, root included."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import clirun
from otheruser import as_nobody, needs_other_user, sticky  # noqa: F401 (fixtures)

pytestmark = needs_other_user
# modules each of those children imports from the standard library or its packages
PLANTED = ("json", "pickle", "selectors", "shlex", "typing_extensions")


def ssdlab_in(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    """`ssdlab ARGS` run in `cwd` by the installed command (its own directory, not the
    working directory, on its module path; `python -P -m` would hand its -P to the workers
    it spawns, hiding what the command does)."""
    command = Path(sys.executable).with_name("ssdlab")
    if not command.exists():
        pytest.skip("needs the installed `ssdlab` command")
    return subprocess.run([str(command), *args], capture_output=True, text=True, timeout=300, cwd=cwd,
                          env=clirun.environ())


def _plant(d: Path, marker: Path) -> None:
    src = d / "planted.src"
    src.write_text(f"open({str(marker)!r}, 'a').write(__name__ + '\\n')\nraise ImportError('planted')\n")
    src.chmod(0o644)
    for name in PLANTED:
        as_nobody("cp", str(src), str(d / f"{name}.py"))
    src.unlink()


def test_a_fleets_runs_import_nothing_from_the_working_directory(sticky: Path, tmp_path: Path) -> None:
    pytest.importorskip("ssdlab._sim")
    marker = tmp_path / "ran"
    _plant(sticky, marker)
    r = ssdlab_in(sticky, "run", "quick", "--fleet", "--drive", "sim:sn520-128", "--drive", "sim:sn520-256",
                  "--seconds", "1", "--repeat", "1", "--db", str(tmp_path / "r.sqlite"))
    assert not marker.exists(), marker.read_text()
    assert r.returncode == 0, r.stderr[-2000:]


def test_worker_processes_import_nothing_from_the_working_directory(sticky: Path, tmp_path: Path) -> None:
    pytest.importorskip("ssdlab._sim")
    marker = tmp_path / "ran"
    _plant(sticky, marker)
    r = ssdlab_in(sticky, "sweep", "quick", "--drive", "sim:sn520-128", "--spare", "7,12", "--seconds", "1",
                  "--repeat", "1", "--jobs", "2", "--db", str(tmp_path / "s.sqlite"))
    assert not marker.exists(), marker.read_text()
    assert r.returncode == 0, r.stderr[-2000:]


def test_serves_keeper_imports_nothing_from_the_working_directory(sticky: Path, tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    from ssdlab.serve import keeper

    marker = tmp_path / "ran"
    _plant(sticky, marker)
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(sticky)
    p = keeper.start(tmp_path / "r.sqlite", 1, 1, work)
    assert p.stdin is not None
    p.stdin.close()
    try:
        p.wait(60)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()
    assert not marker.exists(), marker.read_text()
    assert os.path.isdir(tmp_path)


def test_ray_workers_import_nothing_from_the_working_directory(sticky: Path, tmp_path: Path) -> None:
    """Ray puts the driver's working directory first on its workers' module path: an
    `ssdlab` package another user left there was the one the workers ran."""
    pytest.importorskip("ray")
    pytest.importorskip("ssdlab._sim")
    marker = tmp_path / "ran"
    pkg = sticky / "ssdlab"
    as_nobody("mkdir", str(pkg))
    _plant(sticky, marker)
    as_nobody("cp", str(sticky / "json.py"), str(pkg / "__init__.py"))
    r = ssdlab_in(sticky, "sweep", "quick", "--drive", "sim:sn520-128", "--spare", "7,12", "--seconds", "1",
                  "--repeat", "1", "--ray", "--db", str(tmp_path / "s.sqlite"))
    assert not marker.exists(), marker.read_text()
    assert r.returncode == 0, r.stderr[-2000:]


DOCUMENTED = re.compile(r"\.venv/bin/python((?: -[A-Za-z]+)*) -m (ssdlab(?:\.\w+)+)")


def documented_modules() -> list[tuple[str, list[str], str]]:
    """Every `.venv/bin/python [FLAGS] -m ssdlab.MODULE` the docs tell a user to run: (where,
    its flags, the module)."""
    root = Path(clirun.ROOT)
    found = []
    for page in sorted([root / "README.md", *(root / "docs").glob("*.md")]):
        for n, line in enumerate(page.read_text().splitlines(), 1):
            for m in DOCUMENTED.finditer(line):
                found.append((f"{page.name}:{n}", m.group(1).split(), m.group(2)))
    return found


def test_the_documented_module_commands_import_nothing_from_the_working_directory(sticky: Path,
                                                                                  tmp_path: Path) -> None:
    """`sudo .venv/bin/python -m ssdlab.serve.nvme_vm` (docs/serve.md) runs as root: started
    in /tmp, an `ssdlab` package another user left there was imported instead of ssdlab's
    own, and ran as root. The docs' command lines carry -P (no working directory on the
    module path)."""
    commands = documented_modules()
    assert any(mod == "ssdlab.serve.nvme_vm" for _, _, mod in commands), commands
    marker = tmp_path / "ran"
    _plant(sticky, marker)
    as_nobody("mkdir", "-p", str(sticky / "ssdlab" / "serve"), str(sticky / "ssdlab" / "report"))
    for sub in ("ssdlab", "ssdlab/serve", "ssdlab/report"):
        as_nobody("cp", str(sticky / "json.py"), str(sticky / sub / "__init__.py"))
    for where, flags, module in commands:
        r = subprocess.run([sys.executable, *flags, "-m", module, "--help"], capture_output=True, text=True,
                           timeout=120, cwd=sticky, env=clirun.environ())
        assert not marker.exists(), (where, marker.read_text())
        assert r.returncode == 0, (where, r.stderr[-2000:])
