"""Units at the bottom of the package: sizes as fio and people write them."""

from __future__ import annotations

import re

_UNITS = {"": 1, "B": 1, "K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40, "P": 2**50,
          "KIB": 2**10, "MIB": 2**20, "GIB": 2**30, "TIB": 2**40,
          "KB": 10**3, "MB": 10**6, "GB": 10**9, "TB": 10**12}


def parse_size(s: str, minimum: int = 0) -> int:
    """'8G' / '8GiB' (binary, as fio reads them), '8GB' (decimal), or bytes."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([A-Za-z]*)\s*", s)
    if not m or m.group(2).upper() not in _UNITS:
        raise ValueError(f"size '{s}': use bytes or a number with K, M, G, T (binary) or KB, MB, GB, TB")
    n = int(float(m.group(1)) * _UNITS[m.group(2).upper()])
    if n < minimum:
        raise ValueError(f"size '{s}': too small (at least {minimum // 1024} KiB)")
    return n


_DURATION = re.compile(r"\s*([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\s*(s|ms|us|ns)?\s*")
_UNIT_S = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "ns": 1e-9, None: 1.0}


def parse_duration(text: str) -> float:
    """'25ms', '0.025s', '25000us', '0.025' (seconds) -> seconds."""
    m = _DURATION.fullmatch(text)
    if m is None:
        raise ValueError("give a duration such as 25ms, 0.5s or 100us")
    return float(m.group(1)) * _UNIT_S[m.group(2)]
