"""A second local account (`nobody`, through runuser) playing another user: the tests that
plant links or make directories as someone else, and the sticky and root-only directories
they work in, and ssdlab itself run by that account (`ssdlab_as_nobody`)."""

from __future__ import annotations

import contextlib
import functools
import os
import shutil
import signal
import subprocess
import sys
import sysconfig
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

NOBODY = "nobody"
ROOT = Path(__file__).resolve().parents[1]
needs_other_user = pytest.mark.skipif(
    os.geteuid() != 0 or not shutil.which("runuser"), reason="needs root and runuser (a second account)")


def as_nobody(*cmd: str) -> None:
    subprocess.run(["runuser", "-u", NOBODY, "--", *cmd], check=True, capture_output=True, timeout=60)


@pytest.fixture
def sticky():
    """A directory anyone may add to, as /tmp (mode 1777), of a short name (Ray's socket
    paths under it must fit in 107 bytes)."""
    d = Path(tempfile.mkdtemp(prefix="s", dir="/tmp"))
    os.chmod(d, 0o1777)
    try:
        yield d
    finally:
        shutil.rmtree(d, ignore_errors=True)


@pytest.fixture
def secrets_dir(tmp_path) -> Path:
    """A directory only root may enter, holding a file."""
    d = tmp_path / "root-only"
    d.mkdir(mode=0o700)
    (d / "key").write_text("ROOT")
    return d


@functools.lru_cache(maxsize=1)
def _nobodys_python() -> str | None:
    """An interpreter of this Python's version that `nobody` may run: this one, or the
    system's (this one may live where only root can enter, as under /root/.pyenv); with
    the package and this environment's packages on its path (`python_as_nobody`)."""
    ver = f"python{sys.version_info.major}.{sys.version_info.minor}"
    for cand in (os.path.realpath(sys.executable), f"/usr/bin/{ver}", f"/usr/local/bin/{ver}"):
        if not os.path.exists(cand):
            continue
        r = subprocess.run(["runuser", "-u", NOBODY, "--", "env", "-i", f"PYTHONPATH={_pythonpath()}", cand,
                            "-c", "import numpy, ssdlab.cli"], capture_output=True, timeout=120)
        if r.returncode == 0:
            return cand
    return None


def _pythonpath() -> str:
    return ":".join([str(ROOT / "python"), str(ROOT / "tests"), *sysconfig.get_paths()["purelib"].split(":")])


def python_as_nobody(*args: str) -> list[str]:
    """The command line running Python ARGS as `nobody` (an empty environment but HOME, PATH
    and the package's path), or a skip when no interpreter of this version is theirs to run."""
    py = _nobodys_python()
    if py is None:
        pytest.skip(f"no python{sys.version_info.major}.{sys.version_info.minor} that the nobody account may run")
    return ["runuser", "-u", NOBODY, "--", "env", "-i", "HOME=/nonexistent", f"PATH={os.environ.get('PATH', '/usr/bin:/bin')}",
            f"PYTHONPATH={_pythonpath()}", py, *args]


def ssdlab_as_nobody(*args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    """`ssdlab ARGS` run by `nobody`, to its end."""
    return subprocess.run(python_as_nobody("-m", "ssdlab.cli", *args), capture_output=True, text=True,
                          timeout=timeout, cwd="/")


@contextlib.contextmanager
def held_as_nobody(script: str, *args: str) -> Iterator[int]:
    """`nobody` running Python `script` ARGS until the block ends: the script prints
    `held PID` once it holds what it holds; the pid of its process."""
    how = args[-1] if args else "hold"
    p = subprocess.Popen(python_as_nobody("-c", script, *args), stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, cwd="/")
    words = (p.stdout.readline() if p.stdout else "").split()
    pid = int(words[1]) if len(words) == 2 and words[0] == "held" else 0
    try:
        if not pid:
            p.kill()
            pytest.fail(f"nobody's {how} run did not start: {p.communicate()[1][-2000:]}")
        yield pid
    finally:
        if pid:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)  # runuser's child: killing runuser would leave it
        p.kill()
        p.communicate()
