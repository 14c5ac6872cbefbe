"""What a refusal looks like from outside: one line and exit status 2, and the bytes it
left untouched (a file's or a device's hash before and after)."""

from __future__ import annotations

import hashlib
import subprocess
from pathlib import Path


def sha(path: Path | str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for b in iter(lambda: fh.read(1 << 20), b""):
            h.update(b)
    return h.hexdigest()


def one_line_error(r: subprocess.CompletedProcess, *words: str) -> None:
    assert r.returncode == 2, (r.returncode, r.stderr)
    assert r.stderr.count("\n") == 1 and r.stderr.startswith("ssdlab: error: "), r.stderr
    for w in words:
        assert w in r.stderr, r.stderr


def read_writes_nothing(f: Path, watched: Path, n: int) -> None:
    """A test that only reads may read the file target `f` that it may not write: its
    first `n` bytes are read and `watched` (`f`, or another name of it) is left as it was."""
    from ssdlab import phase as P
    from ssdlab.targets import open_target

    before = sha(watched)
    with open_target(f"file:{f}:{n}") as t:
        t.preflight([P.seq_read("r", stop_bytes=n)])
        assert t.run(P.seq_read("r", stop_bytes=n)).totals["read_bytes"] == n
    assert sha(watched) == before
