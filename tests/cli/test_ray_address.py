"""An unreachable --ray-address is refused in a few seconds with one line, exit status 2,
before anything is made: no store, no report directory, no twin (Ray itself retries a head
node that does not answer for a minute and more)."""

from __future__ import annotations

import contextlib
import socket
import threading
import time

import pytest

from clirun import cli

FIGURES = "python/ssdlab/calibration/figures/sn520-128.toml"


@pytest.fixture
def dead_address():
    """A local port nothing listens on (bound, then let go)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"127.0.0.1:{port}"


@pytest.mark.parametrize("command", [
    ["review", "--drive", "sim:tlc-256", "-o", "{tmp}/rev", "--seconds", "0.1", "--db", "{tmp}/r.sqlite"],
    ["sweep", "fill", "--drive", "sim:tlc-256", "-o", "{tmp}/rev", "--db", "{tmp}/r.sqlite"],
    ["fit", "--figures", FIGURES, "--out", "{tmp}/twin.toml", "-o", "{tmp}/rev"],
    ["validate", "--drive", "sn520-128"],
])
def test_an_unreachable_ray_address_is_refused_before_anything_is_made(command, dead_address, tmp_path):
    args = [a.replace("{tmp}", str(tmp_path)) for a in command]
    t = time.monotonic()
    r = cli(*args, "--ray-address", dead_address, timeout=60)
    took = time.monotonic() - t
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2, r.stderr
    assert lines == [f"ssdlab: error: --ray-address {dead_address}: cannot reach the Ray cluster "
                     f"(127.0.0.1 port {dead_address.split(':')[1]}: connection refused); start its head node "
                     "(ray start --head) or give HOST:PORT of a running one"], r.stderr
    assert took < 10, took
    assert list(tmp_path.iterdir()) == []  # no store, no report directory, no twin


def test_an_address_that_is_none_names_the_form(tmp_path):
    r = cli("review", "--drive", "sim:tlc-256", "-o", str(tmp_path / "rev"), "--db", str(tmp_path / "r.sqlite"),
            "--ray-address", "head:node:6379", timeout=60)
    assert r.returncode == 2 and "give HOST:PORT of its head node" in r.stderr, r.stderr
    assert list(tmp_path.iterdir()) == []


def test_the_check_reads_every_form_ray_takes(monkeypatch):
    from ssdlab import executor

    assert executor._head("10.0.0.5:6379") == ("10.0.0.5", 6379)
    assert executor._head("ray://head.example:10001") == ("head.example", 10001)
    assert executor._head("[::1]:6379") == ("::1", 6379)
    for bad in ("head", "head:", "head:port", "bogus:::", "a:1/x", "user@h:1"):
        assert executor._head(bad) is None, bad
    # a head that does not answer at all: refused after the timeout, not after Ray's retries
    monkeypatch.setattr(executor.socket, "create_connection",
                        lambda addr, timeout: (_ for _ in ()).throw(socket.timeout()))
    with pytest.raises(ValueError, match=r"no answer from 10\.0\.0\.5 port 6379 within 3 s"):
        executor.check_ray("10.0.0.5:6379")
    executor.check_ray("local")  # a local instance of our own: nothing to reach


@contextlib.contextmanager
def listener(reply: bytes | None):
    """A local port that accepts connections and answers each with `reply` once it has
    read something (None: never answers)."""
    srv = socket.create_server(("127.0.0.1", 0))
    stop = threading.Event()

    def serve():
        srv.settimeout(0.1)
        while not stop.is_set():
            try:
                c, _ = srv.accept()
            except OSError:
                continue
            with c:
                c.settimeout(5)
                with contextlib.suppress(OSError):
                    c.recv(64)
                    if reply is None:
                        stop.wait(5)
                    else:
                        c.sendall(reply)

    t = threading.Thread(target=serve, daemon=True)
    t.start()
    try:
        yield f"127.0.0.1:{srv.getsockname()[1]}"
    finally:
        stop.set()
        t.join()
        srv.close()


@pytest.mark.parametrize("reply, why", [
    (b"HTTP/1.0 400 Bad Request\r\n\r\n", "it answers, but not in gRPC as a Ray head node does"),
    (None, "it accepts connections but sends nothing back within 1 s"),
])
def test_a_port_that_is_no_ray_head_is_refused_in_seconds(reply, why):
    from ssdlab.executor import check_ray

    with listener(reply) as address:
        t = time.monotonic()
        with pytest.raises(ValueError) as e:
            check_ray(address, timeout=1.0)
        assert time.monotonic() - t < 3
    assert str(e.value) == (f"--ray-address {address}: not a Ray cluster ({why}); give HOST:PORT "
                            "of its head node's GCS (ray start --head prints it, e.g. 10.0.0.5:6379) "
                            "or ray://HOST:10001"), e.value


def test_a_grpc_server_passes():
    from ssdlab.executor import check_ray

    settings = b"\x00\x00\x00\x04\x00\x00\x00\x00\x00"  # an empty HTTP/2 SETTINGS frame
    with listener(settings) as address:
        check_ray(address, timeout=1.0)
        check_ray("ray://" + address, timeout=1.0)
