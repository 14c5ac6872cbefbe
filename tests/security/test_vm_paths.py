"""`python -m ssdlab.serve.nvme_vm` runs as root (sudo): QEMU opens each --file by name
and the guest, as root, overwrites it whole (a fill of /dev/nvme0n1) or writes into each
--rwdir. A second account (`nobody`) plants links and files in a sticky directory, as
anyone can in /tmp: a backing or a results directory through their link, or of theirs,
is refused with one line and exit status 2 before anything boots, and root's files are
left as they were. Nothing is booted here: `run` is replaced by a recorder."""

from __future__ import annotations

import os
import socket

import pytest
from otheruser import as_nobody, needs_other_user, secrets_dir, sticky  # noqa: F401 (fixtures)

from ssdlab.serve import nvme_vm

pytestmark = needs_other_user


@pytest.fixture
def boots(monkeypatch) -> list:
    """What would have booted (the namespaces and the rwdirs), instead of booting."""
    seen: list = []
    monkeypatch.setattr(nvme_vm, "why_not", lambda: None)
    monkeypatch.setattr(nvme_vm, "accel", lambda: ("kvm", ""))
    monkeypatch.setattr(nvme_vm, "run", lambda ns, cmd, **k: seen.append((ns, k["rwdirs"])) or nvme_vm.Result(0, "", ""))
    return seen


def refused(capsys, argv: list[str], *words: str) -> None:
    assert nvme_vm.main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and all(w in err for w in words), err


def test_a_backing_file_through_another_users_link_or_of_theirs_is_refused(sticky, secrets_dir, boots, capsys):
    link = sticky / "ns.img"
    as_nobody("ln", "-s", str(secrets_dir / "key"), str(link))
    refused(capsys, ["--file", str(link)], f"refusing --file {link}", "symlink owned by uid")
    theirs = sticky / "theirs.img"
    as_nobody("truncate", "-s", "1M", str(theirs))
    refused(capsys, ["--file", str(theirs)], f"refusing --file {theirs}", "another user")
    dlink = sticky / "d"  # a directory link of theirs above the file
    as_nobody("ln", "-s", str(secrets_dir), str(dlink))
    refused(capsys, ["--file", str(dlink / "key")], "symlink owned by uid")
    assert boots == [] and (secrets_dir / "key").read_text() == "ROOT"


def test_a_results_directory_through_another_users_link_or_of_theirs_is_refused(sticky, secrets_dir, boots,
                                                                               capsys, tmp_path):
    img = tmp_path / "ns,1.img"
    img.write_bytes(b"")
    os.truncate(img, 1 << 20)
    link = sticky / "results"
    as_nobody("ln", "-s", str(secrets_dir), str(link))
    refused(capsys, ["--file", str(img), "--rwdir", str(link)], f"refusing --rwdir {link}", "symlink owned by uid")
    theirs = sticky / "theirs"
    as_nobody("mkdir", str(theirs))
    refused(capsys, ["--file", str(img), "--rwdir", str(theirs)], f"refusing --rwdir {theirs}", "another user")
    assert boots == []
    mine = tmp_path / "results"
    mine.mkdir()
    assert nvme_vm.main(["--file", str(img), "--rwdir", str(mine)]) == 0
    (ns,), rwdirs = boots[0]
    assert ns.backing == str(img) and rwdirs == [mine]
    # QEMU reads a ',' as the start of another option: the path's own are written twice
    assert f"file={str(img).replace(',', ',,')},if=none" in " ".join(nvme_vm.qemu_args([ns]))


def test_a_socket_through_another_users_link_is_refused(sticky, boots, capsys, tmp_path):
    sock = tmp_path / "drive.sock"
    with socket.socket(socket.AF_UNIX) as s:
        s.bind(str(sock))
        link = sticky / "drive.sock"
        as_nobody("ln", "-s", str(sock), str(link))
        refused(capsys, ["--nbd", str(link)], f"refusing --nbd {link}", "symlink owned by uid")
        assert boots == []
        assert nvme_vm.main(["--nbd", str(sock)]) == 0
    assert boots[0][0][0].backing == f"nbd+unix:///?socket={sock}"
