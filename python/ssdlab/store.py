"""SQLite results store: every run, drive, phase, series, histogram and metric.

One file; WAL mode and a busy timeout so several processes (runs on different drives)
can write at once. Every write is its own short transaction, so a phase is on disk as
soon as it finishes. The schema is documented in docs/results.md.

Reading never creates or changes a store (a mistyped --db is an error, a store on
read-only media or of another user is read as it is: store_reading.py); a damaged store
is named with how to recover it. A run records the process that writes it, so a run
whose process is gone reads as `stale`.
"""

from __future__ import annotations

import contextlib
import json
import functools
import math
import os
import secrets
import socket
import sqlite3
import stat
import time
import urllib.parse
from contextlib import contextmanager
from dataclasses import asdict
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Iterator, TypeVar

import numpy as np

from . import METHODOLOGY_VERSION, __version__, safe_path, store_companions, store_reading, store_wal
from .store_damage import damage_hint
from .errors import printable
from .phase import Identity, PhaseResult
from .store_schema import RUN_COLUMNS_ADDED, SCHEMA, SCHEMA_VERSION, STATUSES

BUSY_TIMEOUT_MS = 60_000
MIN_FREE_BYTES = 64 * 10**6  # free space a run needs on the store's filesystem
MAX_ID = 2**63 - 1  # SQLite's integer range
T = TypeVar("T")


class StoreError(ValueError):
    """The store cannot be opened or a run does not exist (a user error)."""


MAX_TESTBED = 200


def check_testbed(testbed: str | None) -> str | None:
    """A --testbed tag: one line of printable text (no newline, no terminal escape)."""
    if testbed is not None and (len(testbed) > MAX_TESTBED or not testbed.isprintable()):
        raise StoreError(f"--testbed {printable(testbed)[:60]!r}: a tag is one line of at most {MAX_TESTBED} "
                         "printable characters (no newlines or control characters)")
    return testbed


def _reading(fn):
    """Read methods: a damaged or foreign store is one clear error, not a traceback; one
    read of another user's store as it changed is read again (Store._steady)."""
    @functools.wraps(fn)
    def wrapper(self, *a, **kw):
        try:
            return self._steady(lambda: fn(self, *a, **kw))
        except sqlite3.OperationalError as e:
            raise StoreError(f"cannot read results store {self.path}: {e}") from None
        except sqlite3.DatabaseError as e:
            raise StoreError(damage_hint(self.path, e)) from None
    return wrapper


def process_start(pid: int) -> str:
    """Boot id and start time of a process: with its pid, names it across pid reuse and
    reboots ("" when unknown)."""
    try:
        boot = Path("/proc/sys/kernel/random/boot_id").read_text().strip()
        stat = Path(f"/proc/{pid}/stat").read_text()
        return f"{boot}:{stat.rsplit(')', 1)[1].split()[19]}"
    except (OSError, IndexError):
        return ""


def now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def inserted_id(cur: sqlite3.Cursor) -> int:
    """The rowid of the row an INSERT just added (sqlite3 sets it after every INSERT)."""
    if cur.lastrowid is None:
        raise StoreError("the database did not report the id of the row just added")
    return cur.lastrowid


def to_blob(values) -> bytes:
    return np.ascontiguousarray(values, dtype="<f8").tobytes()


def from_blob(blob: bytes) -> np.ndarray:
    return np.frombuffer(blob, dtype="<f8").copy()


def jsonable(x: Any) -> Any:
    """Plain JSON values: numpy to Python, NaN and infinities to None, keys to strings."""
    if isinstance(x, dict):
        return {str(k): jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [jsonable(v) for v in x]
    if isinstance(x, np.ndarray):
        return [jsonable(v) for v in x.tolist()]
    if isinstance(x, np.generic):
        x = x.item()
    if isinstance(x, float) and not math.isfinite(x):
        return None
    return x


def dumps(x: Any) -> str:
    return json.dumps(jsonable(x), allow_nan=False)


def default_path() -> Path:
    from platformdirs import user_data_dir

    return Path(user_data_dir("ssdlab")) / "results.sqlite"


def check_free(path: str | Path | None) -> None:
    """The filesystem that holds (or will hold) the store has room for a run: checked
    before the store is even created."""
    p = Path(path) if path is not None else default_path()
    d = p.parent
    while not d.exists() and d != d.parent:
        d = d.parent
    try:
        st = os.statvfs(d)
    except OSError:
        return  # cannot tell: opening the store will say what is wrong
    free = st.f_bavail * st.f_frsize
    if free < MIN_FREE_BYTES:
        raise StoreError(f"results store {p}: its filesystem has {free / 1e6:.1f} MB free and a "
                         f"run needs at least {MIN_FREE_BYTES / 1e6:.0f} MB; free space or use --db elsewhere")


class Store:
    """`create=False` (read commands): the store must exist; it is opened read-only when
    its file or directory cannot be written or it is another user's, and nothing is created
    or migrated."""

    def __init__(self, path: str | Path | None = None, create: bool = True):
        self.path = Path(path) if path is not None else default_path()
        self.read_only = False
        self._hold: int | None = None  # the reader lock on another user's store (store_reading.py)
        self._seen: store_reading.State | None = None  # what an immutable read of it rests on
        self._in_read = False  # in a read method: one called by another is checked with it
        # SQLite follows links to the store (not to its -wal, -shm and -journal files):
        # never another user's, nor one to a missing file; opened by its real path
        what = f"results store {self.path}"
        if not create and not os.path.lexists(self.path):
            raise StoreError(f"no results store at {self.path}: check --db (nothing was stored there)")
        if self.path.is_dir():
            raise StoreError(f"results store {self.path} is a directory; give --db a file, e.g. "
                             f"{self.path / 'results.sqlite'}")
        if self.path.exists() and not self.path.is_file():
            raise StoreError(f"results store {self.path} is a device, FIFO or socket; give --db a file")
        try:
            if create:
                safe_path.make_dirs(self.path.parent, what)
            self.real = safe_path.real(self.path, what)
            # its -wal, -shm, -journal: SQLite reads them as the store's newest pages (made
            # here, the caller's, for a store in WAL mode; checked before a store is made)
            store_companions.check(self.real, what, own=create or _owner(self.real) == os.geteuid(), make=not create)
            if create or _owner(self.real) == os.geteuid():  # ours, made or read: in no one else's directory
                safe_path.check_dirs(self.real, what)
            if create:
                if not os.path.lexists(self.real):  # made here, new: SQLite then opens it by name
                    with contextlib.suppress(safe_path.Exists):  # someone was first: checked below
                        store_companions.new_store(self.real, what)  # in WAL mode: its -wal made below
                st = os.lstat(self.real)
                if st.st_uid not in safe_path.trusted_uids() or os.path.islink(self.real):  # as a file target
                    raise safe_path.UnsafePath(what, f"{self.real} belongs to uid {st.st_uid}, another user, who could "
                                                     "change what is stored or swap it for a link; use a store of your own")
                store_companions.one_name(self.real, what)
                store_companions.check(self.real, what)  # a store of ours: its -wal, -shm made now
        except safe_path.UnsafePath as e:
            raise StoreError(str(e) if e.refusal else f"cannot open {what}: {e.reason}") from None
        opened = False
        try:
            if create:
                self.db = self._connect(f"file:{self._uri_path}?mode=rwc")
            elif os.stat(self.real).st_uid != os.geteuid():
                self.db = self._open_theirs()
            else:
                self.db, self.read_only = store_reading.open_own(self._connect, self._uri_path)
            self._opened = _file_id(self.real)  # the file the connection writes (`gone`)
            self._steady(self._check_ours)  # before the journal mode is set: another program's file is left as it is
            if not self.read_only:
                try:
                    self._retry(lambda: self.db.execute("PRAGMA journal_mode = WAL"))
                except sqlite3.OperationalError as e:
                    if create or "readonly" not in str(e):
                        raise
                    # a store on read-only media: read it as it is, without its -shm file
                    self.db.close()
                    self.db = self._connect(f"file:{self._uri_path}?mode=ro&immutable=1")
                    self.read_only = True
            if not self.read_only:
                self.db.execute("PRAGMA foreign_keys = ON")
                self._schema(create)
            opened = True
        except sqlite3.OperationalError as e:
            if create and self.path.parent.is_dir() and not os.access(self.path.parent, os.W_OK):
                raise StoreError(f"results store {self.path} is not writable (read-only filesystem or "
                                 "directory); use --db on a writable one") from None
            raise StoreError(f"cannot open results store {self.path}: {e}") from None
        except sqlite3.DatabaseError as e:
            raise StoreError(damage_hint(self.path, e)) from None
        except OSError as e:
            raise StoreError(f"cannot open results store {self.path}: {e}") from None
        finally:
            if not opened and self._hold is not None:  # refused after all: let go of it
                self.close()

    def _open_theirs(self) -> sqlite3.Connection:
        """Another user's store, read without writing a byte or making a file beside it
        (store_reading.py); the reader lock it holds meanwhile is let go of by close()."""
        self.read_only = True
        try:
            db, self._hold, self._seen = store_reading.open_theirs(self.real, self._connect, self._uri_path,
                                                                   BUSY_TIMEOUT_MS / 1000)
        except store_reading.Busy:
            raise StoreError(f"results store {self.path} is held exclusively by a program of its owner "
                             f"for more than {BUSY_TIMEOUT_MS // 1000} s; try again later") from None
        except store_reading.Changing:
            raise self._changing() from None
        except OSError as e:
            raise StoreError(f"cannot open results store {self.path}: {e}") from None
        return db

    def _steady(self, read: Callable[[], T]) -> T:
        """read()'s answer, from another user's store read as an immutable file that did not
        change under it: else read again, on the store opened again (store_reading.py)."""
        if self._in_read or self._hold is None:  # a read within a read: the outer one checks
            return read()
        for again in range(store_reading.REOPENS):
            if again:
                self.close()
                self.db = self._open_theirs()
            self._in_read = True
            try:
                out = read()
            except Exception:
                if store_reading.unchanged(self._hold, self.real, self._seen):
                    raise  # the store's own answer
            else:
                if store_reading.unchanged(self._hold, self.real, self._seen):
                    return out
            finally:
                self._in_read = False
        raise self._changing()

    def _changing(self) -> StoreError:
        return StoreError(f"results store {self.path} changed under each of {store_reading.REOPENS} reads in a "
                          "row (its owner is writing it); try again when the owner's run has ended")

    @property
    def _uri_path(self) -> str:
        """The real path as a file: URI's path (% ? # escaped)."""
        return urllib.parse.quote(self.real)

    def _connect(self, uri: str) -> sqlite3.Connection:
        # isolation_level=None: we issue BEGIN IMMEDIATE ourselves, so a writer takes the
        # lock up front and waits (busy timeout) instead of failing on upgrade
        db = sqlite3.connect(uri, uri=True, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None,
                             check_same_thread=False)
        db.row_factory = sqlite3.Row
        try:
            db.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            db.execute("SELECT count(*) FROM sqlite_master").fetchone()  # not a database: fails here
        except BaseException:
            db.close()  # now, not when collected: its close drops the process's locks on the store
            raise
        return db

    def _check_ours(self) -> None:
        """Another program's database (a mistyped --db) is refused, never changed."""
        have = {r[0] for r in self.db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        cols = {r[1] for r in self.db.execute("PRAGMA table_info(runs)")}
        if have and not {"id", "test", "created", "status", "args"} <= cols:
            why = "its runs table is not ssdlab's" if "runs" in have else "no runs table"
            raise StoreError(f"{self.path} is not an ssdlab results store ({why}); give --db an ssdlab "
                             "store, or a new file for a new one")

    def _schema(self, create: bool) -> None:
        have = {r[0] for r in self.db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        if not create:  # a reader changes nothing (an older store is read as it is)
            if "runs" not in have:
                raise StoreError(f"{self.path} is not an ssdlab results store (no runs table)")
            return
        cols = {r[1] for r in self.db.execute("PRAGMA table_info(runs)")}
        if {"meta", "runs", "run_drives", "phases", "series", "histograms", "metrics"} <= have and \
                all(c in cols for c, _ in RUN_COLUMNS_ADDED):
            return  # nothing to create: no write transaction for a reader
        with self.tx() as c:
            for stmt in SCHEMA.split(";"):
                if stmt.strip():
                    c.execute(stmt)
            c.execute("INSERT OR IGNORE INTO meta VALUES ('schema_version', ?)",
                      (str(SCHEMA_VERSION),))
            cols = {r[1] for r in c.execute("PRAGMA table_info(runs)")}
            for col, kind in RUN_COLUMNS_ADDED:
                if col not in cols:
                    c.execute(f"ALTER TABLE runs ADD COLUMN {col} {kind}")

    def check_writable(self) -> None:
        """Before a run: the store is undamaged and its filesystem has room, so a
        measurement is not lost for want of a place to put it."""
        if self.read_only:
            raise StoreError(f"results store {self.path} is read-only; use --db on a writable filesystem")
        if not os.access(self.real, os.W_OK):  # SQLite then opens it read-only, and says so at the first write
            st = os.stat(self.real)
            raise StoreError(f"results store {self.path} is not writable (mode {stat.S_IMODE(st.st_mode):04o}, "
                             f"owner uid {st.st_uid}); make it writable (chmod u+w) or use --db on another store")
        try:
            ok = self.db.execute("PRAGMA quick_check").fetchone()[0]
        except sqlite3.DatabaseError as e:
            ok = str(e)
        if ok != "ok":
            raise StoreError(damage_hint(self.path, ok))
        check_free(self.path)

    def gone(self) -> str | None:
        """How the path stopped naming the file opened (its writes then reach a file no later
        command reads), when it did; None while it names it, or when that cannot be told."""
        try:
            return None if _file_id(self.path) == self._opened else "replaced by another file"
        except FileNotFoundError:
            return "removed or moved away"
        except OSError:
            return None

    def settle_gone(self) -> None:
        """Once gone(): what the -wal holds, copied into the file this connection writes, not
        left at the path for the file now there (store_wal.py)."""
        if not self.read_only:
            store_wal.settle(self.db, BUSY_TIMEOUT_MS)

    def close(self) -> None:
        if not self.read_only and self.gone() is not None:
            with contextlib.suppress(sqlite3.Error):  # (closed already)
                self.settle_gone()
        self.db.close()
        if self._hold is not None:  # the reader lock on another user's store, after its connection
            os.close(self._hold)
            self._hold = self._seen = None

    @staticmethod
    def _retry(fn, attempts: int = 50):
        # journal_mode changes and BEGIN can report SQLITE_BUSY without waiting on the timeout
        for i in range(attempts):
            try:
                return fn()
            except sqlite3.OperationalError as e:
                if "locked" not in str(e) and "busy" not in str(e) or i == attempts - 1:
                    raise
                time.sleep(0.05 * (i + 1))

    @contextmanager
    def tx(self) -> Iterator[sqlite3.Connection]:
        self._retry(lambda: self.db.execute("BEGIN IMMEDIATE"))
        try:
            yield self.db
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        self.db.execute("COMMIT")
        store_wal.settle(self.db, BUSY_TIMEOUT_MS)  # nothing left in the -wal between writes

    # ---- writing -------------------------------------------------------------------------
    def create_run(self, test: str, args: dict, testbed: str | None = None,
                   engine_version: str | None = None, token: str | None = None) -> int:
        """A new run, `running`; `token`: a pending file's, when the run is imported from it."""
        check_testbed(testbed)
        with self.tx() as c:
            pid = os.getpid()
            # token: a secret of this run that only its own pending file carries (pending.py)
            cur = c.execute(
                "INSERT INTO runs (test, created, status, methodology_version, testbed,"
                " tool_version, engine_version, args, pid, host, pid_start, token)"
                " VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
                (test, now(), "running", METHODOLOGY_VERSION, testbed, __version__,
                 engine_version, dumps(args), pid, socket.gethostname(), process_start(pid),
                 token or secrets.token_hex(16)))
            return inserted_id(cur)

    def add_drive(self, run_id: int, position: int, spec: str, identity: Identity | dict) -> int:
        ident = asdict(identity) if isinstance(identity, Identity) else identity
        with self.tx() as c:
            cur = c.execute(
                "INSERT INTO run_drives (run_id, position, spec, identity, status)"
                " VALUES (?,?,?,?,?)", (run_id, position, spec, dumps(ident), "running"))
            return inserted_id(cur)

    def add_phase(self, run_drive_id: int, seq: int, result: PhaseResult,
                  status: str = "complete") -> int:
        """Store phase `seq` of a drive; it replaces a `partial` one stored before (a
        checkpoint of the running phase), never a complete one."""
        lat = {k: v for k, v in (result.latency or {}).items() if k not in ("edges_us", "counts")}
        with self.tx() as c:
            # a running phase's checkpoint (status partial) gives way to what it became
            for (old,) in c.execute("SELECT id FROM phases WHERE run_drive_id=? AND seq=? AND status='partial'",
                                    (run_drive_id, seq)).fetchall():
                for table in ("series", "histograms", "phases"):
                    c.execute(f"DELETE FROM {table} WHERE {'id' if table == 'phases' else 'phase_id'}=?", (old,))
            cur = c.execute(
                "INSERT INTO phases (run_drive_id, seq, name, kind, spec, status, totals,"
                " latency, recorded) VALUES (?,?,?,?,?,?,?,?,?)",
                (run_drive_id, seq, result.phase.name, result.phase.kind,
                 dumps(result.phase.model_dump()), status, dumps(result.totals or {}),
                 dumps(lat), now()))
            pid = inserted_id(cur)
            rows = [(pid, axis, name, len(arr), to_blob(arr))
                    for axis, cols in (("time", result.series), ("segment", result.segments))
                    for name, arr in (cols or {}).items()]
            c.executemany("INSERT INTO series VALUES (?,?,?,?,?)", rows)
            lat_all = result.latency or {}
            if "edges_us" in lat_all and "counts" in lat_all:
                c.execute("INSERT INTO histograms VALUES (?,?,?)",
                          (pid, to_blob(lat_all["edges_us"]), to_blob(lat_all["counts"])))
            return pid

    def set_metrics(self, run_drive_id: int, metrics: dict[str, Any]) -> None:
        # (run_drive_id, name, a number, or else the value as JSON)
        rows: list[tuple[int, str, int | float | None, str | None]] = []
        for name, v in jsonable(metrics).items():
            if v is None or isinstance(v, (int, float)) and not isinstance(v, bool):
                rows.append((run_drive_id, name, v, None))
            else:
                rows.append((run_drive_id, name, None, json.dumps(v)))
        with self.tx() as c:
            c.executemany("INSERT OR REPLACE INTO metrics VALUES (?,?,?,?)", rows)

    def set_identity(self, run_drive_id: int, identity: Identity | dict) -> None:
        """The drive's identity as the run ends (what it learnt while running: its purges)."""
        ident = asdict(identity) if isinstance(identity, Identity) else identity
        with self.tx() as c:
            c.execute("UPDATE run_drives SET identity=? WHERE id=?", (dumps(ident), run_drive_id))

    def finish_drive(self, run_drive_id: int, status: str) -> None:
        assert status in STATUSES
        with self.tx() as c:
            c.execute("UPDATE run_drives SET status=? WHERE id=?", (status, run_drive_id))

    def finish_run(self, run_id: int, status: str, error: str | None = None) -> None:
        assert status in STATUSES
        with self.tx() as c:
            c.execute("UPDATE runs SET status=?, finished=?, error=? WHERE id=?",
                      (status, now(), error, run_id))

    # ---- reading -------------------------------------------------------------------------
    @_reading
    def runs(self, limit: int | None = None) -> list[dict]:
        q = "SELECT * FROM runs ORDER BY id DESC" + (f" LIMIT {int(limit)}" if limit else "")
        out = []
        for r in self.db.execute(q).fetchall():
            d = self._run_row(r)
            d["drives"] = [x["spec"] for x in self.db.execute(
                "SELECT spec FROM run_drives WHERE run_id=? ORDER BY position", (r["id"],))]
            out.append(d)
        return out

    @_reading
    def created(self, run_id: int) -> str:
        """When the run was created (with its test, what a pending file names it by)."""
        return str(self.db.execute("SELECT created FROM runs WHERE id=?", (run_id,)).fetchone()[0])

    @_reading
    def token(self, run_id: int) -> str | None:
        """The run's secret: a pending file completes the run only when it carries it."""
        return self.db.execute("SELECT token FROM runs WHERE id=?", (run_id,)).fetchone()[0]

    @_reading
    def run_with_token(self, token: str, test: str) -> int | None:
        """The run of test `test` whose token this is (one imported from its pending file), or None."""
        r = self.db.execute("SELECT id FROM runs WHERE token=? AND test=? ORDER BY id LIMIT 1",
                            (token, test)).fetchone()
        return None if r is None else int(r[0])

    @_reading
    def run_row(self, run_id: int) -> dict | None:
        """The run's own columns (test, created, status, token ...), or None."""
        r = self.db.execute("SELECT * FROM runs WHERE id=?", (run_id,)).fetchone()
        return None if r is None else dict(r)

    @_reading
    def drive_id(self, run_id: int, *, run_drive_id: int | None = None,
                 position: int | None = None) -> int | None:
        """The run's drive with this id, or at this position; None when it has none."""
        if run_drive_id is not None:
            r = self.db.execute("SELECT id FROM run_drives WHERE id=? AND run_id=?",
                                (run_drive_id, run_id)).fetchone()
        else:
            r = self.db.execute("SELECT id FROM run_drives WHERE run_id=? AND position=?",
                                (run_id, position)).fetchone()
        return None if r is None else int(r["id"])

    @_reading
    def phase_seqs(self, run_drive_id: int) -> set[int]:
        """The sequence numbers of a drive's stored phases."""
        return {int(r["seq"]) for r in self.db.execute("SELECT seq FROM phases WHERE run_drive_id=?",
                                                       (run_drive_id,))}

    @_reading
    def runs_with_arg(self, key: str, value: str) -> list[dict]:
        """Runs whose stored arguments hold `key` = `value` (a sweep's runs), oldest first:
        id, status and arguments."""
        rows = self.db.execute(
            "SELECT id, status, args FROM runs WHERE json_valid(args) AND "
            "json_extract(args, '$.' || ?) = ? ORDER BY id", (key, value)).fetchall()
        return [{"id": r["id"], "status": r["status"], "args": json.loads(r["args"])} for r in rows]

    @_reading
    def latest_run_id(self) -> int:
        r = self.db.execute("SELECT max(id) FROM runs").fetchone()[0]
        if r is None:
            raise StoreError(f"no runs in {self.path} yet: run a test first, or check --db")
        return int(r)

    @_reading
    def nth_latest_run_id(self, n: int) -> int:
        """The id of the n-th newest run (1: the latest), as -n names it on the command line."""
        if not 0 < n <= MAX_ID:
            raise StoreError(f"no run -{n} in {self.path} (-1 is the latest run, -2 the one before ...)")
        r = self.db.execute("SELECT id FROM runs ORDER BY id DESC LIMIT 1 OFFSET ?", (n - 1,)).fetchone()
        if r is None:
            held = self.db.execute("SELECT count(*) FROM runs").fetchone()[0]
            raise StoreError(f"no run -{n} in {self.path}: it holds {held} run{'s' if held != 1 else ''}"
                             " (-1 is the latest run, -2 the one before ...)")
        return int(r[0])

    @_reading
    def run(self, run_id: int) -> dict:
        """The run with its drives; each drive has identity, status and metrics."""
        if not 0 < run_id <= MAX_ID:
            raise StoreError(f"no run {run_id} in {self.path} (run ids are 1 to {MAX_ID})")
        r = self.db.execute("SELECT * FROM runs WHERE id=?", (run_id,)).fetchone()
        if r is None:
            raise StoreError(f"no run {run_id} in {self.path} (`ssdlab results list` shows its runs)")
        d = self._run_row(r)
        d["drives"] = [self._drive_row(x) for x in self.db.execute(
            "SELECT * FROM run_drives WHERE run_id=? ORDER BY position", (run_id,))]
        if d["status"] == "stale":  # its process is gone: no drive of it is running either
            for x in d["drives"]:
                if x["status"] == "running":
                    x["status"] = "stale"
        return d

    @_reading
    def metrics(self, run_drive_id: int) -> dict[str, Any]:
        return {m["name"]: (json.loads(m["json"]) if m["json"] is not None else m["value"])
                for m in self.db.execute(
                    "SELECT * FROM metrics WHERE run_drive_id=? ORDER BY rowid", (run_drive_id,))}

    @_reading
    def phases(self, run_drive_id: int, with_data: bool = True) -> list[dict]:
        """Phases in order; with_data adds `series`, `segments` (name -> float64 array)
        and `histogram` ({"edges_us", "counts"} or None)."""
        out = []
        for p in self.db.execute("SELECT * FROM phases WHERE run_drive_id=? ORDER BY seq",
                                 (run_drive_id,)):
            d = {"id": p["id"], "seq": p["seq"], "name": p["name"], "kind": p["kind"],
                 "status": p["status"], "spec": json.loads(p["spec"]),
                 "totals": json.loads(p["totals"]), "latency": json.loads(p["latency"]),
                 "recorded": p["recorded"]}
            if with_data:
                d.update(self.phase_data(p["id"]))
            out.append(d)
        return out

    @_reading
    def phase_data(self, phase_id: int) -> dict:
        series: dict[str, np.ndarray] = {}
        segments: dict[str, np.ndarray] = {}
        for s in self.db.execute("SELECT axis, name, data FROM series WHERE phase_id=?"
                                 " ORDER BY rowid", (phase_id,)):
            (series if s["axis"] == "time" else segments)[s["name"]] = from_blob(s["data"])
        h = self.db.execute("SELECT * FROM histograms WHERE phase_id=?", (phase_id,)).fetchone()
        hist = {"edges_us": from_blob(h["edges_us"]), "counts": from_blob(h["counts"])} if h else None
        return {"series": series, "segments": segments, "histogram": hist}

    def _run_row(self, r: sqlite3.Row) -> dict:
        d = dict(r)
        d.pop("token", None)  # the pending file's secret: never shown
        d["args"] = json.loads(d["args"])
        if d["status"] == "running" and is_gone(d):
            d["status"] = "stale"
        return d

    def _drive_row(self, x: sqlite3.Row) -> dict:
        return {"id": x["id"], "position": x["position"], "spec": x["spec"],
                "identity": json.loads(x["identity"]), "status": x["status"],
                "metrics": self.metrics(x["id"])}


def _file_id(path: str | Path) -> tuple[int, int]:
    return (st := os.stat(path)).st_dev, st.st_ino


def _owner(path: str) -> int | None:
    try:
        return os.stat(path).st_uid
    except OSError:
        return None


def is_gone(run: dict) -> bool:
    """A `running` run whose process on this host no longer exists (killed, machine
    rebooted): it will never finish. Runs of other hosts, and of stores written before
    runs recorded their process, cannot be told and stay `running`."""
    pid, start = run.get("pid"), run.get("pid_start")
    if not pid or not start or run.get("host") != socket.gethostname():
        return False
    return process_start(int(pid)) != start
