"""A file target of a drive host's agent is the host's to size and to name: the client
asks for a size, the host's list (`file:/PATH:SIZE`, `file:/DIR/:SIZE`) says how large a
file may be (without a size: no larger than it is, and no new file), and a listed file
that is another account's, or has another name (a hard link), is not written."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import clirun
import pytest

SIZE = 64 << 10
HAVE_FIO = shutil.which("fio") is not None


def agent(requests: list[dict], *options: str) -> tuple[list[dict], subprocess.CompletedProcess]:
    return clirun.converse([*clirun.COMMAND, "agent", *options], requests)


def zero_write(spec: str) -> list[dict]:
    """Open the file (any consent), then a 64 KiB sequential write."""
    return [{"op": "hello", "proto": 1, "spec": spec},
            {"op": "open", "spec": spec, "destroy_data": spec},
            {"op": "run", "phase": {"kind": "io", "read_pct": 0, "pattern": "seq", "block_size": SIZE,
                                    "stop_bytes": SIZE}}]


def refusal(answers: list[dict]) -> str:
    errors = [a for a in answers if "error" in a]
    assert errors and errors[0]["type"] == "unsafe", answers
    return errors[0]["error"]


@pytest.fixture
def srv(tmp_path) -> Path:
    d = tmp_path / "srv"
    d.mkdir()
    return d


def test_a_listed_directory_without_a_size_lets_the_agent_make_no_file(srv):
    f = srv / "x.bin"
    answers, r = agent(zero_write(f"file:{f}:64K"), "--drives", f"file:{srv}/")
    msg = refusal(answers)
    assert f"refusing file:{f}:64K: this host's ssdlab agent may not create it (file:{srv}/ in --drives gives " \
           f"no size); the drive host's owner lists file:{srv}/:SIZE" in msg, msg
    assert not f.exists()


def test_the_hosts_size_caps_the_file_whatever_the_client_asks(srv):
    f = srv / "x.bin"
    free = shutil.disk_usage(srv).free
    for asked in (f"{free}", "2M"):  # all the free space of the filesystem; just above the cap
        answers, r = agent(zero_write(f"file:{f}:{asked}"), "--drives", f"file:{srv}/:1M")
        msg = refusal(answers)
        assert "this host's ssdlab agent lets it be at most 1048576 bytes" in msg, msg
        assert f"file:{srv}/:1048576 in --drives" in msg and msg.count("\n") == 0
        assert not f.exists()
    # the configuration file says it the same way; with both, the smaller allowance counts
    conf = srv.parent / "agent.toml"
    conf.write_text(f'drives = ["file:{srv}/:512K"]\n')
    os.chmod(conf, 0o644)
    answers, _ = agent(zero_write(f"file:{f}:1M"), "--drives", f"file:{srv}/:1M", "--config", str(conf))
    assert f"at most 524288 bytes (file:{srv}/:524288 in {conf})" in refusal(answers)
    hello = [{"op": "hello", "proto": 1, "spec": f"file:{f}:1M"}]
    answers, r = agent(hello, "--drives", f"file:{srv}/:1M")
    assert "ok" in answers[0], (answers, r.stderr)
    # a listed file with a size; the largest allowance of a source counts
    answers, _ = agent(hello, "--drives", f"file:{f}:1M")
    assert "ok" in answers[0], answers
    answers, _ = agent(hello, "--drives", f"file:{f}:256K,file:{srv}/:1M")
    assert "ok" in answers[0], answers
    assert not f.exists()


def test_without_a_size_a_listed_file_is_never_grown(srv):
    f = srv / "x.bin"
    f.write_bytes(bytes(SIZE))
    answers, _ = agent(zero_write(f"file:{f}:1G"), "--drives", f"file:{f}")
    msg = refusal(answers)
    assert f"at most {SIZE} bytes (the file's own size: file:{f} in --drives gives no larger size)" in msg, msg
    assert f.stat().st_size == SIZE
    answers, _ = agent([{"op": "hello", "proto": 1, "spec": f"file:{f}:64K"}], "--drives", f"file:{f}")
    assert "ok" in answers[0], answers


def test_a_size_in_the_list_is_checked_when_the_agent_starts(srv):
    hello = [{"op": "hello", "proto": 1, "spec": f"file:{srv}/x.bin:64K"}]
    for entry, words in ((f"file:{srv}/:1K", "too small"), (f"file:{srv}/:12Q", "size '12Q': use bytes")):
        answers, r = agent(hello, "--drives", entry)
        assert r.returncode == 2 and answers == [] and words in r.stderr, r.stderr
        assert r.stderr.count("\n") == 1
    # a ':' that is not a size stays part of the name
    odd = srv / "co:lon.bin"
    odd.write_bytes(bytes(SIZE))
    answers, _ = agent([{"op": "hello", "proto": 1, "spec": f"file:{odd}:64K"}], "--drives", f"file:{odd}")
    assert "ok" in answers[0], answers


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root (files of other users)")
@pytest.mark.skipif(not HAVE_FIO, reason="fio not installed")
def test_a_hard_link_or_another_users_file_in_a_listed_directory_is_not_written(srv, tmp_path):
    """A listed sticky directory others may write (as /srv/ssdlab/ shared by a lab): a hard
    link to a file of root's, which a user can make where fs.protected_hardlinks is 0 (here
    made by root, which the kernel always allows), or a file of another user there, is
    refused; the same file with one name and this account's owner is written."""
    os.chmod(srv, 0o1777)
    victim = tmp_path / "shadow-like"
    victim.write_bytes(os.urandom(SIZE))
    before = victim.read_bytes()
    link = srv / "x.bin"
    os.link(victim, link)
    answers, r = agent(zero_write(f"file:{link}:64K"), "--drives", f"file:{srv}/:1M")
    msg = refusal(answers)
    assert f"refusing file:{link}:64K: {link} has 2 names (hard links)" in msg, msg
    assert victim.read_bytes() == before
    theirs = srv / "theirs.bin"
    theirs.write_bytes(bytes(SIZE))
    os.chown(theirs, 65534, 65534)
    answers, _ = agent(zero_write(f"file:{theirs}:64K"), "--drives", f"file:{srv}/:1M")
    assert "belongs to uid 65534, not to the account this agent runs as" in refusal(answers)
    assert theirs.read_bytes() == bytes(SIZE)
    os.unlink(link)  # the victim has one name again: listed, its owner's, written
    answers, r = agent(zero_write(f"file:{victim}:64K"), "--drives", f"file:{victim}")
    assert [a for a in answers if "result" in a], (answers, r.stderr)
    assert victim.read_bytes() != before
