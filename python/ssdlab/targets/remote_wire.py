"""What travels between ssdlab and its agent on another host (remote.py, agent.py): one
JSON document per line, both ways.

Requests (to the agent) carry an `op`; answers carry `ok` (a value), `error` (a message
and its `type`), and during a phase `sample` (a live row) before the `result` or
`interrupted` (the partial result, or null) that ends it. Phases, results and identities
go as plain JSON: numpy arrays as `{"nd": [...]}`, NaN and infinities as JSON's
`NaN`/`Infinity` (both ends are Python)."""

from __future__ import annotations

import json
import os
import select
from dataclasses import asdict
from typing import Any

import numpy as np

from ..phase import Identity, Phase, PhaseResult

PROTOCOL = 1
MAX_LINE = 64 << 20  # one answer (a phase's result) never comes near this
RESULT_ATTRS = ("purge_method", "plan")  # PhaseResult extras a target may set


def _plain(x: Any) -> Any:
    if isinstance(x, np.ndarray):
        return {"nd": x.tolist()}
    if isinstance(x, np.generic):
        return x.item()
    if isinstance(x, dict):
        return {str(k): _plain(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_plain(v) for v in x]
    return x


def _arrays(x: Any) -> Any:
    if isinstance(x, dict):
        if set(x) == {"nd"} and isinstance(x["nd"], list):
            return np.asarray(x["nd"], dtype=float)
        return {k: _arrays(v) for k, v in x.items()}
    if isinstance(x, list):
        return [_arrays(v) for v in x]
    return x


def dumps(doc: dict) -> bytes:
    return (json.dumps(_plain(doc), separators=(",", ":"), default=str) + "\n").encode()


def loads(line: bytes) -> dict:
    doc = json.loads(line)
    if not isinstance(doc, dict):
        raise ValueError("not a JSON object")
    return doc


class Lines:
    """Lines read from a pipe's descriptor, with a timeout (None: wait; a signal's
    exception, such as Ctrl-C's KeyboardInterrupt, comes through)."""

    def __init__(self, fd: int):
        self.fd = fd
        self.buf = b""
        self.eof = False

    def readline(self, timeout: float | None = None) -> bytes | None:
        """The next line (without its newline); None at end of stream; TimeoutError."""
        while b"\n" not in self.buf:
            if self.eof:
                return None
            ready, _, _ = select.select([self.fd], [], [], timeout)
            if not ready:
                raise TimeoutError
            chunk = os.read(self.fd, 1 << 16)
            if not chunk:
                self.eof = True
                if self.buf:  # a last line without its newline: cut short, not an answer
                    self.buf = b""
                return None
            self.buf += chunk
            if len(self.buf) > MAX_LINE and b"\n" not in self.buf:
                raise ValueError(f"a line longer than {MAX_LINE} bytes")
        line, _, self.buf = self.buf.partition(b"\n")
        return line


def phase_doc(p: Phase) -> dict:
    return p.model_dump(mode="json")


def phase_of(doc: Any) -> Phase:
    return Phase.model_validate(doc)


def result_doc(r: PhaseResult) -> dict:
    doc = {"phase": phase_doc(r.phase), "series": r.series, "segments": r.segments,
           "latency": r.latency, "totals": r.totals}
    doc["attrs"] = {a: getattr(r, a) for a in RESULT_ATTRS if hasattr(r, a)}
    return _plain(doc)


def result_of(doc: dict) -> PhaseResult:
    r = PhaseResult(phase=phase_of(doc["phase"]), series=_arrays(doc.get("series") or {}),
                    segments=_arrays(doc.get("segments") or {}),
                    latency=_arrays(doc.get("latency") or {}),
                    totals={k: float(v) for k, v in (doc.get("totals") or {}).items()})
    for k, v in (doc.get("attrs") or {}).items():
        if k in RESULT_ATTRS:
            setattr(r, k, v)
    return r


def identity_doc(i: Identity) -> dict:
    return _plain(asdict(i))


def identity_of(doc: dict) -> Identity:
    return Identity(kind=str(doc["kind"]), model=str(doc["model"]), capacity=int(doc["capacity"]),
                    firmware=str(doc.get("firmware", "")), serial=str(doc.get("serial", "")),
                    extra=dict(doc.get("extra") or {}))


__all__ = [
    "PROTOCOL",
    "Lines",
    "dumps",
    "identity_doc",
    "identity_of",
    "loads",
    "phase_doc",
    "phase_of",
    "result_doc",
    "result_of",
]
