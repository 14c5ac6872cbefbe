"""The Target protocol: what the methodology needs from any drive, simulated or real, and
what each kind of drive declares it can do. `open_target` (targets/__init__.py) is the one
place a drive spec becomes a Target; the runner, the review and the CLI speak only this."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Protocol, Sequence

from ..phase import Batch, Identity, Interrupted, OnSample, Phase, PhaseResult, Sample

__all__ = ["BaseTarget", "Capabilities", "Identity", "Interrupted", "OnSample", "PhaseResult",
           "Sample", "StepEnd", "StepStart", "Target"]

StepStart = Callable[[int, Phase], OnSample | None]  # (index, phase) as it starts -> its sample listener
StepEnd = Callable[[int, PhaseResult], None]  # (index, result) as it completes


@dataclass(frozen=True)
class Capabilities:
    """What a kind of drive can do, so callers ask the target rather than its spec."""

    simulated: bool  # virtual time; rebuilt from its profile for each test, so tests of a
    #                  review may run at once on worker processes
    replay: bool = True  # runs trace replays (phase kind "replay")
    counters: bool = False  # internal counters (NAND writes, WAF, SLC state) in its results


class Target(Protocol):
    name: str
    capabilities: Capabilities

    @property
    def engine_version(self) -> str:
        """What ran the I/O (the simulator's or fio's version), stored with every run."""
        ...

    def identify(self) -> Identity:
        """Model, capacity, firmware, kind: what the drive is."""
        ...

    def preflight(self, phases: Sequence[Phase]) -> None:
        """Refuse, before anything is stored, a run this drive must not take (a real drive
        without consent for its writes: safety.UnsafeTarget, a ValueError)."""
        ...

    def plan(self, phases: Sequence[Phase | Batch]) -> str:
        """What running the phases (a Batch: as run_phases would) would do beyond the
        phases themselves (fio jobs, commands, the safety verdict); "" when there is
        nothing more to say."""
        ...

    def run(self, phase: Phase, on_sample: OnSample | None = None) -> PhaseResult:
        """Run one phase, streaming samples; Interrupted carries a partial result."""
        ...

    def run_phases(self, phases: Sequence[Phase], on_start: StepStart | None = None,
                   on_end: StepEnd | None = None) -> list[PhaseResult]:
        """Run phases that need no result from each other, in order and back to back (a
        real drive may run them as one fio process). `on_start` sees each phase start,
        `on_end` each one complete, as it happens; Interrupted carries the partial result
        of the phase that was running (the last one `on_start` saw without `on_end`)."""
        ...

    def close(self) -> None:
        """Let go of what the drive holds (device claim, lock, connection); idempotent."""
        ...


class BaseTarget:
    """Defaults for a target with nothing to check, plan or let go of; a context manager
    that closes the target, as its collection does."""

    name: str

    def identify(self) -> Identity:
        raise NotImplementedError

    @property
    def engine_version(self) -> str:
        return self.identify().firmware

    def preflight(self, phases: Sequence[Phase]) -> None:
        return None

    def run(self, phase: Phase, on_sample: OnSample | None = None) -> PhaseResult:
        raise NotImplementedError

    def run_phases(self, phases: Sequence[Phase], on_start: StepStart | None = None,
                   on_end: StepEnd | None = None) -> list[PhaseResult]:
        """One phase after the other through `run`."""
        out = []
        for i, p in enumerate(phases):
            res = self.run(p, on_start(i, p) if on_start else None)
            if on_end:
                on_end(i, res)
            out.append(res)
        return out

    def plan(self, phases: Sequence[Phase | Batch]) -> str:
        return ""

    def close(self) -> None:
        return None

    def __enter__(self) -> BaseTarget:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass
