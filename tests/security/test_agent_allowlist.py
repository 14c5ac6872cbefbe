"""The agent decides what its host allows: JSON lines of the holder's own making, piped
straight into `ssdlab agent` (what a key restricted to `command="ssdlab agent"` lets its
holder send), never write a drive the host's list does not name, whatever `destroy_data`
says. The list comes from `--drives` or a configuration file only root (or the agent's own
account) can write; anything else is refused before a request is read."""

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


def zero_write(spec: str, destroy_data: str | None) -> list[dict]:
    """The reproduction: open a file with any consent, then a 64 KiB sequential write."""
    return [{"op": "hello", "proto": 1, "spec": spec},
            {"op": "open", "spec": spec, "destroy_data": destroy_data},
            {"op": "run", "phase": {"kind": "io", "read_pct": 0, "pattern": "seq", "block_size": SIZE,
                                    "stop_bytes": SIZE}}]


@pytest.fixture
def planted(tmp_path) -> Path:
    f = tmp_path / "planted"
    f.write_bytes(os.urandom(SIZE))
    return f


def test_an_agent_without_a_list_writes_nothing_whatever_the_client_consents(planted):
    before = planted.read_bytes()
    spec = f"file:{planted}:64K"
    for consent in (None, str(planted), spec):
        answers, r = agent(zero_write(spec, consent))
        assert r.returncode == 0, r.stderr
        hello, opened, ran = answers[:3]
        assert hello["type"] == opened["type"] == "unsafe", answers
        assert "may test no drive" in opened["error"] and "--drives" in opened["error"]
        assert ran == {"error": "no drive is open on this connection", "type": "value"}
    assert planted.read_bytes() == before
    # a new file elsewhere is not created either
    new = planted.parent / "cron.d-like" / "job"
    new.parent.mkdir()
    agent(zero_write(f"file:{new}:64K", str(new)))
    assert not new.exists()


def test_a_list_lets_the_agent_test_only_what_it_names(planted, tmp_path):
    before = planted.read_bytes()
    spec = f"file:{planted}:64K"
    other = tmp_path / "listed.bin"
    # another file, a directory beside it, a block device: not this file
    for listed in (f"file:{other}", f"file:{tmp_path / 'sub'}/", "/dev/null"):
        answers, r = agent(zero_write(spec, str(planted)), "--drives", listed)
        errors = [a["error"] for a in answers if "error" in a]
        assert errors and "may not test it (not in --drives)" in errors[0], (listed, answers, r.stderr)
    assert planted.read_bytes() == before
    # `..` cannot lead out of a listed directory
    (tmp_path / "sub").mkdir()
    answers, _ = agent(zero_write(f"file:{tmp_path}/sub/../planted:64K", None), "--drives",
                       f"file:{tmp_path}/sub/")
    assert "without '..'" in answers[0]["error"]
    assert planted.read_bytes() == before


@pytest.mark.skipif(not HAVE_FIO, reason="fio not installed")
def test_a_listed_file_is_the_hosts_consent(planted):
    """The same requests write the file once the host lists it (so the refusals above are
    the list's doing): the client's destroy_data (none here) is not asked."""
    before = planted.read_bytes()
    answers, r = agent(zero_write(f"file:{planted}:64K", None), "--drives", f"file:{planted.parent}/")
    assert [a for a in answers if "result" in a], (answers, r.stderr)
    assert planted.read_bytes() != before


def test_the_configuration_file_counts_only_when_no_one_else_can_write_it(planted, tmp_path):
    conf = tmp_path / "agent.toml"
    conf.write_text(f'drives = ["file:{planted}"]\n')
    os.chmod(conf, 0o644)
    spec = f"file:{planted}:64K"
    hello = [{"op": "hello", "proto": 1, "spec": spec}]
    answers, r = agent(hello, "--config", str(conf))
    assert "ok" in answers[0], (answers, r.stderr)
    os.chmod(conf, 0o664)  # group-writable: refused before any request is read
    answers, r = agent(hello, "--config", str(conf))
    assert r.returncode == 2 and answers == [] and "chmod go-w" in r.stderr, r.stderr
    assert r.stderr.count("\n") == 1
    os.chmod(conf, 0o644)
    # both sources: a drive must be in both
    answers, _ = agent(hello, "--config", str(conf), "--drives", "/dev/null")
    assert "not in --drives" in answers[0]["error"]
    # a missing --config, a bad entry, a file that is not TOML: exit 2, one line
    for options, words in ((["--config", str(tmp_path / "none.toml")], "does not exist"),
                           (["--drives", "sdb"], "is not a drive the agent may test"),
                           (["--drives", "file:/srv/../etc/"], "without '..'")):
        answers, r = agent(hello, *options)
        assert r.returncode == 2 and words in r.stderr and r.stderr.count("\n") == 1, (options, r.stderr)
    conf.write_text("drives = [")
    answers, r = agent(hello, "--config", str(conf))
    assert r.returncode == 2 and "not TOML" in r.stderr


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root (a file of another user)")
def test_a_configuration_of_another_user_or_through_their_link_is_refused(planted, tmp_path):
    nobody = 65534
    conf = tmp_path / "agent.toml"
    conf.write_text(f'drives = ["file:{planted}"]\n')
    os.chown(conf, nobody, nobody)
    hello = [{"op": "hello", "proto": 1, "spec": f"file:{planted}:64K"}]
    answers, r = agent(hello, "--config", str(conf))
    assert r.returncode == 2 and "must belong to root" in r.stderr, r.stderr
    os.chown(conf, 0, 0)
    link = tmp_path / "link.toml"
    os.symlink(conf, link)
    os.lchown(link, nobody, nobody)
    answers, r = agent(hello, "--config", str(link))
    assert r.returncode == 2 and "symlink owned by uid 65534" in r.stderr, r.stderr


def test_a_refusal_tells_the_client_nothing_of_a_path_the_host_did_not_list(tmp_path, planted):
    """Whether an unlisted path exists, is a directory, a device, a FIFO, a link or a file
    with other names: the client learns none of it (the agent may run as root, and the
    key's holder may run nothing else on the host)."""
    (tmp_path / "listed").mkdir()
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    linked = tmp_path / "linked"
    os.link(planted, linked)
    probes = [f"file:{planted}/x:64K",  # a file, not a directory
              f"file:{tmp_path}/no/such/dir/x:64K",  # missing
              f"file:{tmp_path}/no-such-file:64K",
              f"file:{fifo}:64K", f"file:{linked}:64K", "file:/dev/null:64K",
              "/dev/null", "/dev/no-such-device", f"/dev/{planted.name}"]
    requests = [{"op": "hello", "proto": 1, "spec": s} for s in probes]
    answers, r = agent(requests, "--drives", f"file:{tmp_path}/listed/:1G")
    assert r.returncode == 0, r.stderr
    answers = answers[:len(probes)]  # then the close's
    assert all("error" in a for a in answers), answers
    said = {a["error"].replace(s, "SPEC") for a, s in zip(answers, probes)}
    assert len(said) == 1 and all(a["type"] == "unsafe" for a in answers), answers
    assert "may not test it (not in --drives)" in said.pop()
