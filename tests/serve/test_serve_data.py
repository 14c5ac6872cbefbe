"""The served drive's data: writes of every shape (whole slots, parts of slots, over
written, trimmed and never written slots) read back as a model of the bytes says. A slot
written once goes through pwrite, later writes to it through the file's mapping, a trim
sends it back to pwrite (crates/ssdsim-nbd/src/data.rs): each path is taken here."""

from __future__ import annotations

import random

from nbdclient import READ, TRIM, WRITE, Client
from nbdserve import TINY, needs_nbd, served

AREA = 1 << 20  # the first MiB of the drive


@needs_nbd
def test_reads_return_the_last_write_of_every_byte(tmp_path):
    rng = random.Random(7)
    model = bytearray(AREA)
    with served(tmp_path, TINY, tmp_path / "r.sqlite") as (sock, end):
        c = Client(str(sock))
        try:
            for i in range(600):
                kind = rng.random()
                if i < 8:  # whole slots, then the same slots again (the mapping's path)
                    off, n = (i % 4) * 65536, 65536
                elif kind < 0.45:  # slot-aligned
                    off, n = rng.randrange(AREA // 4096) * 4096, 4096 * rng.randint(1, 8)
                elif kind < 0.8:  # anywhere, any length
                    off, n = rng.randrange(AREA - 1), rng.randint(1, 20000)
                else:
                    off, n = rng.randrange(AREA // 4096) * 4096, 4096 * rng.randint(1, 4)
                n = min(n, AREA - off)
                if kind >= 0.8 and i >= 8:
                    err, _ = c.request(TRIM, off, n)
                    model[off:off + n] = bytes(n)  # the plugin punches whole-slot holes: zeros
                else:
                    data = rng.randbytes(n)
                    err, _ = c.request(WRITE, off, n, data)
                    model[off:off + n] = data
                assert err == 0
            for off in range(0, AREA, 65536):
                err, got = c.request(READ, off, 65536)
                assert err == 0 and got == bytes(model[off:off + 65536]), f"bytes {off}..{off + 65536}"
        finally:
            c.close()
        end()
