"""A directory another user may write through a POSIX ACL (`setfacl -m u:nobody:rwx DIR`)
is one others may write (safe_path.others_may_write): its mode shows only the ACL's mask
as the group's bits (0775, group root: a group of root alone), and was taken for root's
alone. A file target there was written by fio and fallocate by name: `nobody` swapped it
for a link between ssdlab's checks and the purge, and a root-only file was zeroed."""

from __future__ import annotations

import errno
import os
import struct
from pathlib import Path

import clirun
import pytest

from otheruser import as_nobody, needs_other_user, sticky  # noqa: F401 (fixtures)
from ssdlab import safe_path

pytestmark = needs_other_user
NOBODY_UID = 65534
UNDEFINED = 0xFFFFFFFF
USER_OBJ, USER, GROUP_OBJ, GROUP, MASK, OTHER = 0x01, 0x02, 0x04, 0x08, 0x10, 0x20


def set_acl(path: Path, *named: tuple[int, int, int], mask: int = 7) -> None:
    """The access ACL of `path` (as setfacl writes it): rwx for its owner, r-x for its group
    and others, and the `named` entries (tag, id, perm), under `mask`."""
    entries = [(USER_OBJ, 7, UNDEFINED), *((t, p, i) for t, i, p in named), (GROUP_OBJ, 5, UNDEFINED),
               (MASK, mask, UNDEFINED), (OTHER, 5, UNDEFINED)]
    data = struct.pack("<I", 2) + b"".join(struct.pack("<HHI", t, p, i) for t, p, i in sorted(entries))
    try:
        os.setxattr(path, "system.posix_acl_access", data)
    except OSError as e:
        if e.errno in (errno.EOPNOTSUPP, errno.ENOTSUP):
            pytest.skip(f"no POSIX ACLs on the filesystem of {path}")
        raise


@pytest.fixture
def acl_dir(sticky) -> Path:
    d = sticky / "shared"  # (in /tmp: a directory nobody may enter)
    d.mkdir(mode=0o755)
    set_acl(d, (USER, NOBODY_UID, 7))
    as_nobody("touch", str(d / "nobody-can-write-here"))  # the ACL does let them
    return d


def test_a_directory_an_acl_lets_another_user_write_is_refused(acl_dir, tmp_path):
    assert oct(acl_dir.stat().st_mode & 0o777) == "0o775" and acl_dir.stat().st_gid == 0
    with pytest.raises(safe_path.UnsafePath, match="an ACL that names them"):
        safe_path.check_dirs(str(acl_dir / "t.bin"), "file:t.bin")
    # named entries of root's, or a mask that takes write away, let no one else write
    fine = tmp_path / "fine"
    fine.mkdir(mode=0o755)
    set_acl(fine, (USER, 0, 7))
    safe_path.check_dirs(str(fine / "t.bin"), "file:t.bin")
    set_acl(fine, (USER, NOBODY_UID, 7), mask=5)
    safe_path.check_dirs(str(fine / "t.bin"), "file:t.bin")
    set_acl(fine, (GROUP, 65534, 7))  # nogroup: a group of another user
    with pytest.raises(safe_path.UnsafePath):
        safe_path.check_dirs(str(fine / "t.bin"), "file:t.bin")


def test_a_file_target_or_store_in_such_a_directory_is_refused_and_nothing_written(acl_dir, tmp_path):
    before = sorted(p.name for p in acl_dir.iterdir())
    r = clirun.cli("run", "quick", "--repeat", "1", "--seconds", "1", "--drive", f"file:{acl_dir}/t.bin:64M",
                   "--db", str(tmp_path / "r.db"))
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "an ACL that names them" in r.stderr, r.stderr
    r = clirun.cli("run", "quick", "--repeat", "1", "--seconds", "1", "--drive", "sim:sn520-128",
                   "--db", str(acl_dir / "r.db"))
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "an ACL that names them" in r.stderr, r.stderr
    assert sorted(p.name for p in acl_dir.iterdir()) == before
