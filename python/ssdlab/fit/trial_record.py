"""The trials a fit finished, kept on disk as each ends, so that a fit stopped before its end
(Ctrl-C, SIGTERM, a kill, a crash) and run again takes the trials it ran from here instead of
simulating them again. The search is deterministic for a seed, so the fit run again asks for the
same points in the same order and reaches where the stopped one was in seconds.

A trial is a function of what it is given (search.run_trial's arguments: the class profile's
text, each run's overrides with the trial drive's size in them, the runs and their options,
the seed) and of the code that runs it: the key is a hash of all of these and of the
package's files (every file of the installed ssdlab: its Python modules, its data and the
compiled simulator), so a changed simulator or a changed analysis never reuses a result. What
is kept is each run's result as run_trial returns it; the figures are measured from it again,
as from a trial just run.

Where: $XDG_STATE_HOME/ssdlab/fit-trials (~/.local/state/ssdlab/fit-trials), a directory of the
user's own (0700; refused when it, or a directory above it, is another user's link or may be
written by another user: safe_path), one file a class profile, seed and package build (a line
a trial: its key, then the run results as JSON, some 6 KB for a fingerprint trial). Files are
opened without following links and must be the user's own regular files. A line is written
whole with one write() as the trial ends, so a kill keeps every trial recorded before it
(a line cut short, by a machine's crash, is skipped). The size is bounded: a file stops
growing at FILE_CAP (about 5000 fingerprint trials: more than a 400-trial fit with its
cross-validation runs), and when a fit opens the directory, files not used for AGE_DAYS
are removed, then the least recently used beyond DIR_CAP in all."""

from __future__ import annotations

import functools
import hashlib
import json
import os
import stat
import threading
import time
from pathlib import Path
from typing import Any

from .. import safe_path

FILE_CAP = 32 * 2**20  # bytes a record file grows to at most
DIR_CAP = 256 * 2**20  # bytes of every record file together, after the pruning at open
AGE_DAYS = 30  # a record file no fit used for this long is removed
KEY_HEX = 64  # a line: the key (sha256, hex), a space, the run results as JSON


def default_dir() -> Path:
    """$XDG_STATE_HOME/ssdlab/fit-trials, else ~/.local/state/ssdlab/fit-trials."""
    base = os.environ.get("XDG_STATE_HOME") or ""
    root = Path(base) if os.path.isabs(base) else Path.home() / ".local" / "state"
    return root / "ssdlab" / "fit-trials"


@functools.lru_cache(maxsize=1)
def build_id() -> str:
    """A hash of every file of the installed package (its modules, data and the compiled
    simulator, not its bytecode caches) and its version: what a trial's result depends on
    besides its arguments."""
    from importlib import metadata

    root = Path(__file__).resolve().parents[1]
    h = hashlib.sha256()
    try:
        h.update(metadata.version("ssdlab").encode())
    except metadata.PackageNotFoundError:
        h.update(b"unversioned")
    for p in sorted(root.rglob("*")):
        if "__pycache__" in p.parts or p.suffix == ".pyc" or not p.is_file():
            continue
        h.update(str(p.relative_to(root)).encode() + b"\0")
        with open(p, "rb") as f:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                h.update(chunk)
        h.update(b"\0")
    return h.hexdigest()


def _canon(x: Any) -> str:
    """A stable text of a trial's arguments (run keys are tuples, plans frozen dataclasses:
    their repr is their content)."""
    return json.dumps(x, sort_keys=True, default=repr)


class TrialRecord:
    """The record in `directory` (made, checked and pruned here); get and put are safe from
    several threads (cross-validation's folds run in one of their own). `reused`: the trials
    taken from it so far; `kept`: those written to it; `failed`: why it stopped keeping them
    (a write failed: the fit goes on without)."""

    def __init__(self, directory: str | os.PathLike[str]):
        what = f"the fit's trial record {directory}"
        self.what = what
        self.dir = safe_path.own_dir(directory, what, mode=0o700)
        st = os.lstat(self.dir)
        if st.st_uid != os.geteuid():
            raise safe_path.UnsafePath(what, f"{self.dir} belongs to uid {st.st_uid}, another user; set "
                                             "XDG_STATE_HOME to a directory of your own")
        self._lock = threading.Lock()
        self._files: dict[str, tuple[int, dict[str, str]]] = {}  # file name -> (fd, key -> JSON)
        self.reused = self.kept = 0
        self.failed: str | None = None  # why trials stopped being kept (a full disk), if they did
        self._prune()

    def __enter__(self) -> "TrialRecord":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def close(self) -> None:
        with self._lock:
            for fd, _ in self._files.values():
                os.close(fd)
            self._files.clear()

    # -- keys ----------------------------------------------------------------------------------
    @staticmethod
    def file_name(class_text: str, seed: int) -> str:
        return hashlib.sha256(_canon([build_id(), class_text, seed]).encode()).hexdigest()[:32] + ".jsonl"

    @staticmethod
    def key(class_text: str, overrides: dict[Any, list[str]], runs: list[Any], plans: dict[Any, Any],
            seed: int) -> str:
        """The key of a trial of search.run_trial's arguments (without its deadline)."""
        text = _canon([build_id(), class_text, seed, [[r, overrides[r], plans.get(r)] for r in runs]])
        return hashlib.sha256(text.encode()).hexdigest()

    # -- reading and writing -------------------------------------------------------------------
    def get(self, class_text: str, overrides: dict[Any, list[str]], runs: list[Any], plans: dict[Any, Any],
            seed: int) -> dict[Any, dict[str, Any]] | None:
        """The run results of the trial, as run_trial returned them (by run), if recorded."""
        key = self.key(class_text, overrides, runs, plans, seed)
        with self._lock:
            text = self._open(self.file_name(class_text, seed))[1].get(key)
        if text is None:
            return None
        try:
            docs = json.loads(text)
        except ValueError:
            return None
        if not isinstance(docs, list) or len(docs) != len(runs) or not all(isinstance(d, dict) for d in docs):
            return None
        with self._lock:
            self.reused += 1
        return dict(zip(runs, docs))

    def put(self, class_text: str, overrides: dict[Any, list[str]], runs: list[Any], plans: dict[Any, Any],
            seed: int, out: dict[Any, dict[str, Any]]) -> None:
        """Record a finished trial's run results: one line, written whole at once."""
        key = self.key(class_text, overrides, runs, plans, seed)
        try:
            text = json.dumps([out[r] for r in runs], default=_plain)
        except (TypeError, ValueError, KeyError):
            return  # not JSON (a result no figure could read anyway): simulated again next time
        line = f"{key} {text}\n".encode()
        with self._lock:
            fd, known = self._open(self.file_name(class_text, seed))
            if key in known or self.failed or os.fstat(fd).st_size + len(line) > FILE_CAP:
                return
            try:
                _write_all(fd, line)
            except OSError as e:  # (a full disk): the fit goes on, keeping no more
                self.failed = f"cannot write {os.path.join(self.dir, self.file_name(class_text, seed))}: {e.strerror}"
                return
            known[key] = text
            self.kept += 1

    def _open(self, name: str) -> tuple[int, dict[str, str]]:
        """The record file `name`, read (its lines by key) and open for appending (called
        with the lock held)."""
        if name in self._files:
            return self._files[name]
        fd = safe_path.open_real(os.path.join(self.dir, name), os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o600,
                                 self.what)
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode) or st.st_uid != os.geteuid():
                raise safe_path.UnsafePath(self.what, f"{name} there is not a regular file of yours; remove it")
            whole = st.st_size <= FILE_CAP + (1 << 20)
            data = _read_all(fd, min(st.st_size, FILE_CAP + (1 << 20)))
            known: dict[str, str] = {}
            for raw in data.split(b"\n")[:-1]:  # the last: empty, or a line cut short
                if len(raw) > KEY_HEX + 1 and raw[KEY_HEX:KEY_HEX + 1] == b" ":
                    try:
                        known[raw[:KEY_HEX].decode("ascii")] = raw[KEY_HEX + 1:].decode()
                    except UnicodeDecodeError:
                        continue
            if whole and data and not data.endswith(b"\n"):
                _write_all(fd, b"\n")  # the next line starts on a line of its own
            os.utime(fd)  # used now: the pruning removes the least recently used
        except BaseException:
            os.close(fd)
            raise
        self._files[name] = (fd, known)
        return self._files[name]

    def _prune(self) -> None:
        """Remove the record files not used for AGE_DAYS, then the least recently used
        beyond DIR_CAP (only regular files of ours with a record file's name)."""
        try:
            d = safe_path.dir_fd(self.dir)
        except OSError:
            return
        try:
            files = []
            listing = os.open(".", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC, dir_fd=d)
            try:
                names = os.listdir(listing)
            finally:
                os.close(listing)
            for name in names:
                if not name.endswith(".jsonl"):
                    continue
                try:
                    st = os.stat(name, dir_fd=d, follow_symlinks=False)
                except OSError:
                    continue
                if stat.S_ISREG(st.st_mode) and st.st_uid == os.geteuid():
                    files.append((st.st_mtime, st.st_size, name))
            total, now = 0, time.time()
            for mtime, size, name in sorted(files, reverse=True):
                total += size
                if now - mtime > AGE_DAYS * 86400 or total > DIR_CAP:
                    try:
                        os.unlink(name, dir_fd=d)
                    except OSError:
                        pass
                    total -= size
        finally:
            os.close(d)


def _plain(x: Any) -> Any:
    """A numpy number as the Python number it holds (JSON's default)."""
    item = getattr(x, "item", None)
    if callable(item):
        return item()
    raise TypeError(f"{type(x).__name__} is not JSON")


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _read_all(fd: int, limit: int) -> bytes:
    chunks, n = [], 0
    os.lseek(fd, 0, os.SEEK_SET)
    while n < limit and (chunk := os.read(fd, min(1 << 20, limit - n))):
        chunks.append(chunk)
        n += len(chunk)
    return b"".join(chunks)
