"""A directory its group may write is another user's way in only if the group has another
member. Debian and Ubuntu give each user a group of their own (a user private group) and
a umask of 002, so the directories a user makes are group-writable: those are the user's
alone, and a report, a store or a served drive's socket may go there. A group with anyone
else in it, as a member or as their primary group, and a group the databases do not know,
are others' way in."""

from __future__ import annotations

import grp
import os
import pwd
import stat
from types import SimpleNamespace

import pytest

from ssdlab import safe_path

ME, OTHER, GID = os.geteuid(), 4321, 777


@pytest.fixture
def groups(monkeypatch):
    """Group GID with the given members; users (name, uid, primary gid)."""
    def setup(members: list[str], users: list[tuple[str, int, int]], known: bool = True, gid: int = GID):
        safe_path._private_group.cache_clear()
        entries = [SimpleNamespace(pw_name=n, pw_uid=u, pw_gid=g) for n, u, g in users]

        def getgrgid(asked):
            if asked != gid or not known:
                raise KeyError(asked)
            return SimpleNamespace(gr_mem=members)

        def getpwnam(name):
            for e in entries:
                if e.pw_name == name:
                    return e
            raise KeyError(name)

        monkeypatch.setattr(grp, "getgrgid", getgrgid)
        monkeypatch.setattr(pwd, "getpwnam", getpwnam)
        monkeypatch.setattr(pwd, "getpwall", lambda: entries)
    yield setup
    safe_path._private_group.cache_clear()


def st(mode: int) -> os.stat_result:
    return os.stat_result((stat.S_IFDIR | mode, 0, 0, 2, ME, GID, 4096, 0, 0, 0))


def test_a_user_private_group_lets_no_one_else_in(groups):
    groups([], [("me", ME, GID), ("root", 0, 0), ("other", OTHER, 100)])
    assert not safe_path.others_may_write(st(0o775))
    assert not safe_path.others_may_write(st(0o755))


@pytest.mark.parametrize("members, other_gid, known", [
    (["other"], 100, True),  # another member
    ([], GID, True),  # another user's primary group
    ([], 100, False),  # a group the databases do not know
    (["ghost"], 100, True),  # a member the password database does not know
])
def test_a_group_with_anyone_else_in_it_is_their_way_in(groups, members, other_gid, known):
    groups(members, [("me", ME, GID), ("other", OTHER, other_gid)], known)
    assert safe_path.others_may_write(st(0o775))
    assert not safe_path.others_may_write(st(0o755))
    assert not safe_path.others_may_write(st(0o1775))  # sticky: others cannot rename what is not theirs


def test_world_writable_is_everyones_unless_sticky(groups):
    groups([], [("me", ME, GID)])
    assert safe_path.others_may_write(st(0o757))
    assert not safe_path.others_may_write(st(0o1777))


def test_a_report_goes_into_a_directory_of_a_private_group(groups, tmp_path):
    """End to end through the report directory's check: group-writable, its group private."""
    d = tmp_path / "reports"
    d.mkdir()
    os.chmod(d, 0o775)
    gid = os.stat(d).st_gid
    groups([], [("me", ME, gid), ("root", 0, 0)], gid=gid)
    assert safe_path.own_dir(d / "out") == str((d / "out").resolve())
    groups(["other"], [("me", ME, gid), ("other", OTHER, 100)], gid=gid)
    with pytest.raises(safe_path.UnsafePath, match="may be written by users other than"):
        safe_path.own_dir(d / "out2" / "sub")
    assert not (d / "out2").exists()  # refused before anything is made
