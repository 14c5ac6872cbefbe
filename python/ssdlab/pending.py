"""Results the store could not take (its disk full, its file gone read-only): what a run
measured is written to a JSON file instead, next to the store when there is room, else in
the temporary directory or the home directory, and `ssdlab results import FILE` puts it
back into a store later. Nothing measured is dropped for want of a place to keep it."""

from __future__ import annotations

import errno
import json
import math
import os
import secrets
import socket
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from . import safe_path
from .host_memory import available_bytes
from .phase import Phase, PhaseResult
from .store import MAX_ID, Store, StoreError, dumps, is_gone
from .store_schema import PHASE_STATUSES, STATUSES

FORMAT = "ssdlab-pending/1"
MAX_BYTES = 1 << 30  # a pending file holds a run's series: far less than this
# what reading takes per value in the file (a number: a Python float and its place in a
# list, then an array's 8 bytes): 12 M values of 4 bytes ("0.5,") took 710 MB to import
BYTES_PER_VALUE = 56


def phase_doc(seq: int, result: PhaseResult, status: str) -> dict:
    return {"seq": seq, "status": status, "phase": result.phase.model_dump(),
            "series": result.series or {}, "segments": result.segments or {},
            "latency": result.latency or {}, "totals": result.totals or {}}


def _arr(v: Any) -> np.ndarray:
    return np.array([math.nan if x is None else x for x in v], dtype=np.float64)


def phase_result(d: dict) -> PhaseResult:
    lat = dict(d.get("latency") or {})
    for k in ("edges_us", "counts"):
        if k in lat:
            lat[k] = _arr(lat[k])
    return PhaseResult(phase=Phase.model_validate(d["phase"]),
                       series={k: _arr(v) for k, v in (d.get("series") or {}).items()},
                       segments={k: _arr(v) for k, v in (d.get("segments") or {}).items()},
                       latency=lat, totals=d.get("totals") or {})


class Pending:
    """What one run could not store, kept in one file that is rewritten as it grows."""

    def __init__(self, store_path: Path, run: dict):
        self.store_path = store_path
        self.doc: dict[str, Any] = {"format": FORMAT, "store": str(store_path), "run": run,
                                    "drives": {}}
        self.file: Path | None = None

    def drive(self, position: int, spec: str | None = None, identity: Any = None,
              run_drive_id: int | None = None) -> dict:
        d = self.doc["drives"].setdefault(str(position), {"position": position, "phases": []})
        if spec is not None:
            d.update(spec=spec, identity=identity, run_drive_id=run_drive_id)
        return d

    def save(self) -> Path:
        """Write the file (the same one each time once it exists); raises OSError when no
        place can take it. The first write creates a new file (never through a link or
        over a file someone put there, e.g. in /tmp: safe_path.create); later ones replace
        it from a new file of a random name (safe_path.write)."""
        text = dumps(self.doc).encode()
        if self.file is not None:
            try:
                safe_path.write(self.file, text, f"pending results {self.file}", mode=0o600, sync=True)
            except safe_path.UnsafePath as e:
                raise OSError(str(e)) from None
            return self.file
        errors = []
        stamp = time.strftime("%Y%m%d-%H%M%S")
        rid = self.doc["run"].get("id")  # none yet: a test held until it is stored (held.py)
        base = f"{self.store_path.name}.{self.doc['run']['test'] if rid is None else f'run{rid}'}-{stamp}"
        for where in (self.store_path.parent, Path(tempfile.gettempdir()), Path.home()):
            for n in range(NAME_TRIES):
                f = where / (f"{base}.pending.json" if n == 0 else f"{base}-{n}.pending.json")
                try:
                    fd = safe_path.create(f, f"pending results {f}")
                except safe_path.Exists:
                    continue  # a file (or a planted link) has that name: another name
                except (safe_path.UnsafePath, OSError) as e:
                    errors.append(f"{where}: {e.strerror if isinstance(e, OSError) else e}")
                    break
                try:
                    _write_all(fd, text)
                except OSError as e:
                    errors.append(f"{where}: {e.strerror or e}")
                    _unlink_quietly(f)  # ours: created just now
                    break
                self.file = f
                return f
            else:
                errors.append(f"{where}: {NAME_TRIES} files named {base}*.pending.json exist")
        raise OSError("; ".join(errors))


NAME_TRIES = 100


def from_store(store: Store, run_id: int, run: dict) -> Pending:
    """Everything `store` holds of run `run_id` (`run`: its own fields), as a pending file's
    document: its drives with their phases, metrics and statuses, and the run's status once
    it has one. For a store whose file was removed or replaced while the run went on
    (Store.gone): what was written to it is still read through the connection that wrote it."""
    p = Pending(store.path, dict(run, id=run_id))
    row = store.run(run_id)
    if row["status"] not in ("running", "stale"):
        p.doc["run"].update(status=row["status"], error=row["error"])
    for drv in row["drives"]:
        d = p.drive(drv["position"], drv["spec"], drv["identity"], drv["id"])
        d["phases"] = [phase_doc(x["seq"], PhaseResult(Phase.model_validate(x["spec"]), x["series"], x["segments"],
                                                       {**x["latency"], **(x["histogram"] or {})}, x["totals"]),
                                 x["status"]) for x in store.phases(drv["id"])]
        if drv["metrics"]:
            d["metrics"] = drv["metrics"]
        if drv["status"] not in ("running", "stale"):
            d["status"] = drv["status"]
    return p


def saved_line(f: Path, error: BaseException) -> str:
    """The end of the one line that says where a pending file went: the file and the command
    that takes it back, once the store can be written again (room freed, when it was full)."""
    full = getattr(error, "errno", None) in (errno.ENOSPC, errno.EDQUOT) or "disk is full" in str(error)
    when = "free space, then" if full else "once the store can be written,"
    return f"saved to {f}; {when} `ssdlab results import {f}`"


def save_saying(p: Pending, why: str, error: BaseException, what: str = "") -> tuple[Path | None, str]:
    """Save `p`: (the file, or None when no place took it; the one line that says so: `why`,
    then where `what` (what was recorded) went, or that it is lost)."""
    try:
        f = p.save()
    except OSError as e:
        return None, f"{why}, and no pending file could be written either ({e}): {what or 'it'} is lost"
    return f, f"{why}: {what + ' is ' if what else ''}{saved_line(f, error)}"


def _write_all(fd: int, data: bytes) -> None:
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        os.fsync(fd)
    finally:
        os.close(fd)


def _unlink_quietly(p: Path) -> None:
    try:
        p.unlink()
    except OSError:
        pass


class _Bad(ValueError):
    pass


def _need(ok: bool, where: str, what: str) -> None:
    if not ok:
        raise _Bad(f"{where}: {what}")


def _int(v: Any, where: str, lo: int = 0) -> int:
    _need(isinstance(v, int) and not isinstance(v, bool) and lo <= v <= MAX_ID, where,
          f"must be an integer {lo} to {MAX_ID}, not {_show(v)}")
    return v


def _opt_str(d: dict, key: str, where: str) -> str | None:
    v = d.get(key)
    _need(v is None or isinstance(v, str), f"{where}.{key}", f"must be text, not {_show(v)}")
    return v


def _status(d: dict, key: str, where: str) -> str | None:
    v = d.get(key)
    _need(v is None or v in STATUSES, f"{where}.{key}", f"must be one of {', '.join(STATUSES)}, not {_show(v)}")
    return v


def _dict(v: Any, where: str, optional: bool = True) -> dict:
    if v is None and optional:
        return {}
    _need(isinstance(v, dict), where, f"must be an object, not {_show(v)}")
    return v


def _json_ok(v: Any, where: str, depth: int = 0) -> None:
    """A value the store keeps as JSON: numbers in SQLite's range (what a metric holds)."""
    _need(depth < 64, where, "nested too deeply")
    if isinstance(v, dict):
        for k, x in v.items():
            _json_ok(x, f"{where}.{k}", depth + 1)
    elif isinstance(v, list):
        for i, x in enumerate(v):
            _json_ok(x, f"{where}[{i}]", depth + 1)
    elif isinstance(v, int) and not isinstance(v, bool):
        _need(-MAX_ID - 1 <= v <= MAX_ID, where, f"integer {_show(v)} is out of range")


def _series(v: Any, where: str) -> dict[str, np.ndarray]:
    out = {}
    for k, col in _dict(v, where).items():
        _need(isinstance(col, list), f"{where}.{k}", f"must be a list of numbers, not {_show(col)}")
        try:
            out[k] = _arr(col)
        except (TypeError, ValueError, OverflowError):
            raise _Bad(f"{where}.{k}: must be a list of numbers") from None
        _need(out[k].ndim == 1, f"{where}.{k}", "must be a flat list of numbers")
    return out


def _phase(p: Any, where: str) -> tuple[int, str, PhaseResult]:
    p = _dict(p, where, optional=False)
    seq = _int(p.get("seq"), f"{where}.seq")
    status = p.get("status")
    _need(status in PHASE_STATUSES, f"{where}.status",
          f"must be one of {', '.join(PHASE_STATUSES)}, not {_show(status)}")
    try:
        phase = Phase.model_validate(p.get("phase"))
    except ValueError as e:  # pydantic's ValidationError
        raise _Bad(f"{where}.phase: not a valid phase ({one_line_of(e)})") from None
    lat = dict(_dict(p.get("latency"), f"{where}.latency"))
    for k in ("edges_us", "counts"):
        if k in lat:
            lat[k] = _series({k: lat[k]}, f"{where}.latency")[k]
    rest = {k: v for k, v in lat.items() if k not in ("edges_us", "counts")}
    _json_ok(rest, f"{where}.latency")
    totals = _dict(p.get("totals"), f"{where}.totals")
    _json_ok(totals, f"{where}.totals")
    res = PhaseResult(phase=phase, series=_series(p.get("series"), f"{where}.series"),
                      segments=_series(p.get("segments"), f"{where}.segments"), latency=lat, totals=totals)
    return seq, status, res


def _checked(doc: Any) -> dict:
    """The pending document with every field checked (type and range) before anything is
    written; _Bad names the first field that is wrong."""
    run = _dict(doc.get("run"), "run", optional=False)
    test = run.get("test")
    _need(isinstance(test, str) and test != "", "run.test", f"must be a test name, not {_show(test)}")
    rid = run.get("id")
    args = _dict(run.get("args"), "run.args")
    _json_ok(args, "run.args")
    drives: list[dict[str, Any]] = []
    token = _opt_str(run, "token", "run")
    _need(token is None or len(token) <= 64, "run.token", "must be the run's token")
    out: dict[str, Any] = {"id": None if rid is None else _int(rid, "run.id", 1), "test": test, "args": args,
           "token": token, "created": _opt_str(run, "created", "run"), "testbed": _opt_str(run, "testbed", "run"),
           "engine_version": _opt_str(run, "engine_version", "run"),
           "status": _status(run, "status", "run"), "error": _opt_str(run, "error", "run"), "drives": drives}
    for key, d in _dict(doc.get("drives"), "drives", optional=False).items():
        where = f"drives.{key}"
        d = _dict(d, where, optional=False)
        rd = d.get("run_drive_id")
        metrics = d.get("metrics")
        if metrics is not None:
            _json_ok(_dict(metrics, f"{where}.metrics"), f"{where}.metrics")
        ident = _dict(d.get("identity"), f"{where}.identity")
        _json_ok(ident, f"{where}.identity")
        phases = d.get("phases") or []
        _need(isinstance(phases, list), f"{where}.phases", f"must be a list, not {_show(phases)}")
        drives.append({
            "position": _int(d.get("position"), f"{where}.position"),
            "spec": _opt_str(d, "spec", where) or "?", "identity": ident,
            "run_drive_id": None if rd is None else _int(rd, f"{where}.run_drive_id", 1),
            "phases": [_phase(p, f"{where}.phases[{i}]") for i, p in enumerate(phases)],
            "metrics": metrics, "status": _status(d, "status", where)})
    drives.sort(key=lambda x: x["position"])
    return out


def _show(v: Any) -> str:
    t = repr(v)
    return t if len(t) <= 40 else t[:37] + "..."


def one_line_of(e: Exception) -> str:
    errors = getattr(e, "errors", None)
    if callable(errors):
        return "; ".join(f"{'.'.join(map(str, x['loc'])) or 'phase'}: {x['msg']}" for x in errors())
    return str(e).splitlines()[0] if str(e) else type(e).__name__


def read(path: Path) -> dict:
    """A pending file, checked; StoreError (one line naming the file and the field) when
    it cannot be read or is not a well-formed pending file."""
    try:
        data = safe_path.read_input(path, "results import", MAX_BYTES)
    except safe_path.UnsafePath as e:
        raise StoreError(str(e)) from None
    _fits_in_memory(path, data)
    try:
        doc = json.loads(data)
    except RecursionError:
        raise StoreError(f"cannot read {path}: nested too deeply") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as e:  # a file of another kind, given by mistake
        raise StoreError(f"cannot read {path}: {e}; it is not an ssdlab pending-results file (the JSON file a run "
                         "saves when its store cannot be written)") from None
    except (OSError, ValueError) as e:
        raise StoreError(f"cannot read {path}: {e}") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise StoreError(f"{path} is not an ssdlab pending-results file (format {FORMAT})")
    try:
        return _checked(doc)
    except _Bad as e:
        raise StoreError(f"{path} is not a well-formed pending-results file: {e}; it cannot be "
                         "imported") from None
    except RecursionError:
        raise StoreError(f"{path} is not a well-formed pending-results file: nested too deeply") from None


def _fits_in_memory(path: Path, data: bytes) -> None:
    """StoreError, before the file is parsed, when reading it would take more memory than
    the machine has available: a file of short numbers takes some 15 times its size (a
    crafted one of 1 GiB, 15 GB)."""
    need = len(data) + (data.count(b",") + 1) * BYTES_PER_VALUE
    have = available_bytes()
    if need > have:
        raise StoreError(f"{path}: importing its {len(data) / 1e6:.3g} MB would take about {need / 1e9:.3g} GB of "
                         f"memory, more than this machine has available ({have / 1e9:.3g} GB); import it where "
                         "there is more") from None


def _alive(row: dict) -> bool:
    """The run's own process still runs on this host (`is_gone` cannot tell a run of
    another host or of an old store: those count as ended)."""
    return bool(row.get("pid") and row.get("pid_start")) and row.get("host") == socket.gethostname() \
        and not is_gone(row)


def import_file(store: Store, path: Path, run: dict | None = None) -> tuple[int, int]:
    """Put a pending file's phases, metrics and final statuses into `store`: into its own
    run when that run is there, still `running` (or stale), and the file carries the run's
    token (a secret only the run's own pending file has); else into the run an earlier import
of the file made in this store (it carries the file's token); else into a new run. A run that
    finished (complete, interrupted, failed) is never changed: its file imported again adds
    nothing; nor is a run whose process still runs here (ValueError). Returns (run id,
    phases imported). The whole file is checked before anything is written (`run`: the file as `read` gave it already)."""
    run = read(path) if run is None else run
    run_id = run["id"]
    same = False
    if run["token"]:
        r = store.run_row(run_id) if run_id else None
        same = (r is not None and r["token"] is not None and secrets.compare_digest(r["token"], run["token"])
                and r["test"] == run["test"] and r["created"] == run["created"])
        if not same and (found := store.run_with_token(run["token"], run["test"])) is not None:
            run_id, r, same = found, store.run_row(found), True  # the run an import of it made here
        if same and r is not None and r["status"] != "running":
            return run_id, 0  # finished: imported before, or stored whole after all
        if same and r is not None and _alive(r):
            raise ValueError(f"run {run_id} is still running (process {r['pid']} on this host) and may add "
                             f"to {path.name} yet; import it once that run has ended")
    if not same:
        # the file's token goes with it: imported again, the file finds this run
        run_id = store.create_run(run["test"], run["args"], run["testbed"], run["engine_version"],
                                  token=run["token"])
    n = 0
    for d in run["drives"]:
        # its own drive, else the run's drive at its position, else a new one
        rd = store.drive_id(run_id, run_drive_id=d["run_drive_id"]) if same and d["run_drive_id"] else None
        if rd is None:
            rd = store.drive_id(run_id, position=d["position"])
        if rd is None:
            rd = store.add_drive(run_id, d["position"], d["spec"], d["identity"])
        have = store.phase_seqs(rd)
        for seq, status, res in d["phases"]:
            if seq not in have:
                store.add_phase(rd, seq, res, status)
                have.add(seq)
                n += 1
        if d["metrics"] is not None:
            store.set_metrics(rd, d["metrics"])
        if d["status"]:
            store.finish_drive(rd, d["status"])
    if run["status"]:
        store.finish_run(run_id, run["status"], run["error"])
    return run_id, n
