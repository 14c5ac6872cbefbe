"""One serving session: check everything, start nbdkit with the plugin, report rows as
they come, and when it ends (Ctrl-C, SIGTERM, --seconds) stop nbdkit and store the run:
test `serve`, one phase `serve` holding the drive's counters and the lag over time,
metrics with the totals (docs/serve.md)."""

from __future__ import annotations

import os
import stat
import shutil
import subprocess
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable

from .. import _sim, safe_path
from ..phase import Identity
from ..store import Store, process_start
from ..targets.fio import nbd_uri
from ..targets.guard import locks, safety
from . import keeper, nbdkit
from ..served import marker, stats

MAX_SOCKET_PATH = 107  # sun_path


@dataclass
class ServeOptions:
    drive: str
    sets: list[str] = field(default_factory=list)
    seed: int = 42
    socket: Path | None = None
    tcp: str | None = None
    tcp_unauthenticated: bool = False  # the user accepts that anyone who connects reads and writes
    data: Path | None = None
    destroy_data: str | None = None
    seconds: float | None = None
    interval_s: float = 1.0


def profile_text(drive: str) -> str:
    """The profile of the simulated drive `drive` names (serve's --drive, parsed here)."""
    from ..targets import parse_drive

    spec = parse_drive(drive)
    if not spec.simulated:
        raise ValueError(f"serve {drive}: only a simulated drive can be served: sim:PROFILE "
                         "(see `ssdlab drives`) or a profile .toml file")
    return spec.profile_text()


def served_uri(sock: Path | None, tcp: tuple[str, int] | None) -> str:
    if tcp:
        host = f"[{tcp[0]}]" if ":" in tcp[0] else tcp[0]
        return f"nbd://{host}:{tcp[1]}"
    return nbd_uri.unix(str(sock)).text  # the path escaped as libnbd reads it


def check_socket(sock: Path) -> Path:
    """A new socket path (and marker path) in an existing directory; the directory's real
    path, so the marker is where `--drive nbd:` looks for it through any link."""
    if not sock.parent.is_dir():
        raise ValueError(f"--socket {sock}: directory {sock.parent.absolute()} does not exist")
    sock = Path(safe_path.real(sock.parent, f"--socket {sock}")) / sock.name
    # nbdkit binds it by name and ssdlab then changes its mode: in a directory another user
    # may write (not sticky), they could swap it for a link in between
    safe_path.check_dirs(str(sock), f"--socket {sock}")
    if len(str(sock)) > MAX_SOCKET_PATH:
        raise ValueError(f"--socket {sock}: path longer than {MAX_SOCKET_PATH} bytes; choose a shorter one")
    mark = marker.marker_path(sock)
    if os.path.lexists(sock) or os.path.lexists(mark):
        live = marker.served_here(str(sock))
        if live:
            raise ValueError(f"--socket {sock}: already served by ssdlab (pid {live['pid']}); choose another path")
        there = sock if os.path.lexists(sock) else mark
        raise ValueError(f"--socket {sock}: {there} exists and ssdlab will not replace it; remove it "
                         "or choose another path")
    return sock


def check_data(data: Path, capacity: int, destroy_data: str | None) -> Path:
    """The backing file: a new one, one ssdlab made, or one --destroy-data names (the
    rules of a file: target, targets/guard/safety.py: never through another user's link or a
    link to a missing file)."""
    name = f"--data {data}"
    try:  # a directory or a device: said as --data's (a file target's line offers /dev/...)
        kind = os.lstat(data).st_mode
    except OSError:
        kind = stat.S_IFREG
    if not (stat.S_ISREG(kind) or stat.S_ISLNK(kind)):
        raise ValueError(f"{name}: not a regular file; the data of a served drive is kept in a file")
    try:
        real = Path(safety.check_file_write(str(data), destroy_data, name=name))
    except safety.UnsafeTarget as e:
        raise ValueError(str(e)) from None
    if real.exists() and not real.is_file():
        raise ValueError(f"{name}: not a regular file; the data of a served drive is kept in a file")
    st = os.statvfs(real.parent)
    have = st.f_bavail * st.f_frsize + (real.stat().st_blocks * 512 if real.exists() else 0)
    if have < capacity:
        # sparse, so it starts small, but a full drive needs all of it
        raise ValueError(f"{name}: the drive holds {capacity / 1e9:.3g} GB and that filesystem "
                         f"has {have / 1e9:.3g} GB free; choose another place or shrink the drive with --set")
    return real


def create_data(path: Path, destroy_data: str | None) -> None:
    """A new --data file: created here (never through a link planted since the check) and
    marked as ssdlab's, so serving it again needs no --destroy-data. A file that appeared
    since the check is checked again."""
    try:
        fd = safe_path.open_real(str(path), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600, f"--data {path}")
    except safe_path.Exists:
        if Path(check_data(path, 0, destroy_data)) != path:
            raise ValueError(f"--data {path}: a symlink appeared there; choose another path") from None
        return
    try:
        safety.mark_ours(fd)
    finally:
        os.close(fd)


def lock_data(path: Path) -> locks.FileTargetLock:
    """The --data file held for writing while it is served, as a file: target's is: another
    serve of it, or a run on it as a file: target, is refused meanwhile (two drives on one
    file would write each other's data)."""
    lock = locks.FileTargetLock(str(path)).acquire()
    try:
        lock.for_writing()
    except BaseException:
        lock.release()
        raise
    return lock


class Serving:
    """A serving session. Built, it has checked everything (nothing started or stored);
    `start()` records the run and starts nbdkit; `rows()` returns new stats rows;
    `finish()` stops and stores."""

    def __init__(self, opts: ServeOptions):
        self.text = profile_text(opts.drive)
        d = _sim.Drive(self.text, overrides=list(opts.sets), seed=opts.seed)  # checks --set
        self.info = d.info()
        self.resolved_profile = d.profile()
        del d
        self.capacity = int(self.info["user_bytes"])
        self.tcp = nbdkit.parse_tcp(opts.tcp) if opts.tcp else None
        if self.tcp:
            nbdkit.check_tcp(self.tcp)
            if not opts.tcp_unauthenticated:
                raise ValueError(f"--tcp {opts.tcp}: NBD has no authentication: every user of this machine "
                                 f"{'' if nbdkit.is_loopback(self.tcp[0]) else 'and every machine that reaches it '}"
                                 "could read and write the served drive; serve on the Unix socket (the default: "
                                 "its owner's alone), or add --tcp-unauthenticated to accept that")
        # no --socket: one in a directory of its own (mkdtemp: 0700, ours), made at start()
        self.socket = check_socket(opts.socket) if opts.socket and not self.tcp else None
        if not self.tcp and not self.socket and len(tempfile.gettempdir()) + 40 > MAX_SOCKET_PATH:
            raise ValueError(f"the temporary directory {tempfile.gettempdir()} has too long a path for a "
                             "socket; give --socket PATH")
        self.user_data = check_data(opts.data, self.capacity, opts.destroy_data) if opts.data else None
        nbdkit.nbdkit_binary()
        nbdkit.plugin_path()
        self.opts = opts
        self.uri = served_uri(self.socket, self.tcp) if self.tcp or self.socket else ""
        self._marker: marker.FileId | None = None
        self._socket_id: marker.FileId | None = None
        self.said: dict = {}
        self.pending: Path | None = None
        self.unstored: str | None = None

    def start(self, store: Store, args: dict) -> None:
        opts = self.opts
        self.store = store
        if self.user_data:
            create_data(self.user_data, opts.destroy_data)  # before anything is stored
            self._data_lock = lock_data(self.user_data)
        self.work = Path(tempfile.mkdtemp(prefix="ssdlab-serve-"))
        if not self.tcp and not self.socket:
            self.socket = self.work / "drive.sock"
            self.uri = served_uri(self.socket, None)
        (self.work / "profile.toml").write_text(self.text)
        self.data = self.user_data or self.work / "data"  # sparse; removed at the end
        self.stats_path = self.work / "stats.jsonl"
        self.stats = stats.StatsTail(self.stats_path)
        cmd = nbdkit.command(profile=self.work / "profile.toml", sets=list(opts.sets), seed=opts.seed,
                             data=self.data, stats=self.stats_path, socket=self.socket, tcp=self.tcp,
                             pidfile=self.work / "pid", interval_s=opts.interval_s)
        engine = nbdkit_version()
        self.run_id = store.create_run("serve", args, engine_version=engine)
        ident = self.identity()
        self.rd = store.add_drive(self.run_id, 0, opts.drive, ident)
        self.t0 = time.monotonic()
        try:
            # stores what was recorded and removes these files should this process be killed
            self.keeper = keeper.start(store.path, self.run_id, self.rd, self.work)
            # the run as a pending file names it, should the store refuse the keeper's write
            self.said = {
                "run": {"test": "serve", "created": store.created(self.run_id), "token": store.token(self.run_id),
                        "args": args, "testbed": None, "engine_version": engine},
                "drive": {"spec": opts.drive, "identity": asdict(ident)}}
            keeper.tell(self.keeper, self.said)
            self.proc = nbdkit.start(cmd, self.work / "pid", self.work / "nbdkit.log")
            if self.socket:
                self._socket_id = marker.private_socket(self.socket)
                if self._socket_id is None:
                    raise RuntimeError(f"nbdkit started but {self.socket} is not its socket")
                self._marker = marker.write_marker(self.socket, {
                    "pid": os.getpid(), "pid_start": process_start(os.getpid()),
                    "socket": str(self.socket), "socket_id": list(self._socket_id),
                    "drive": opts.drive, "run_id": self.run_id, "capacity": self.capacity,
                    "stats": str(self.stats_path)})
                keeper.tell(self.keeper, {"socket": str(self.socket), "socket_id": list(self._socket_id),
                                          "marker_id": list(self._marker)})
        except BaseException as e:
            if getattr(self, "proc", None) is not None:
                nbdkit.stop(self.proc)
            store.finish_drive(self.rd, "failed")
            store.finish_run(self.run_id, "failed", f"nbdkit did not start: {e}")
            self._cleanup()
            raise

    def identity(self) -> Identity:
        i = self.info
        return Identity(kind="sim", model=i["name"], capacity=self.capacity,
                        firmware=f"ssdsim {_sim.__version__}", serial=i["id"],
                        extra={"profile": self.resolved_profile, "info": i, "served": self.uri})

    def alive(self) -> bool:
        return self.proc.poll() is None

    def rows(self) -> list[dict]:
        """The stats rows written since the last call (read incrementally)."""
        return self.stats.new_rows()

    def finish(self) -> tuple[dict, str]:
        """Stop nbdkit, store the session; returns (totals, status). When the store cannot
        take it, the session goes to a pending file as a killed serve's does (keeper.keep):
        `pending` names the file and `unstored` is the line that says so (else both None)."""
        crashed = self.proc.poll() is not None
        code = nbdkit.stop(self.proc)
        rows = self.stats.drain()
        status = "failed" if crashed or not len(rows) else "complete"
        error = None
        if status == "failed":
            error = f"nbdkit exited ({code}): {nbdkit.last_words(self.work / 'nbdkit.log') or 'no message'}"
        self.pending, self.unstored = keeper.keep(self.store.path, self.run_id, self.rd, self.said, rows,
                                                  status, error, "stopped")
        self._cleanup()
        return rows.totals(), status

    def _cleanup(self) -> None:
        if self.socket:
            # only the files this session made: a file put in their place is left alone
            marker.remove_own(marker.marker_path(self.socket), self._marker)
            marker.remove_own(self.socket, self._socket_id)  # nbdkit leaves its socket behind
        shutil.rmtree(self.work, ignore_errors=True)
        if getattr(self, "_data_lock", None) is not None:
            self._data_lock.release()
        if getattr(self, "keeper", None) is not None:
            keeper.done(self.keeper)


def nbdkit_version() -> str:
    try:
        out = subprocess.run([nbdkit.nbdkit_binary(), "--version"], capture_output=True, text=True, timeout=10)
        return out.stdout.strip()
    except (OSError, subprocess.TimeoutExpired, ValueError):
        return "nbdkit"


def serve(s: Serving, store: Store, args: dict,
          on_ready: Callable[[Serving], None] | None = None,
          on_row: Callable[[dict], None] | None = None) -> tuple[int, dict, str]:
    """Serve until Ctrl-C / SIGTERM, `seconds`, or nbdkit ends; returns (run id, totals,
    status); a run the store could not take is in the pending file `s.pending` (`s.unstored`
    says so). `s` has checked the options already (Serving(opts))."""
    s.start(store, args)
    try:
        if on_ready:
            on_ready(s)
        end = s.t0 + s.opts.seconds if s.opts.seconds else None
        while s.alive() and (end is None or time.monotonic() < end):
            time.sleep(0.2 if end is None else max(0.0, min(0.2, end - time.monotonic())))
            for r in s.rows():
                if on_row:
                    on_row(r)
    except KeyboardInterrupt:
        pass  # the normal way to stop serving
    finally:
        totals, status = s.finish()
    return s.run_id, totals, status
