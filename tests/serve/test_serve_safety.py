"""`ssdlab serve` touches no file without consent and follows no planted link: --data
like a file: target (an existing file ssdlab did not write needs --destroy-data naming
it), the marker file `SOCKET.ssdlab.json` created new (O_EXCL|O_NOFOLLOW) and removed
only while it is still the one serve made, a marker another user wrote is not trusted,
the socket is its owner's alone, and a --tcp address that cannot be served is refused
before anything is stored."""

from __future__ import annotations

import json
import os
import shutil
import socket
import stat
import subprocess
import tempfile
from pathlib import Path

import pytest
from nbdserve import (
    TINY,
    cli,
    digest,
    nbdkit_export,
    needs_nbd,
    one_line_exit_2,
    served,
)

SETS = [x for s in TINY for x in ("--set", s)]
NOBODY = 65534
PYTHON = "/usr/bin/python3"  # one another user may run (not a venv under a private home)


def serve(tmp_path: Path, *args: str, seconds: str = "1") -> subprocess.CompletedProcess:
    return cli("serve", "sim:sn520-128", *SETS, "--seconds", seconds, "--db", str(tmp_path / "r.sqlite"),
               *args, check=False, timeout=300)


def test_an_existing_data_file_needs_destroy_data_naming_it(tmp_path):
    data = tmp_path / "precious.bin"
    data.write_bytes(os.urandom(1 << 20))
    before = digest(data)
    r = serve(tmp_path, "--data", str(data), "--socket", str(tmp_path / "d.sock"))
    one_line_exit_2(r, f"refusing --data {data}", "ssdlab did not write", f"--destroy-data={data}")
    r = serve(tmp_path, "--data", str(data), "--socket", str(tmp_path / "d.sock"),
              "--destroy-data", str(tmp_path / "other.bin"))
    one_line_exit_2(r, f"--destroy-data={data}")
    assert digest(data) == before and data.stat().st_size == 1 << 20
    assert not (tmp_path / "r.sqlite").exists()  # refused before the store was touched


def test_a_data_path_that_is_a_dangling_link_is_refused(tmp_path):
    target = tmp_path / "elsewhere" / "new.bin"
    target.parent.mkdir()
    (tmp_path / "d.bin").symlink_to(target)
    r = serve(tmp_path, "--data", str(tmp_path / "d.bin"), "--socket", str(tmp_path / "d.sock"))
    one_line_exit_2(r, "a symlink to a missing file")
    assert not target.exists() and not (tmp_path / "r.sqlite").exists()


def test_a_data_path_that_is_not_a_regular_file_is_refused(tmp_path):
    r = serve(tmp_path, "--data", "/dev/null", "--socket", str(tmp_path / "d.sock"))
    one_line_exit_2(r, "--data /dev/null: not a regular file")
    assert not (tmp_path / "r.sqlite").exists()


def test_only_loopback_addresses_count_as_this_machine_only():
    from ssdlab.serve.nbdkit import is_loopback

    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost")
    assert not is_loopback("0.0.0.0") and not is_loopback("::") and not is_loopback("192.0.2.1")


@needs_nbd
def test_data_serve_made_is_served_again_and_consent_serves_any(tmp_path):
    new = tmp_path / "new.bin"
    r = serve(tmp_path, "--data", str(new), "--socket", str(tmp_path / "a.sock"))
    assert r.returncode == 0, r.stderr
    assert new.stat().st_size >= 0.2e9  # sparse, the drive's size
    assert stat.S_IMODE(new.stat().st_mode) == 0o600
    r = serve(tmp_path, "--data", str(new), "--socket", str(tmp_path / "b.sock"))  # ssdlab's own file
    assert r.returncode == 0, r.stderr
    other = tmp_path / "other.bin"
    other.write_bytes(os.urandom(1 << 20))
    r = serve(tmp_path, "--data", str(other), "--socket", str(tmp_path / "c.sock"), "--destroy-data", str(other))
    assert r.returncode == 0, r.stderr


@pytest.fixture
def victim(tmp_path) -> Path:
    """A root-only file a planted link points at."""
    v = tmp_path / "secret"
    v.write_text("root only\n")
    v.chmod(0o600)
    return v


def test_a_link_planted_at_the_marker_path_is_refused_and_left_alone(tmp_path, victim):
    sock = tmp_path / "sn520.sock"
    marker = tmp_path / "sn520.sock.ssdlab.json"
    marker.symlink_to(victim)
    r = serve(tmp_path, "--socket", str(sock))
    one_line_exit_2(r, f"{marker} exists", "will not replace it")
    assert victim.read_text() == "root only\n" and stat.S_IMODE(victim.stat().st_mode) == 0o600
    assert marker.is_symlink() and os.readlink(marker) == str(victim)
    assert not sock.exists() and not (tmp_path / "r.sqlite").exists()


def test_an_existing_marker_file_is_refused_and_left_alone(tmp_path):
    sock = tmp_path / "sn520.sock"
    marker = tmp_path / "sn520.sock.ssdlab.json"
    marker.write_text("not ssdlab's\n")
    r = serve(tmp_path, "--socket", str(sock))
    one_line_exit_2(r, f"{marker} exists")
    assert marker.read_text() == "not ssdlab's\n" and not (tmp_path / "r.sqlite").exists()


@needs_nbd
def test_a_file_put_in_the_markers_place_while_serving_is_not_deleted(tmp_path):
    with served(tmp_path, TINY, tmp_path / "r.sqlite") as (sock, end):
        marker = Path(f"{sock}.ssdlab.json")
        doc = json.loads(marker.read_text())
        assert doc["pid"] > 0 and doc["socket"] == str(sock)
        assert stat.S_IMODE(os.stat(sock).st_mode) == 0o600  # the socket: its owner's alone
        tmp = tmp_path / "replacement"
        tmp.write_text("someone else's\n")
        os.replace(tmp, marker)
        end()
    assert marker.read_text() == "someone else's\n"
    assert not sock.exists()  # the socket serve made is removed


@needs_nbd
@pytest.mark.skipif(os.geteuid() != 0, reason="needs root (a file of another user)")
@pytest.mark.parametrize("owner", [NOBODY, 0])
def test_a_forged_marker_is_not_consent(tmp_path, owner):
    """A marker written by another user, or one that does not name the socket's inode
    and a live serve process, does not make an export a served simulated drive."""
    sock = tmp_path / "img.sock"
    image = tmp_path / "disk.img"
    image.write_bytes(os.urandom(64 << 20))
    before = digest(image)
    with nbdkit_export(sock, "file", str(image)):
        marker = tmp_path / "img.sock.ssdlab.json"
        st = os.stat(sock)
        marker.write_text(json.dumps({"pid": os.getpid(), "socket": str(sock), "drive": "sim:sn520-128",
                                      "socket_id": [st.st_dev, st.st_ino] if owner else None}))
        os.chown(marker, owner, owner)
        r = cli("run", "fill", "--drive", f"nbd:{sock}", "--db", str(tmp_path / "r.sqlite"), check=False)
        one_line_exit_2(r, "not a drive `ssdlab serve` is serving", f"--destroy-data nbd:{sock}")
    assert digest(image) == before


@needs_nbd
@pytest.mark.skipif(os.geteuid() != 0 or not os.path.exists(PYTHON), reason="needs root (another user to connect as)")
def test_another_user_cannot_connect_to_the_socket(tmp_path):
    pub = Path(tempfile.mkdtemp(prefix="nbdp", dir="/tmp"))
    try:
        pub.chmod(0o755)  # the directory does not stop anyone: the socket's mode must
        with served(tmp_path, TINY, tmp_path / "r.sqlite", sock=pub / "s.sock") as (sock, _end):
            code = "import socket,sys; s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])"
            r = subprocess.run([PYTHON, "-c", code, str(sock)], user=NOBODY, group=NOBODY,
                               check=False, capture_output=True, text=True, timeout=60)
            assert r.returncode != 0 and "PermissionError" in r.stderr, r.stderr
    finally:
        shutil.rmtree(pub, ignore_errors=True)


@pytest.fixture
def busy_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen(1)
        yield s.getsockname()[1]


@pytest.mark.parametrize("tcp, words", [
    ("[]:10809", ["--tcp []:10809", "give the address to listen on"]),
    (":10809", ["give the address to listen on"]),
    ("::1:10809", ["IPv6 address in brackets"]),
    ("127.0.0.1:0", ["port 0 is out of range; give 1 to 65535"]),
    ("127.0.0.1:１２", ["expected HOST:PORT"]),
    ("192.0.2.1:10809", ["not an address of this machine"]),
    ("no-such-host.invalid:10809", ["cannot resolve 'no-such-host.invalid'"]),
    ("127.0.0.1:{busy}", ["the port is in use"]),
])
def test_a_tcp_address_that_cannot_be_served_is_refused_before_anything_is_stored(tmp_path, busy_port,
                                                                                   tcp, words):
    tcp = tcp.format(busy=busy_port)
    r = serve(tmp_path, "--tcp", tcp)
    one_line_exit_2(r, *(w.format(busy=busy_port) for w in words))
    assert not (tmp_path / "r.sqlite").exists()


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root (a directory of another user)")
def test_a_socket_in_a_directory_another_user_may_write_is_refused(tmp_path):
    # nbdkit binds the socket by name and serve then makes it its owner's alone: the owner
    # of the directory could swap it for a link in between, and the mode went to the
    # link's target
    theirs = Path(tempfile.mkdtemp(prefix="nbdt", dir="/tmp"))
    try:
        os.chown(theirs, NOBODY, NOBODY)
        r = serve(tmp_path, "--socket", str(theirs / "s.sock"))
        one_line_exit_2(r, f"refusing --socket {theirs / 's.sock'}", f"directory {theirs} may be written")
        assert list(theirs.iterdir()) == [] and not (tmp_path / "r.sqlite").exists()
    finally:
        shutil.rmtree(theirs, ignore_errors=True)


def test_the_sockets_mode_is_changed_on_the_socket_never_through_a_link(tmp_path, victim):
    from ssdlab.served import marker

    link = tmp_path / "s.sock"
    link.symlink_to(victim)
    assert marker.private_socket(link) is None
    assert stat.S_IMODE(victim.stat().st_mode) == 0o600 and victim.read_text() == "root only\n"
    victim.chmod(0o644)
    assert marker.private_socket(link) is None and stat.S_IMODE(victim.stat().st_mode) == 0o644
    with socket.socket(socket.AF_UNIX) as s:
        s.bind(str(tmp_path / "real.sock"))
        os.chmod(tmp_path / "real.sock", 0o777)
        st = os.lstat(tmp_path / "real.sock")
        assert marker.private_socket(tmp_path / "real.sock") == (st.st_dev, st.st_ino)
        assert stat.S_IMODE(os.lstat(tmp_path / "real.sock").st_mode) == 0o600


def test_a_data_file_served_now_is_not_served_twice(tmp_path):
    """Two drives on one data file would write each other's data: the second serve (or a
    run on the file as a file: target) is refused while the first serves it."""
    data = tmp_path / "d.bin"
    with served(tmp_path, TINY, tmp_path / "r.sqlite", extra=("--data", str(data))):
        r = serve(tmp_path, "--data", str(data), "--socket", str(tmp_path / "b.sock"))
        one_line_exit_2(r, "d.bin")
        assert "in use" in r.stderr or "locked" in r.stderr or "another" in r.stderr, r.stderr
    assert not (tmp_path / "b.sock").exists()
