"""Generated application-like workloads, named for what they imitate: I/O streams shaped
by the published statistics of a benchmark trace, deterministic by seed. They are NOT the
original traces (those are not public); each module says which statistics it matches.

Used as a trace: `--trace builtin:NAME[@SCALE]` (SCALE: the fraction of the published I/O
counts and volumes, default each workload's DEFAULT_SCALE); offsets span the drive.
"""

from __future__ import annotations

from typing import Any

from ..stream import IoStream, TraceError
from . import destroyer, pcmark8

# name -> a module or object with DESCRIPTION, DEFAULT_SCALE, ios(scale), generate(...)
WORKLOADS: dict[str, Any] = {"destroyer-like": destroyer,
                             **{f"pcmark8-{k}-like": t for k, t in pcmark8.TRACES.items()}}
PREFIX = "builtin:"
MAX_IOS = 60_000_000  # a bound on memory: ~25 bytes per I/O


def is_builtin(trace: str) -> bool:
    return trace.startswith(PREFIX)


def parse_name(trace: str) -> tuple[Any, float]:
    name, _, scale = trace[len(PREFIX):].partition("@")
    if name not in WORKLOADS:
        raise TraceError(f"--trace {trace}: no built-in workload '{name}': choose "
                         + ", ".join(PREFIX + n for n in WORKLOADS))
    mod = WORKLOADS[name]
    try:
        s = float(scale) if scale else mod.DEFAULT_SCALE
    except ValueError:
        raise TraceError(f"--trace {trace}: scale '{scale}' is not a number (e.g. @0.01)") from None
    if not 0 < s <= 10 or mod.ios(s) > MAX_IOS:
        raise TraceError(f"--trace {trace}: scale {s:g}: must be above 0 and give at most "
                         f"{MAX_IOS:,} I/Os ({name} has {mod.ios(1.0):,} at scale 1)")
    if mod.ios(s) < 1:
        raise TraceError(f"--trace {trace}: scale {s:g} gives no I/O")
    return mod, s


def describe(trace: str) -> str:
    mod, s = parse_name(trace)
    return f"{trace}: {mod.DESCRIPTION} (scale {s:g}: {mod.ios(s):,} I/Os)"


def generate(trace: str, span_bytes: int, seed: int = 42) -> IoStream:
    mod, s = parse_name(trace)
    out = mod.generate(s, span_bytes, seed)
    out.source = trace
    return out
