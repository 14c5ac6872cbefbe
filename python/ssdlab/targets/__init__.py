"""Targets run phases: the simulator (`sim:PROFILE` or a profile file) or a real drive
(`/dev/...`, `file:PATH:SIZE`, `HOST:/dev/...` on another host) through fio. `open_target` is the one place a drive spec
becomes a Target, from the DriveSpec the string was parsed into once (spec.py)."""

from __future__ import annotations

from .base import Identity, Interrupted, PhaseResult, Target
from .spec import DriveSpec, parse_drive

__all__ = ["DriveSpec", "Identity", "Interrupted", "PhaseResult", "Target", "open_target", "parse_drive"]


def open_target(spec: DriveSpec | str, *, overrides: list[str] | None = None, seed: int = 42,
                destroy_data: str | None = None, plan: bool = False) -> Target:
    """Build the target a drive spec names (a string is parsed first). Raises ValueError
    with a one-line message."""
    if isinstance(spec, str):
        spec = parse_drive(spec)
    if spec.simulated:
        from .sim import SimTarget

        return SimTarget(spec.profile_text(), overrides=overrides, seed=seed)
    if overrides:
        raise ValueError("--set applies to simulated drives only; remove it for a real drive")
    if spec.remote:  # a drive on another host: ssdlab's agent there, over ssh
        from .remote.target import RemoteTarget

        return RemoteTarget(spec, destroy_data=destroy_data, plan=plan)
    from .fio.target import FioTarget  # a device, a file, or an NBD export (fio/transport.py)

    return FioTarget(spec, destroy_data=destroy_data, plan=plan)
