"""What travels between ssdlab and its agent on another host (remote/target.py, remote/agent.py): one
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
from typing import Any, Optional, TypeVar, Union

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ...errors import one_line
from ...phase import Identity, Phase, PhaseResult

PROTOCOL = 1
MAX_LINE = 32 << 20  # one answer (a day-long phase's result is a few MiB) never comes near this
RESULT_ATTRS = ("purge_method", "plan")  # PhaseResult extras a target may set
ANSWERS = ("ok", "error", "sample", "result", "interrupted")
ERROR_TYPES = ("locked", "unsafe", "value", "fio", "runtime")


class Malformed(ValueError):
    """An answer outside the protocol (another version, or not ssdlab at all): one line
    naming the field, never the exception of whatever tripped over it."""


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
    try:
        doc = json.loads(line)
    except RecursionError:
        raise ValueError("JSON nested too deeply") from None
    if not isinstance(doc, dict):
        raise ValueError("not a JSON object")
    return doc


class Lines:
    """Lines read from a pipe's descriptor, with a timeout (None: wait; a signal's
    exception, such as Ctrl-C's KeyboardInterrupt, comes through)."""

    def __init__(self, fd: int):
        self.fd = fd
        self.buf = bytearray()
        self.scanned = 0  # bytes of buf known to hold no newline (each byte looked at once)
        self.eof = False

    def readline(self, timeout: float | None = None) -> bytes | None:
        """The next line (without its newline); None at end of stream; TimeoutError;
        ValueError as soon as a line is longer than MAX_LINE."""
        while (end := self.buf.find(b"\n", self.scanned)) < 0:
            self.scanned = len(self.buf)
            if self.scanned > MAX_LINE:
                raise ValueError(f"a line longer than {MAX_LINE} bytes")
            if self.eof:
                return None
            ready, _, _ = select.select([self.fd], [], [], timeout)
            if not ready:
                raise TimeoutError
            chunk = os.read(self.fd, 1 << 20)
            if not chunk:
                self.eof = True
                self.buf.clear()  # a last line without its newline: cut short, not an answer
                self.scanned = 0
                return None
            self.buf += chunk
        if end > MAX_LINE:
            raise ValueError(f"a line longer than {MAX_LINE} bytes")
        line = bytes(self.buf[:end])
        del self.buf[:end + 1]
        self.scanned = 0
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


class _Doc(BaseModel):
    model_config = ConfigDict(extra="ignore", strict=True)


_DocT = TypeVar("_DocT", bound=_Doc)


Number = Union[float, int, None]  # None: JSON null; NaN and infinities arrive as floats


class _Nd(_Doc):
    nd: list[Number]


class _Result(_Doc):
    phase: dict[str, Any]
    series: dict[str, _Nd] = {}
    segments: dict[str, _Nd] = {}
    latency: dict[str, Union[_Nd, Number, dict[str, Any], list[Any], str]] = {}
    totals: dict[str, Number] = {}
    attrs: dict[str, Any] = {}


class _Identity(_Doc):
    kind: str
    model: str
    capacity: int = Field(ge=0)
    firmware: str = ""
    serial: str = ""
    extra: dict[str, Any] = {}


class Hello(_Doc):
    proto: int
    version: str = ""
    kernel: str = ""
    machine_id: str = ""
    hostname: str = ""
    uid: Optional[int] = None
    pid: Optional[int] = None
    drive: str = ""


class Opened(_Doc):
    identity: dict[str, Any]
    engine_version: str = ""


def _checked(model: type[_DocT], doc: Any, what: str) -> _DocT:
    try:
        return model.model_validate(doc)
    except ValidationError as e:
        raise Malformed(f"{what}: {one_line(e)}") from None


def answer_of(doc: dict) -> tuple[str, Any]:
    """(kind, value) of one answer: exactly one of ok, error, sample, result, interrupted;
    an error with its text and type, a sample of numbers."""
    kinds = [k for k in ANSWERS if k in doc]
    if len(kinds) != 1:
        raise Malformed(f"an answer holds one of {', '.join(ANSWERS)}, not {sorted(doc)[:5]}")
    kind, value = kinds[0], doc[kinds[0]]
    if kind == "error" and not (isinstance(value, str) and doc.get("type") in ERROR_TYPES):
        raise Malformed(f"an error answer holds its text and a type of {', '.join(ERROR_TYPES)}")
    if kind == "sample":
        value = sample_of(value)
    return kind, value


def sample_of(doc: Any) -> dict[str, float]:
    if not isinstance(doc, dict) or not all(isinstance(v, (int, float)) and not isinstance(v, bool)
                                            for v in doc.values()):
        raise Malformed("a sample is an object of numbers")
    return {str(k): float(v) for k, v in doc.items()}


def result_of(doc: Any) -> PhaseResult:
    r = _checked(_Result, doc, "result")
    try:
        phase = phase_of(r.phase)
    except ValidationError as e:
        raise Malformed(f"result.phase: {one_line(e)}") from None

    def arr(x: _Nd) -> np.ndarray:
        return np.asarray([np.nan if v is None else v for v in x.nd], dtype=float)

    latency = {k: arr(v) if isinstance(v, _Nd) else _arrays(v) for k, v in r.latency.items()}
    res = PhaseResult(phase=phase, series={k: arr(v) for k, v in r.series.items()},
                      segments={k: arr(v) for k, v in r.segments.items()}, latency=latency,
                      totals={k: float("nan") if v is None else float(v) for k, v in r.totals.items()})
    for k, v in r.attrs.items():
        if k in RESULT_ATTRS:
            setattr(res, k, v)
    return res


def identity_doc(i: Identity) -> dict:
    return _plain(asdict(i))


def identity_of(doc: Any) -> Identity:
    i = _checked(_Identity, doc, "identity")
    return Identity(kind=i.kind, model=i.model, capacity=i.capacity, firmware=i.firmware, serial=i.serial,
                    extra=dict(i.extra))


def hello_of(doc: Any) -> Hello:
    return _checked(Hello, doc, "hello")


def opened_of(doc: Any) -> tuple[Identity, str]:
    o = _checked(Opened, doc, "open")
    return identity_of(o.identity), o.engine_version


__all__ = [
    "PROTOCOL",
    "Hello",
    "Lines",
    "Malformed",
    "answer_of",
    "hello_of",
    "opened_of",
    "sample_of",
    "dumps",
    "identity_doc",
    "identity_of",
    "loads",
    "phase_doc",
    "phase_of",
    "result_doc",
    "result_of",
]
