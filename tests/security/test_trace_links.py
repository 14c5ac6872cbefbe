"""A trace is read by its own path, never through a link another user planted (in /tmp,
say): such a link could make root read, and quote in its error, a file only root may read."""

from __future__ import annotations

import os
from pathlib import Path

from bounded import refused, run_cli, stored_runs
from otheruser import as_nobody, needs_other_user, sticky  # noqa: F401 (fixtures)

pytestmark = needs_other_user


def test_a_trace_through_another_users_link_is_refused_unread(sticky: Path, tmp_path: Path) -> None:
    d = tmp_path / "root-only"
    d.mkdir(mode=0o700)
    secret = d / "secret"
    secret.write_text("SECRET-LINE,of,a,file,only,root,reads\n")
    link = sticky / "trace.log"
    as_nobody("ln", "-s", str(secret), str(link))
    assert os.lstat(link).st_uid != 0
    db = tmp_path / "r.sqlite"
    for fmt in ([], ["--format", "fio"], ["--format", "msr"]):
        r = run_cli("run", "trace", "--trace", str(link), *fmt, "--drive", "sim:sn520-128", "--db", str(db))
        line = refused(r, str(link), "symlink")
        assert "SECRET" not in r.stderr + r.stdout, line
    assert stored_runs(db) == 0


def test_a_trace_of_the_callers_own_link_is_read(tmp_path: Path) -> None:
    f = tmp_path / "t.csv"
    f.write_text("time_us,op,offset_bytes,length_bytes\n0,write,0,4096\n")
    (tmp_path / "link.csv").symlink_to(f)
    from ssdlab.traces import load

    assert len(load(tmp_path / "link.csv")) == 1
