"""Files a user names as input (a profile file, a pending-results file, a sweep's grid
file) are read by their own path, never through a link another user planted (in /tmp,
say): such a link could make root read, and quote in its error or store, a file only
root may read. The caller's own links and root's are followed."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from bounded import refused, run_cli, stored_runs
from otheruser import as_nobody, needs_other_user, sticky  # noqa: F401 (fixtures)

SECRET = "root-only-SECRET-line"


def _planted(sticky: Path, tmp_path: Path, name: str) -> Path:
    d = tmp_path / "root-only"
    d.mkdir(mode=0o700, exist_ok=True)
    (d / "secret").write_text(f"{SECRET}\n")
    link = sticky / name
    as_nobody("ln", "-s", str(d / "secret"), str(link))
    assert os.lstat(link).st_uid != 0
    return link


@needs_other_user
def test_a_profile_through_another_users_link_is_refused_unread(sticky: Path, tmp_path: Path) -> None:
    pytest.importorskip("ssdlab._sim")
    link = _planted(sticky, tmp_path, "twin.toml")
    db = tmp_path / "r.sqlite"
    for args in (["run", "quick", "--drive", str(link), "--plan"],
                 ["run", "quick", "--drive", str(link), "--seconds", "1", "--repeat", "1", "--db", str(db)]):
        r = run_cli(*args)
        line = refused(r, str(link), "symlink")
        assert SECRET not in r.stderr + r.stdout, line
    assert stored_runs(db) == 0


@needs_other_user
@pytest.mark.parametrize("name", ["run.pending.json", "grid.toml"])
def test_an_input_through_another_users_link_is_refused_unread(sticky: Path, tmp_path: Path, name: str) -> None:
    from ssdlab import safe_path

    link = _planted(sticky, tmp_path, name)
    with pytest.raises(safe_path.UnsafePath, match="symlink owned by uid") as e:
        safe_path.read_input(link, f"input {link}", 1 << 20)
    assert SECRET not in str(e.value)


@needs_other_user
def test_a_figures_file_through_another_users_link_is_refused_unread(sticky: Path, tmp_path: Path) -> None:
    from ssdlab.calibration.figures_file import FiguresError, load

    d = tmp_path / "root-only"
    d.mkdir(mode=0o700)
    (d / "secret.toml").write_text(f'{SECRET.replace("-", "_")} = "x"\n')  # quoted as an unknown key
    link = sticky / "figures.toml"
    as_nobody("ln", "-s", str(d / "secret.toml"), str(link))
    with pytest.raises(FiguresError, match="symlink owned by uid") as e:
        load(link)
    assert SECRET.replace("-", "_") not in str(e.value)


def test_the_callers_own_link_to_an_input_is_read(tmp_path: Path) -> None:
    from ssdlab import safe_path

    (tmp_path / "f").write_text("mine\n")
    (tmp_path / "link").symlink_to(tmp_path / "f")
    assert safe_path.read_input(tmp_path / "link", "input", 100) == b"mine\n"
    with pytest.raises(safe_path.UnsafePath, match="cannot read .*No such file"):
        safe_path.read_input(tmp_path / "gone", "input", 100)
    with pytest.raises(safe_path.UnsafePath, match="cannot read .*No such file"):
        safe_path.read_input(tmp_path / "no-dir" / "gone", "input", 100)
