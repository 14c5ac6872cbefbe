"""`--drive nbd:...` consent: ssdlab must check the export libnbd (fio's nbd engine)
actually connects to. A served simulated drive needs no --destroy-data; any other export
does. Each hostile spec below names a served drive to the check and a real nbdkit `file`
export of a disk image to libnbd (or could, read differently): it is refused with one
line and exit 2, and the image stays as it was."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest
from nbdserve import (
    TINY,
    accepts,
    cli,
    digest,
    nbdkit_export,
    needs_nbd,
    one_line_exit_2,
    served,
    wait_for,
)
from otheruser import as_nobody, needs_other_user, sticky  # noqa: F401 (fixtures)
from ssdlab.targets.fio import nbd_uri


# one worker runs this module: `exports` (a module fixture) is made once
pytestmark = pytest.mark.xdist_group("nbd_consent")


@pytest.fixture(scope="module")
def exports(tmp_path_factory):
    """A served simulated drive and an nbdkit file export of a 64 MiB image, in a short
    directory (socket paths are at most 107 bytes)."""
    base = Path(tempfile.mkdtemp(prefix="nbdc", dir="/tmp"))
    image = base / "disk.img"
    image.write_bytes(os.urandom(64 << 20))
    other = base / "o.sock"
    try:
        with nbdkit_export(other, "file", str(image)), \
                served(base, TINY, base / "serve.sqlite", sock=base / "s.sock") as (sock, _end):
            yield {"base": base, "image": image, "sum": digest(image), "served": sock, "other": other}
    finally:
        shutil.rmtree(base, ignore_errors=True)


HOSTILE = [
    # libnbd takes the last socket=; a check that reads the first sees the served drive
    ("nbd+unix:///?socket={served}&socket={other}", ["parameter 'socket' is given twice"]),
    ("nbd+unix:///?socket={served}&%73ocket={other}", ["parameter 'socket' is given twice"]),
    # libnbd splits on ';' when there is no '&'
    ("nbd+unix:///?socket={served};socket={other}", ["character ';'"]),
    # a NUL ends the C string libnbd connects to
    ("nbd+unix:///?socket={other}%00{served}", ["control character"]),
    ("nbd+unix:///?socket={served}&tls-bogus=1", ["unknown URI parameter 'tls-bogus'"]),
    ("nbd+unix:///?socket={served}#&socket={other}", ["character '#'"]),
    ("nbd+unix://localhost/?socket={served}", ["no host or port"]),
    ("nbd+unix:///?socket=o.sock", ["must be an absolute path"]),
    ("nbd+unix:///?socket={served}&socket", ["is not NAME=VALUE"]),
    ("nbd://localhost:10809/?socket={served}", ["socket= belongs to a Unix-socket URI"]),
    ("NBD+UNIX:///?socket={served}", ["an NBD URI starts with"]),
]


@needs_nbd
@pytest.mark.parametrize("uri, words", HOSTILE, ids=[u for u, _ in HOSTILE])
def test_a_uri_libnbd_could_read_differently_is_refused(exports, uri, words):
    spec = "nbd:" + uri.format(served=exports["served"], other=exports["other"])
    db = exports["base"] / "hostile.sqlite"
    r = cli("run", "fill", "--drive", spec, "--db", str(db), check=False, timeout=300)
    one_line_exit_2(r, *words)
    assert digest(exports["image"]) == exports["sum"]
    assert not db.exists()


@needs_nbd
def test_a_socket_path_with_uri_syntax_in_it_reaches_that_socket(exports):
    """`nbd:PATH` where PATH reads as a second socket= when pasted into a URI unescaped:
    the URI fio gets carries the path escaped, so it writes the served drive at PATH."""
    base, other = exports["base"], exports["other"]
    sock = Path(f"{base}/x&socket={other}")
    sock.parent.mkdir(parents=True)
    db = base / "path.sqlite"
    with served(base, TINY, base / "serve2.sqlite", sock=sock) as (s, end):
        r = cli("run", "fill", "--drive", f"nbd:{s}", "--db", str(db), "--json", check=False, timeout=600)
        assert r.returncode == 0, r.stderr[-2000:]
        written = end()["metrics"]["host_write_bytes"]
    assert written >= 0.24e9  # the fill went to the served drive...
    assert digest(exports["image"]) == exports["sum"]  # ...and not to the image


@needs_nbd
def test_one_export_given_two_ways_is_one_drive(exports):
    s = exports["served"]
    r = cli("run", "fill", "--drive", f"nbd:{s}", "--drive", f"nbd:nbd+unix:///?socket={s}",
            "--db", str(exports["base"] / "twice.sqlite"), check=False, timeout=120)
    one_line_exit_2(r, "the same drive as --drive nbd:")


def test_the_uri_given_to_fio_is_rebuilt_from_what_was_checked():
    u = nbd_uri.parse("nbd+unix:///exp%2Fa?tls-psk-file=/k%20s&socket=/run/a%26b.sock")
    assert (u.transport, u.socket, u.export, u.params) == ("unix", "/run/a&b.sock", "exp/a",
                                                         {"tls-psk-file": "/k s"})
    assert u.text == "nbd+unix:///exp%2Fa?socket=/run/a%26b.sock&tls-psk-file=/k%20s"
    assert nbd_uri.parse(u.text) == u
    t = nbd_uri.parse("nbds://alice@[::1]:10810/x")
    assert (t.transport, t.tls, t.user, t.host, t.port, t.export) == ("tcp", True, "alice", "[::1]", 10810, "x")
    assert nbd_uri.parse(t.text) == t
    # a path with URI syntax and fio job-file syntax in it: escaped, and read back whole
    p = nbd_uri.unix("/tmp/a&socket=/b.sock")
    assert p.socket == "/tmp/a&socket=/b.sock" and "&socket=/b" not in p.text
    assert nbd_uri.parse(nbd_uri.unix("/t/$x y").text).socket == "/t/$x y"
    assert "$" not in nbd_uri.unix("/t/$x").text


@pytest.mark.parametrize("uri, words", [
    ("nbd://host:0/", ["port '0'"]),
    ("nbd://host:99999/", ["port '99999'"]),
    ("nbd://ho$t/", ["character '$'"]),
    ("nbd://a b/", ["character ' '"]),
    ("nbd+vsock://host/", ["numeric CID"]),
    ("nbd://h/%zz", ["'%' must start an escape"]),
    ("nbd+unix:///", ["needs ?socket=/PATH"]),
    ("nbd+unix:///?socket=/a&socket=/a", ["given twice"]),
    ("nbd://u:pw@h/", ["user name before '@'"]),
])
def test_malformed_uris_are_one_line(uri, words):
    with pytest.raises(ValueError) as e:
        nbd_uri.parse(uri)
    assert all(w in str(e.value) for w in words) and "\n" not in str(e.value), str(e.value)


@needs_nbd
@needs_other_user
def test_a_served_drive_named_through_another_users_link_is_refused(exports, sticky):
    """libnbd connects to a socket by name, at each phase: a link another user planted
    (`/tmp/a.sock -> the served drive`) passed the consent check, then, swapped for a link to
    another export while the run went on (a real disk's, served by root), had that export
    written without --destroy-data. Such a link is refused in one line before anything
    connects, and so is a socket of another user or one in a directory others may write (who
    could swap it for a link), with --destroy-data too."""
    link = sticky / "a.sock"
    as_nobody("ln", "-s", str(exports["served"]), str(link))
    db = exports["base"] / "link.sqlite"
    r = cli("run", "fill", "--drive", f"nbd:{link}", "--db", str(db), check=False, timeout=300)
    one_line_exit_2(r, f"{link} is a symlink owned by uid", "another user")
    r = cli("run", "fill", "--drive", f"nbd:nbd+unix:///?socket={link}", "--db", str(db), check=False, timeout=300)
    one_line_exit_2(r, f"{link} is a symlink owned by uid")
    theirs = sticky / "t.sock"
    p = subprocess.Popen(["runuser", "-u", "nobody", "--", "nbdkit", "--foreground", "-U", str(theirs),
                          "memory", "64M"])
    try:
        wait_for(lambda: accepts(theirs), "nobody's nbdkit")
        r = cli("run", "fill", "--drive", f"nbd:{theirs}", "--destroy-data", f"nbd:{theirs}", "--db", str(db),
                check=False, timeout=300)
    finally:
        p.terminate()
        p.wait(10)
    one_line_exit_2(r, f"{theirs} belongs to uid 65534, another user")
    shared = Path(tempfile.mkdtemp(prefix="nbdw", dir="/tmp"))
    try:
        shared.chmod(0o777)
        mine = shared / "m.sock"  # root's export, in a directory anyone may write
        with nbdkit_export(mine, "memory", "64M"):
            r = cli("run", "fill", "--drive", f"nbd:{mine}", "--destroy-data", f"nbd:{mine}", "--db", str(db),
                    check=False, timeout=300)
        one_line_exit_2(r, f"directory {shared} may be written by users other than root")
    finally:
        shutil.rmtree(shared, ignore_errors=True)
    assert digest(exports["image"]) == exports["sum"] and not db.exists()


@needs_nbd
def test_a_socket_named_through_ones_own_link_is_connected_by_its_real_path(exports):
    from ssdlab.targets import parse_drive
    from ssdlab.targets.fio.nbd import NbdExport

    link = exports["base"] / "mine.sock"
    link.symlink_to(exports["served"])
    t = NbdExport(parse_drive(f"nbd:{link}"), "fio")
    assert t.socket == str(exports["served"]) and t.uri == nbd_uri.unix(str(exports["served"])).text
    assert t.served is not None
