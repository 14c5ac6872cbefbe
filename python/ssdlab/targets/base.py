"""The Target protocol: what the methodology needs from any drive, simulated or real."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Protocol

import numpy as np

from ..phase import Phase

Sample = dict[str, float]
OnSample = Callable[[Sample], None]


@dataclass
class Identity:
    kind: str  # "sim" | "block" | "file"
    model: str
    capacity: int  # user bytes
    firmware: str = ""
    serial: str = ""
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class PhaseResult:
    """What one phase produced. `series` are per-interval columns (t_s first), `segments`
    per-segment-of-bytes-written columns (gb, mbps, t_s), `latency` holds percentiles
    (p50_us ... p99_99_us, mean_us, max_us) and the histogram (edges_us, counts),
    `totals` scalar figures; simulated drives add internal counters to both series and totals."""

    phase: Phase
    series: dict[str, np.ndarray]
    segments: dict[str, np.ndarray]
    latency: dict[str, Any]
    totals: dict[str, float]


class Interrupted(Exception):
    """Raised by a target when a run is stopped; carries what was recorded so far."""

    def __init__(self, partial: PhaseResult | None):
        super().__init__("interrupted")
        self.partial = partial


class Target(Protocol):
    name: str

    def identify(self) -> Identity: ...

    def run(self, phase: Phase, on_sample: OnSample | None = None) -> PhaseResult: ...
