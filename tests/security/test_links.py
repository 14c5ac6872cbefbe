"""No path follows another user's link: a second local account (`nobody`, through
runuser) plants symlinks in a sticky directory, as any user can in /tmp, pointing at files
only root may write. Whatever root then asks ssdlab to write there (a file target,
`serve --data`, a report, an export, the store, fio's log files, a socket's marker) is
refused with one line and exit status 2, or (a name inside a report directory) replaced
by a new file of its own, and the root-owned files are left exactly as they were."""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import tempfile
from pathlib import Path

import clirun
import pytest
from nbdserve import TINY

from otheruser import NOBODY, as_nobody, needs_other_user, sticky  # noqa: F401 (fixtures)
from ssdlab import safe_path

SMALL = [x for s in TINY for x in ("--set", s)]  # a drive any disk holds
pytestmark = needs_other_user


@pytest.fixture
def victim(tmp_path) -> Path:
    """A root-owned file in a directory only root can enter."""
    d = tmp_path / "root-only"
    d.mkdir(mode=0o700)
    f = d / "empty_file"
    f.write_bytes(b"")
    return f


def plant(sticky: Path, name: str, target: Path) -> Path:
    link = sticky / name
    as_nobody("ln", "-s", str(target), str(link))
    assert os.lstat(link).st_uid != 0
    return link


def refused(r: subprocess.CompletedProcess, *words: str) -> None:
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "Traceback" not in r.stderr, r.stderr
    assert all(w in r.stderr for w in words), r.stderr


def test_a_file_target_through_another_users_link_is_refused(sticky, victim, tmp_path):
    link = plant(sticky, "t.bin", victim)
    for extra in ([], ["--destroy-data", f"file:{link}:1M"], ["--destroy-data", str(link)]):
        r = clirun.cli("run", "fill", "--drive", f"file:{link}:1M", "--db", str(tmp_path / "r.db"), *extra)
        refused(r, f"{link} is a symlink owned by uid", "another user")
    assert victim.read_bytes() == b"" and victim.stat().st_size == 0
    # a link in a directory component counts as much as one at the end
    dlink = plant(sticky, "d", victim.parent)
    r = clirun.cli("run", "fill", "--drive", f"file:{dlink}/empty_file:1M", "--db", str(tmp_path / "r.db"))
    refused(r, f"{dlink} is a symlink owned by uid")
    assert victim.stat().st_size == 0


def test_a_file_target_another_user_owns_or_can_swap_is_refused(sticky, victim, tmp_path):
    """The attacker's own (empty) file, which it may replace with a link while the run
    writes it; and a file in a directory the attacker may write."""
    as_nobody("touch", str(sticky / "theirs.bin"))
    r = clirun.cli("run", "fill", "--drive", f"file:{sticky}/theirs.bin:1M", "--db", str(tmp_path / "r.db"))
    refused(r, "belongs to uid", "another user")
    open_dir = Path(tempfile.mkdtemp(dir="/tmp"))
    try:
        os.chmod(open_dir, 0o777)
        r = clirun.cli("run", "fill", "--drive", f"file:{open_dir}/t.bin:1M", "--db", str(tmp_path / "r.db"))
        refused(r, f"directory {open_dir} may be written by users other than root (owner uid")  # not "root and uid 0"
        assert not (open_dir / "t.bin").exists()
    finally:
        shutil.rmtree(open_dir)


def test_a_dangling_link_as_file_target_is_one_line(tmp_path):
    link = tmp_path / "t.bin"
    link.symlink_to(tmp_path / "gone" / "t.bin")  # the caller's own link, to nothing
    r = clirun.cli("run", "fill", "--drive", f"file:{link}:1M", "--db", str(tmp_path / "r.db"))
    refused(r, "does not exist")
    link.unlink()
    link.symlink_to(tmp_path / "missing.bin")
    r = clirun.cli("run", "fill", "--drive", f"file:{link}:1M", "--db", str(tmp_path / "r.db"))
    refused(r, "a symlink to a missing file")
    assert not (tmp_path / "missing.bin").exists()


def test_serve_data_through_another_users_link_is_refused(sticky, victim, tmp_path):
    link = plant(sticky, "d.dat", victim)
    r = clirun.cli("serve", "sim:sn520-128", *SMALL, "--data", str(link), "--destroy-data", str(link),
                   "--socket", str(tmp_path / "s.sock"), "--seconds", "1", "--db", str(tmp_path / "r.db"))
    refused(r, "symlink owned by uid")
    dlink = plant(sticky, "sockdir", tmp_path)
    r = clirun.cli("serve", "sim:sn520-128", "--socket", str(dlink / "s.sock"), "--seconds", "1",
                   "--db", str(tmp_path / "r.db"))
    refused(r, f"{dlink} is a symlink owned by uid")
    assert victim.stat().st_size == 0 and not (tmp_path / "s.sock.ssdlab.json").exists()


def test_the_store_through_another_users_dangling_link_is_refused(sticky, victim, tmp_path):
    target = victim.parent / "made-by-root.sqlite"
    link = plant(sticky, "r.db", target)
    r = clirun.cli("run", "quick", "--drive", "sim:sn520-128", "--repeat", "1", "--seconds", "1", "--db", str(link))
    refused(r, "symlink owned by uid")
    assert not target.exists()
    own = tmp_path / "own.db"  # the caller's own dangling link: not created through either
    own.symlink_to(target)
    r = clirun.cli("results", "list", "--db", str(own))
    refused(r, "a symlink to a missing file")
    r = clirun.cli("run", "quick", "--drive", "sim:sn520-128", "--repeat", "1", "--seconds", "1", "--db", str(own))
    refused(r, "a symlink to a missing file")
    assert not target.exists()


def test_a_store_of_another_user_is_not_written(sticky):
    # its owner could change what was stored (a finished run's status included) or, in the
    # moment between the check and SQLite's open, swap it for a link; reading it is fine
    theirs = sticky / "r.db"
    as_nobody("touch", str(theirs))
    r = clirun.cli("run", "quick", "--drive", "sim:sn520-128", "--repeat", "1", "--seconds", "1", "--db", str(theirs))
    refused(r, f"refusing results store {theirs}", "belongs to uid", "use a store of your own")
    assert theirs.stat().st_size == 0 and sorted(p.name for p in sticky.iterdir()) == ["r.db"]


def test_links_planted_beside_the_store_are_named_before_it_is_made(sticky, victim):
    # SQLite opens the -wal, -shm and -journal files by name beside the store: it does not
    # follow a link there (O_NOFOLLOW), but then said only "unable to open database file"
    # after making an empty store; the link is named instead, and nothing is made
    victim.write_text("ROOT")
    for suffix in ("shm", "wal", "journal"):
        link = plant(sticky, f"r.db-{suffix}", victim)
        r = clirun.cli("run", "quick", "--drive", "sim:sn520-128", "--repeat", "1", "--seconds", "1",
                       "--db", str(sticky / "r.db"))
        refused(r, f"{link} is a symlink (owned by uid", "remove it")
        assert not (sticky / "r.db").exists() and victim.read_text() == "ROOT"
        link.unlink()


@pytest.fixture
def stored(tmp_path) -> Path:
    db = tmp_path / "r.db"
    clirun.cli("run", "quick", "--drive", "sim:sn520-128", "--repeat", "1", "--seconds", "1", "--db", str(db),
               check=True)
    return db


def test_reports_and_exports_replace_planted_links_and_leave_their_targets(sticky, victim, stored):
    victim.write_text("ROOT")
    out = sticky / "rep"
    out.mkdir()
    os.chmod(out, 0o1777)
    link = plant(out, "report.html", victim)
    r = clirun.cli("report", "--latest", "-o", str(out), "--db", str(stored))
    assert r.returncode == 0, r.stderr
    assert victim.read_text() == "ROOT"
    assert not os.path.islink(link) and os.stat(link).st_uid == 0 and "<html" in link.read_text()[:200].lower()
    assert not [p for p in out.iterdir() if p.name.startswith(".ssdlab-")]  # the private stage is gone
    exported = plant(sticky, "x.csv", victim)  # named itself: refused
    r = clirun.cli("results", "export", "1", "--format", "csv", "-o", str(exported), "--db", str(stored))
    refused(r, f"{exported} is a symlink owned by uid")
    assert victim.read_text() == "ROOT"
    mine = sticky / "mine.csv"  # a file of ours: replaced whole (a new file renamed over it)
    mine.write_text("old")
    r = clirun.cli("results", "export", "1", "--format", "csv", "-o", str(mine), "--db", str(stored))
    assert r.returncode == 0 and mine.read_text().startswith("run_id,"), r.stderr
    # the directory itself through another user's link: refused
    dlink = plant(sticky, "repdir", victim.parent)
    r = clirun.cli("report", "--latest", "-o", str(dlink), "--db", str(stored))
    refused(r, f"{dlink} is a symlink owned by uid")
    assert sorted(p.name for p in victim.parent.iterdir()) == ["empty_file"]


def test_fio_log_files_refuse_a_link_and_an_existing_name_before_the_run(sticky, victim, tmp_path):
    job = tmp_path / "j.fio"
    job.write_text("[a]\nrw=write\nbs=128k\nsize=64m\nwrite_bw_log=a\n")
    dlink = plant(sticky, "logs", victim.parent)
    db = tmp_path / "r.db"
    r = clirun.cli("run", "fio", str(job), "--drive", "sim:sn520-128", "--log-dir", str(dlink), "--db", str(db))
    refused(r, f"{dlink} is a symlink owned by uid")
    logs = tmp_path / "logs"
    logs.mkdir()
    r = clirun.cli("run", "fio", str(job), "--drive", "sim:sn520-128", "--log-dir", str(logs), "--db", str(db))
    assert r.returncode == 0 and (logs / "a_bw.1.log").exists(), r.stderr
    # the same --log-dir again, a name too long, a read-only directory: one line each, before the run
    r = clirun.cli("run", "fio", str(job), "--drive", "sim:sn520-128", "--log-dir", str(logs), "--db", str(db))
    refused(r, "a_bw.1.log exists")
    job.write_text(f"[a]\nrw=write\nbs=128k\nsize=64m\nwrite_bw_log={'x' * 300}\n")
    r = clirun.cli("run", "fio", str(job), "--drive", "sim:sn520-128", "--log-dir", str(logs), "--db", str(db))
    refused(r, "longer than the filesystem's")
    ro = tmp_path / "ro"
    ro.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "ro,size=1m", "tmpfs", str(ro)], check=True)
    try:
        r = clirun.cli("run", "fio", str(job), "--drive", "sim:sn520-128", "--log-dir", str(ro), "--db", str(db))
        refused(r, "no file can be made in", "Read-only file system")
    finally:
        subprocess.run(["umount", str(ro)], check=True)
    with sqlite3.connect(db) as c:  # only the run that could write its logs was stored
        assert c.execute("SELECT COUNT(*) FROM runs").fetchone()[0] == 1


def test_what_ssdlab_opens_itself_follows_no_link_put_there_after_the_check(sticky, victim):
    """The walk, then the open: a link that appears in between is refused by the kernel
    (O_NOFOLLOW on every component), not followed, even a link of the caller's own."""
    d = sticky / "d"
    d.mkdir()
    real = safe_path.real(d / "new.bin")
    os.symlink(victim, d / "new.bin")
    with pytest.raises(safe_path.UnsafePath, match="changed into a symlink"):
        safe_path.open_real(real, os.O_WRONLY)
    os.unlink(d / "new.bin")
    os.rename(d, sticky / "d.old")
    os.symlink(victim.parent, d)  # a directory swapped for a link
    with pytest.raises(safe_path.UnsafePath, match="changed into a symlink"):
        safe_path.open_real(real, os.O_WRONLY | os.O_CREAT | os.O_EXCL)
    assert sorted(p.name for p in victim.parent.iterdir()) == ["empty_file"]


def test_a_lock_directory_another_user_made_first_says_what_to_do(sticky, monkeypatch):
    # anyone can make /tmp/ssdlab-UID before UID's first run; "remove it" (the old advice)
    # is what that user cannot do in a sticky directory
    from ssdlab.targets.guard import locks, safety

    as_nobody("mkdir", str(sticky / "ssdlab-4242"))
    monkeypatch.setattr(locks.os, "geteuid", lambda: 4242)
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    monkeypatch.setenv("TMPDIR", str(sticky))
    with pytest.raises(safety.UnsafeTarget, match="another user, made it") as e:
        locks.lock_dir()
    assert "set XDG_RUNTIME_DIR or TMPDIR" in str(e.value) and "remove it and run again" not in str(e.value)
