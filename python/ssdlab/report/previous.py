"""What an earlier report left in the report directory. Each report lists the files it
wrote there (`.report-files`, one name a line); the next report into the same directory
removes those it does not write again, and nothing else: the PNGs of an earlier report's
other drives would sit beside the new report.html as if they were its figures."""

from __future__ import annotations

import contextlib
import os
import re
import stat
from collections.abc import Iterable, Iterator
from pathlib import Path

from .. import safe_path

MANIFEST = ".report-files"
# a report's own names only (report.html, fill-1-<drive>.png, grid.csv ...): never a path
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*\.(?:png|html|csv|parquet)\Z")
MAX_BYTES = 1 << 20


def manifest_text(names: Iterable[str]) -> str:
    return "".join(f"{n}\n" for n in sorted(set(names)))


def listed(out: str) -> list[str]:
    """The names the last report in `out` (a real directory path) wrote; [] without a
    list of ours (none, a link, another user's file)."""
    d = safe_path.dir_fd(out)
    try:
        fd = os.open(MANIFEST, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=d)
    except OSError:
        return []
    finally:
        os.close(d)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_uid not in (0, os.geteuid()) or st.st_size > MAX_BYTES:
            return []
        text = os.read(fd, MAX_BYTES).decode("utf-8", "replace")
    finally:
        os.close(fd)
    return [n for n in text.splitlines() if NAME.match(n)]


def remove_stale(out: str, before: Iterable[str], now: Iterable[str]) -> None:
    """Remove from `out` what the earlier report wrote (`before`) and this one did not."""
    stale = sorted(set(before) - set(now))
    if not stale:
        return
    d = safe_path.dir_fd(out)
    try:
        for name in stale:
            with contextlib.suppress(OSError):
                if not stat.S_ISDIR(os.stat(name, dir_fd=d, follow_symlinks=False).st_mode):
                    os.unlink(name, dir_fd=d)  # a link is removed, never followed
    finally:
        os.close(d)


@contextlib.contextmanager
def replacing(out_dir: Path, what: str) -> Iterator[Path]:
    """A report's staging directory (safe_path.staged, `what` names it in errors); once its
    files are moved into `out_dir`, the earlier report's files this one did not write are
    removed."""
    with safe_path.staged(out_dir, what) as stage:
        yield stage
        out = safe_path.real(out_dir)
        before = listed(out)  # read before this report's list replaces it
        written = [p.name for p in stage.iterdir()]
        (stage / MANIFEST).write_text(manifest_text(written), encoding="utf-8")
    remove_stale(out, before, written)
