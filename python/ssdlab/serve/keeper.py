"""What outlives `ssdlab serve` killed outright (SIGKILL, the OOM killer), when none of
its own cleanup runs: a small process in a session of its own, started with each serving
session, that learns of serve's end by its pipe from serve closing. A serve that ends as
it should writes DONE first, and the keeper just exits. Otherwise the keeper waits for
nbdkit to go (--exit-with-parent stops it, and the plugin writes its final stats line),
stores what the stats file holds as the run, `interrupted`, and removes the session's
files: the drive's temporary data, the socket and its marker (only the very files serve
made). When the store cannot take the run then (disk full, locked too long, removed), the
run goes to a pending-results file instead (pending.py), and the keeper says where on the
stderr it shares with serve (serve's terminal, or the log serve's stderr went to). A serve
that stops as it should stores its run the same way (`keep`), and says so itself."""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from ..pending import Pending, phase_doc, save_saying
from ..phase import Phase, PhaseResult
from ..served import marker, stats
from ..store import Store, StoreError, dumps
from ..targets import child

DONE = b"done\n"
NBDKIT_GRACE_S = 60.0  # nbdkit finishes the requests in flight, then the plugin its stats
KILLED = "ssdlab serve was killed; what the drive recorded until then is kept"


def session_phase(rows: stats.Columns) -> tuple[dict, PhaseResult | None, str]:
    """(totals, the phase `serve`, its status) of the session's stats rows; no phase
    without a row."""
    totals = rows.totals()
    if not (len(rows) and rows.last is not None):
        return totals, None, ""
    dur = max(totals.get("duration_s", 0.0), 1e-3)
    z = np.zeros(0)
    res = PhaseResult(phase=Phase(kind="io", name="serve", stop_seconds=dur),
                      series=rows.series(), segments={"gb": z, "mbps": z, "t_s": z},
                      latency={}, totals=totals)
    return totals, res, "complete" if rows.last.get("final") else "partial"


def record(store: Store, run_id: int, rd: int, rows: stats.Columns, status: str,
           error: str | None) -> dict:
    """The session's stats rows stored as its run: one phase `serve` (kept if stored
    already), metrics of the totals, the final statuses. Returns the totals."""
    totals, res, phase_status = session_phase(rows)
    if res is not None:
        if 1 not in store.phase_seqs(rd):
            store.add_phase(rd, 1, res, phase_status)
        store.set_metrics(rd, stats.metrics(totals))
    store.finish_drive(rd, status)
    store.finish_run(run_id, status, error)
    return totals


def pending(store_path: Path, run_id: int, rd: int, said: dict, rows: stats.Columns, status: str,
            error: str | None) -> Pending:
    """What `record` would store, as a pending file's document (`said`: the run and drive
    serve told the keeper, so `results import` completes that very run)."""
    p = Pending(store_path, dict(said.get("run") or {"test": "serve"}, id=run_id, status=status, error=error))
    drive = said.get("drive") or {}
    d = p.drive(0, drive.get("spec"), drive.get("identity"), rd)
    totals, res, phase_status = session_phase(rows)
    if res is not None:
        d["phases"].append(phase_doc(1, res, phase_status))
        d["metrics"] = stats.metrics(totals)
    d["status"] = status
    return p


def start(store: Path, run_id: int, rd: int, work: Path) -> subprocess.Popen:
    """The keeper of a session; serve holds its pipe until `done`."""
    # -P: a module another user left in the working directory (/tmp) is not imported
    return subprocess.Popen(child.python_module(__name__, str(store), str(run_id), str(rd), str(work)),
                            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, start_new_session=True)


def tell(proc: subprocess.Popen, files: dict) -> None:
    """What the keeper needs to know: the run's own fields and its drive ({"run", "drive"},
    for a pending file), the socket and marker serve made ({"socket", "socket_id",
    "marker_id"})."""
    assert proc.stdin is not None
    proc.stdin.write(dumps(files).encode() + b"\n")
    proc.stdin.flush()


def done(proc: subprocess.Popen) -> None:
    """Serve stored its run and removed its files: the keeper has nothing to do."""
    try:
        assert proc.stdin is not None
        proc.stdin.write(DONE)
        proc.stdin.close()
    except OSError:
        pass  # it is gone already
    proc.wait()


def _gone(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return True
    return state in ("Z", "X")  # a zombie no one has reaped yet has ended too


def _wait_for_nbdkit(work: Path) -> None:
    try:
        pid = int((work / "pid").read_text())
    except (OSError, ValueError):
        return
    end = time.monotonic() + NBDKIT_GRACE_S
    while not _gone(pid) and time.monotonic() < end:
        time.sleep(0.05)


def keep(store_path: Path, run_id: int, rd: int, said: dict, rows: stats.Columns, status: str = "interrupted",
         error: str | None = KILLED, ended: str = "was killed") -> tuple[Path | None, str | None]:
    """Store the session as its run (the store opened afresh: one removed or replaced since is
    found), else save it to a pending file: (None, None) when stored, else (the pending file,
    or None when none could be written; the one line that says where it went). The keeper of a
    killed serve calls it, and serve itself when it stops as it should (`ended` "stopped")."""
    try:
        store = Store(store_path, create=False)
        try:
            record(store, run_id, rd, rows, status, error)
        finally:
            store.close()
        return None, None
    except (StoreError, sqlite3.Error, OSError) as e:
        why = f"ssdlab serve (run {run_id}) {ended} and cannot write results store {store_path} ({e})"
        cause: BaseException = e
    return save_saying(pending(store_path, run_id, rd, said, rows, status, error), why, cause, "what it recorded")


def main(argv: list[str]) -> None:
    store_path, run_id, rd, work = Path(argv[0]), int(argv[1]), int(argv[2]), Path(argv[3])
    said: dict = {}
    for line in sys.stdin.buffer:  # until serve closes the pipe, however it ends
        if line == DONE:
            return
        said.update(json.loads(line))
    _wait_for_nbdkit(work)
    try:
        _, msg = keep(store_path, run_id, rd, said, stats.StatsTail(work / "stats.jsonl").drain())
        if msg:
            try:
                print(msg, file=sys.stderr, flush=True)
            except OSError:
                pass  # serve's stderr went with it (a closed pipe): the file is still there
    finally:
        if said.get("socket"):
            sock = Path(said["socket"])
            marker.remove_own(marker.marker_path(sock), tuple(said["marker_id"]))
            marker.remove_own(sock, tuple(said["socket_id"]))
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main(sys.argv[1:])
