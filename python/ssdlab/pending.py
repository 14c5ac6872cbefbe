"""Results the store could not take (its disk full, its file gone read-only): what a run
measured is written to a JSON file instead, next to the store when there is room, else in
the temporary directory or the home directory, and `ssdlab results import FILE` puts it
back into a store later. Nothing measured is dropped for want of a place to keep it."""

from __future__ import annotations

import json
import math
import os
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from .phase import Phase
from .store import Store, StoreError, dumps
from .phase import PhaseResult

FORMAT = "ssdlab-pending/1"


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

    def __init__(self, store: Store, run: dict):
        self.store_path = store.path
        self.doc: dict[str, Any] = {"format": FORMAT, "store": str(store.path), "run": run,
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
        place can take it."""
        text = dumps(self.doc)
        places = [self.file] if self.file else [
            self.store_path.parent, Path(tempfile.gettempdir()), Path.home()]
        errors = []
        stamp = time.strftime("%Y%m%d-%H%M%S")
        for where in places:
            if where is None:
                continue
            f = where if where.suffix == ".json" else (
                where / f"{self.store_path.name}.run{self.doc['run'].get('id')}-{stamp}.pending.json")
            tmp = f.with_name(f.name + ".tmp")
            try:
                tmp.write_text(text)
                os.replace(tmp, f)
                self.file = f
                return f
            except OSError as e:
                errors.append(f"{f.parent}: {e.strerror or e}")
                try:
                    tmp.unlink()
                except OSError:
                    pass
        raise OSError("; ".join(errors))


def import_file(store: Store, path: Path) -> tuple[int, int]:
    """Put a pending file's phases, metrics and final statuses into `store`: into its own
    run when that run is there (the same store), else into a new run. Returns (run id,
    phases imported)."""
    try:
        doc = json.loads(Path(path).read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise StoreError(f"cannot read {path}: {e}") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise StoreError(f"{path} is not an ssdlab pending-results file (format {FORMAT})")
    run = doc["run"]
    run_id = run.get("id")
    same = False
    if run_id:
        r = store.db.execute("SELECT test, created FROM runs WHERE id=?", (run_id,)).fetchone()
        same = r is not None and r["test"] == run["test"] and r["created"] == run["created"]
    if not same:
        run_id = store.create_run(run["test"], run.get("args") or {}, run.get("testbed"),
                                  run.get("engine_version"))
    n = 0
    for d in sorted(doc["drives"].values(), key=lambda x: x["position"]):
        rd = d.get("run_drive_id") if same else None
        if rd is None:
            row = store.db.execute("SELECT id FROM run_drives WHERE run_id=? AND position=?",
                                   (run_id, d["position"])).fetchone()
            rd = row["id"] if row else store.add_drive(run_id, d["position"], d.get("spec") or "?",
                                                       d.get("identity") or {})
        have = {r["seq"] for r in store.db.execute("SELECT seq FROM phases WHERE run_drive_id=?", (rd,))}
        for p in d["phases"]:
            if p["seq"] not in have:
                store.add_phase(rd, p["seq"], phase_result(p), p["status"])
                n += 1
        if d.get("metrics") is not None:
            store.set_metrics(rd, d["metrics"])
        if d.get("status"):
            store.finish_drive(rd, d["status"])
    if run.get("status"):
        store.finish_run(run_id, run["status"], run.get("error"))
    return run_id, n
