"""The directories ssdlab makes (a results store's, a report's, missing parents included)
are never ones another user may write, whatever the umask: under `umask 000` (a service's,
a container's) they were made mode 0777, then refused as directories others may write
(`--db` and `-o` both), and left behind world-writable for anyone to fill or plant links in."""

from __future__ import annotations

import os
import stat

import clirun
from ssdlab import safe_path

SMALL = ["--drive", "sim:tlc-256", "--set", "user_capacity_gb=0.5"]


def no_umask() -> None:
    os.umask(0)


def modes(top, leaf) -> list[int]:
    out, d = [], leaf
    while True:
        out.append(stat.S_IMODE(os.lstat(d).st_mode))
        if d == top:
            return out
        d = d.parent


def test_a_store_and_a_report_in_new_directories_under_umask_0(tmp_path):
    db = tmp_path / "new" / "store" / "r.sqlite"
    r = clirun.cli("run", "fill", *SMALL, "--db", str(db), preexec_fn=no_umask)
    assert r.returncode == 0, r.stderr
    assert all(not m & 0o022 for m in modes(tmp_path / "new", db.parent)), modes(tmp_path / "new", db.parent)
    out = tmp_path / "reports" / "fill"
    r = clirun.cli("report", "--latest", "-o", str(out), "--db", str(db), preexec_fn=no_umask)
    assert r.returncode == 0, r.stderr
    assert (out / "report.html").is_file()
    assert all(not m & 0o022 for m in modes(tmp_path / "reports", out)), modes(tmp_path / "reports", out)


def test_a_new_directory_inherits_no_write_for_others_from_a_default_acl(tmp_path):
    """A default ACL of the parent naming another user (setfacl -d -m u:nobody:rwx) is not
    passed on as that user's write to what ssdlab makes."""
    parent = tmp_path / "shared"
    parent.mkdir(mode=0o755)
    nobody = 65534
    # system.posix_acl_default: version 2, then (tag, perm, id): user::rwx, user:nobody:rwx,
    # group::r-x, mask::rwx, other::r-x
    entries = [(0x01, 7, 0xFFFFFFFF), (0x02, 7, nobody), (0x04, 5, 0xFFFFFFFF), (0x10, 7, 0xFFFFFFFF),
               (0x20, 5, 0xFFFFFFFF)]
    blob = (2).to_bytes(4, "little") + b"".join(t.to_bytes(2, "little") + p.to_bytes(2, "little")
                                                 + i.to_bytes(4, "little") for t, p, i in entries)
    try:
        os.setxattr(parent, "system.posix_acl_default", blob)
    except OSError as e:  # a filesystem without ACLs: nothing to inherit
        import pytest

        pytest.skip(f"no POSIX ACLs here ({e.strerror})")
    safe_path.make_dirs(parent / "a" / "b")
    for d in (parent / "a", parent / "a" / "b"):
        assert not safe_path.others_may_write(os.lstat(d), str(d)), d
