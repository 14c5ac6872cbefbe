"""What a client of a served drive can make `ssdlab serve` hold, played by a hostile client
(a bare NBD client pipelining requests it never waits for): requests larger than the
largest ssdlab sends are answered EINVAL before the drive sees them, the drive holds at
most a budget of request data (beyond it: ENOMEM at once, never queued), a 65th client
is turned away; TCP is served only when asked with --tcp-unauthenticated, with a warning.
Unbounded, two connections of 64 pipelined 64 MiB writes took nbdkit to 8.4 GB (now
0.5-0.7 GB: nbdkit reads a request whole before refusing it)."""

from __future__ import annotations

import errno
import json
import signal
import socket
import subprocess
from contextlib import contextmanager
from pathlib import Path

import clirun
import pytest
from nbdclient import Client
from nbdserve import TINY, needs_nbd, one_line_exit_2, served

from ssdlab.serve import nbdkit

pytestmark = needs_nbd


def in_parallel(sock: Path, clients: int, count: int, size: int) -> list[int]:
    """Each client's pipelined writes; every reply's error."""
    from concurrent.futures import ThreadPoolExecutor

    def one(_: int) -> list[int]:
        c = Client(str(sock))
        try:
            return c.pipelined_writes(count, size)
        finally:
            c.close()

    with ThreadPoolExecutor(clients) as ex:
        return [e for errs in ex.map(one, range(clients)) for e in errs]


def test_oversized_pipelined_writes_are_refused_without_holding_them(tmp_path):
    with served(tmp_path, TINY, tmp_path / "r.sqlite") as (sock, _end):
        errors = in_parallel(sock, 1, 24, 64 << 20)  # 1.5 GiB sent: answered, never paced
        assert set(errors) == {errno.EINVAL}
        assert in_parallel(sock, 1, 2, nbdkit.MAX_REQUEST) == [0, 0]  # the largest allowed


def test_the_drive_holds_a_bounded_amount_of_request_data(tmp_path):
    with served(tmp_path, TINY, tmp_path / "r.sqlite") as (sock, _end):
        errors = in_parallel(sock, 2, 32, 16 << 20)  # 1 GiB in flight if all were held
        assert errors.count(0) >= 16 and errors.count(errno.ENOMEM) > 0, errors
        assert set(errors) <= {0, errno.ENOMEM}


def test_clients_beyond_the_cap_are_turned_away(tmp_path):
    with served(tmp_path, TINY, tmp_path / "r.sqlite") as (sock, _end):
        held = [Client(str(sock)) for _ in range(nbdkit.MAX_CONNECTIONS)]
        try:
            with pytest.raises(ConnectionError):
                Client(str(sock))
        finally:
            for c in held:
                c.close()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def serving_tcp(tmp_path: Path, port: int):
    """`serve --tcp 127.0.0.1:PORT --tcp-unauthenticated`; yields a dict that gets its
    stderr once it has stopped."""
    sets = [x for s in TINY for x in ("--set", s)]
    p = subprocess.Popen([*clirun.COMMAND, "serve", "sim:sn520-128", *sets, "--tcp", f"127.0.0.1:{port}",
                          "--tcp-unauthenticated", "--json", "--db", str(tmp_path / "r.sqlite")],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=clirun.environ())
    got: dict = {}
    try:
        ready = json.loads(p.stdout.readline() or "{}")
        assert ready.get("event") == "ready", p.stderr.read() if p.poll() is not None else ready
        yield got
    finally:
        p.send_signal(signal.SIGINT)
        _out, got["stderr"] = p.communicate(timeout=60)


def test_tcp_is_served_only_when_asked_in_so_many_words(tmp_path):
    port = free_port()
    r = clirun.cli("serve", "sim:sn520-128", "--tcp", f"127.0.0.1:{port}", "--seconds", "1",
                   "--db", str(tmp_path / "r.sqlite"), timeout=120)
    one_line_exit_2(r, "NBD has no authentication", "every user of this machine", "--tcp-unauthenticated")
    assert not (tmp_path / "r.sqlite").exists()
    r = clirun.cli("serve", "sim:sn520-128", "--tcp-unauthenticated", "--seconds", "1", timeout=120)
    one_line_exit_2(r, "goes with --tcp")
    with serving_tcp(tmp_path, port) as got:
        c = Client(("127.0.0.1", port))
        assert c.size > 0
        c.close()
    assert f"warning: --tcp 127.0.0.1:{port}: NBD has no authentication; every user of this machine" in got["stderr"]
