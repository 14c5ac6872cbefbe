"""A bare NBD client for tests that play a hostile one: the fixed-newstyle handshake
(NBD_OPT_EXPORT_NAME), then raw requests pipelined without waiting for replies, as
libnbd would never send them."""

from __future__ import annotations

import socket
import struct
import threading

REQUEST, REPLY = 0x25609513, 0x67446698
READ, WRITE, TRIM = 0, 1, 4


class Client:
    def __init__(self, where: str | tuple[str, int]):
        if isinstance(where, tuple):
            self.s = socket.create_connection(where, timeout=120)
        else:
            self.s = socket.socket(socket.AF_UNIX)
            self.s.settimeout(120)
            self.s.connect(where)
        hello = self._rx(18)
        if hello[:16] != b"NBDMAGICIHAVEOPT":
            raise ConnectionError(f"not an NBD server: {hello!r}")
        self.s.sendall(struct.pack(">I", 3))  # fixed newstyle, no zeroes
        self.s.sendall(b"IHAVEOPT" + struct.pack(">II", 1, 0))  # NBD_OPT_EXPORT_NAME ""
        self.size, _flags = struct.unpack(">QH", self._rx(10))

    def _rx(self, n: int) -> bytes:
        b = b""
        while len(b) < n:
            c = self.s.recv(n - len(b))
            if not c:
                raise ConnectionError("the server closed the connection")
            b += c
        return b

    def pipelined_writes(self, count: int, size: int) -> list[int]:
        """`count` writes of `size` bytes sent back to back; the error of each reply."""
        payload = b"\xab" * size

        def send() -> None:
            try:
                for i in range(count):
                    off = (i * size) % max(self.size - size, 1)
                    self.s.sendall(struct.pack(">IHHQQI", REQUEST, 0, WRITE, i, off, size) + payload)
            except OSError:
                pass  # the server stopped reading: its replies say why

        t = threading.Thread(target=send, daemon=True)
        t.start()
        errors = []
        for _ in range(count):
            magic, error, _handle = struct.unpack(">IIQ", self._rx(16))
            assert magic == REPLY
            errors.append(error)
        t.join()
        return errors

    def request(self, cmd: int, offset: int, length: int, payload: bytes = b"") -> tuple[int, bytes]:
        """One request, its reply awaited: (error, the data read)."""
        self.s.sendall(struct.pack(">IHHQQI", REQUEST, 0, cmd, 0, offset, length) + payload)
        magic, error, _handle = struct.unpack(">IIQ", self._rx(16))
        assert magic == REPLY
        return error, self._rx(length) if cmd == READ and not error else b""

    def close(self) -> None:
        self.s.close()
