"""`make test` installs what its tests need: as root with apt-get,
otherwise it prints the one command to run and stops; `.ci/run` only calls `make test`;
and under `make test` a skipped test fails the session (conftest.py), except for hardware
that cannot be here."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SYSDEPS = ROOT / "tools" / "sysdeps.sh"


def test_ci_only_calls_make_test():
    lines = [x.strip() for x in (ROOT / ".ci" / "run").read_text().splitlines()
             if x.strip() and not x.strip().startswith("#")]
    assert lines == ["set -euo pipefail", 'cd "$(dirname "$0")/.."', "exec make test"]


def test_make_test_and_demo_install_their_packages():
    mk = (ROOT / "Makefile").read_text()
    # the packages and the build first (one parallel make), then the linters and the tests
    assert re.search(r"^test:\n\t\$\(MAKE\) [^\n]*-j2 [^\n]*\bsysdeps build\n", mk, re.M)
    assert re.search(r"^demo: sysdeps-demo build", mk, re.M)
    # the tests' targets install first too, and fail on a skipped test (SSDLAB_NO_SKIPS)
    for target in ("test-parallel", "test-serial"):
        assert re.search(rf"^{target}: sysdeps build\b[^\n]*\n\tSSDLAB_NO_SKIPS=1 .* -rs", mk, re.M), target
    assert re.search(r"^test:\n(\t\$\(MAKE\) [^\n]*\n){2}\t\$\(MAKE\) [^\n]*\btest-parallel\n", mk, re.M)
    assert re.search(r"^\t\$\(MAKE\) [^\n]*\btest-serial\n", mk, re.M)
    text = SYSDEPS.read_text()
    for pkg in ("fio", "chromium", "smartmontools", "nvme-cli", "util-linux", "e2fsprogs", "fdisk",
                "fonts-dejavu-core"):
        assert pkg in text
    assert "DEBIAN_FRONTEND=noninteractive" in text and "apt-get install -y" in text


def test_everything_present_installs_nothing():
    r = subprocess.run([str(SYSDEPS), "test"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and r.stdout == "" and r.stderr == "", r.stderr


def test_without_root_it_names_the_one_command_and_fails():
    """A user without root and without fio or chromium: told what to run, exit 1."""
    import shutil
    import tempfile

    if os.geteuid() != 0:
        pytest.fail("needs root to run the script as another user (make test runs as root)")
    d = Path(tempfile.mkdtemp(prefix="ssdlab-sysdeps-"))  # in /tmp: another user can enter it
    try:
        os.chmod(d, 0o755)
        bin_ = d / "bin"
        bin_.mkdir(mode=0o755)
        for tool in ("bash", "id", "env", "dirname"):  # nothing else of /usr/bin: no fio, no chromium
            (bin_ / tool).symlink_to(shutil.which(tool))
        script = d / "sysdeps.sh"
        shutil.copy(SYSDEPS, script)
        os.chmod(script, 0o755)
        r = subprocess.run(["runuser", "-u", "nobody", "--", str(bin_ / "env"), f"PATH={bin_}",
                            str(bin_ / "bash"), str(script), "test"], capture_output=True, text=True,
                           timeout=60)
    finally:
        shutil.rmtree(d, ignore_errors=True)
    assert r.returncode == 1, r.stderr
    assert r.stderr.startswith("missing system packages; run once: sudo apt-get install -y ")
    assert r.stderr.count("\n") == 1 and " fio" in r.stderr and " chromium" in r.stderr


def test_a_skip_fails_the_session_under_make_test(tmp_path):
    t = tmp_path / "test_x.py"
    t.write_text("import pytest\n"
                 "def test_a():\n    pytest.skip('fio not installed')\n"
                 "def test_b():\n    pytest.skip('[hardware] no NVMe drive')\n")
    (tmp_path / "conftest.py").write_text((ROOT / "tests" / "conftest.py").read_text())
    env = dict(os.environ, SSDLAB_NO_SKIPS="1", PYTHONPATH=f"{ROOT / 'python'}:{ROOT / 'tests'}")
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(t)],
                       capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120)
    assert r.returncode == 1 and "test_x.py::test_a: Skipped: fio not installed" in r.stdout, r.stdout
    assert "test_b" not in r.stdout.split("SSDLAB_NO_SKIPS")[1]
    env.pop("SSDLAB_NO_SKIPS")
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(t)],
                       capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120)
    assert r.returncode == 0, r.stdout


def test_the_release_build_reads_the_simulators_profile_by_its_content(tmp_path):
    """`make build` compiles with profile-guided optimisation from the committed profile,
    through a path named after the profile's content (cargo does not watch the file, so a
    new profile must change the flags); without a profile, no flags."""
    mk = (ROOT / "Makefile").read_text()
    rule = re.search(r"^\$\(STAMP\):.*\n((?:\t.*\n)+)", mk, re.M)
    assert rule and "$(wildcard $(PGO_PROFILE))" in rule.group(0)
    builds = [x for x in rule.group(1).splitlines() if "maturin develop" in x or "cargo build" in x]
    assert len(builds) == 2 and all(x.startswith('\tRUSTFLAGS="$$(tools/rustflags.sh)" ') for x in builds)
    (tmp_path / "tools").mkdir()
    (tmp_path / "tools" / "rustflags.sh").write_bytes((ROOT / "tools" / "rustflags.sh").read_bytes())
    os.chmod(tmp_path / "tools" / "rustflags.sh", 0o755)

    def flags() -> str:
        r = subprocess.run([str(tmp_path / "tools" / "rustflags.sh")], capture_output=True, text=True, timeout=30)
        assert r.returncode == 0 and r.stderr == "", r.stderr
        return r.stdout.strip()

    assert flags() == ""
    prof = tmp_path / "crates" / "ssdsim" / "pgo.profdata"
    prof.parent.mkdir(parents=True)
    seen = []
    for content in (b"one profile", b"another profile"):
        prof.write_bytes(content)
        f = flags()
        assert f.startswith(f"-Cprofile-use={tmp_path}/target/pgo/") and f.endswith(".profdata")
        assert Path(f.split("=", 1)[1]).read_bytes() == content
        seen.append(f)
    assert seen[0] != seen[1]
    assert (ROOT / "crates" / "ssdsim" / "pgo.profdata").stat().st_size > 0  # the committed one
