"""The Target protocol: what the methodology needs from any drive, simulated or real."""

from __future__ import annotations

from typing import Protocol

from ..phase import Identity, Interrupted, OnSample, Phase, PhaseResult, Sample

__all__ = ["Identity", "Interrupted", "OnSample", "PhaseResult", "Sample", "Target"]


class Target(Protocol):
    name: str

    def identify(self) -> Identity: ...

    def run(self, phase: Phase, on_sample: OnSample | None = None) -> PhaseResult: ...
