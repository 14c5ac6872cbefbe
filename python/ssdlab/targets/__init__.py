"""Targets run phases: the simulator (`sim:PROFILE` or a profile file) or a real drive
(`/dev/...`, `file:PATH:SIZE`, `HOST:/dev/...` on another host) through fio. `open_target` is the one place a drive spec
becomes a Target."""

from __future__ import annotations

import re
from pathlib import Path

from .base import Identity, Interrupted, PhaseResult, Target

__all__ = ["Identity", "Interrupted", "PhaseResult", "Target", "open_target", "is_real", "is_remote"]


def is_real(spec: str) -> bool:
    return (spec.startswith("/dev/") or spec.startswith("file:") or spec.startswith("nbd:")
            or is_remote(spec))


def is_remote(spec: str) -> bool:
    """HOST:/dev/X, user@HOST:/dev/X, HOST:PORT:/dev/X, [IPv6]:/dev/X: a drive on another
    host, reached over ssh (remote.py)."""
    from .remote import looks_remote

    return looks_remote(spec)


def open_target(spec: str, *, overrides: list[str] | None = None, seed: int = 42,
                destroy_data: str | None = None, plan: bool = False) -> Target:
    """Build the target a `--drive` spec names. Raises ValueError with a one-line message."""
    if is_real(spec):
        if overrides:
            raise ValueError("--set applies to simulated drives only; remove it for a real drive")
        if is_remote(spec):  # a drive on another host: ssdlab's agent there, over ssh
            from .remote import RemoteTarget

            return RemoteTarget(spec, destroy_data=destroy_data, plan=plan)
        from .fio import FioTarget  # a device, a file, or an NBD export (fio_transport.py)

        return FioTarget(spec, destroy_data=destroy_data, plan=plan)
    if spec.startswith("sim:") and spec.endswith(".toml"):  # sim:./twin.toml: a profile file
        spec = spec[4:]
    if spec.startswith("sim:"):
        from ..profiles import builtin_ids, load_text

        if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*", spec[4:]):  # a name, not a path
            raise ValueError(f"unknown profile '{spec[4:]}': built-in profiles are "
                             f"{', '.join(builtin_ids())} (or give a path to a .toml profile file)")
        text = load_text(spec[4:])  # unknown profile: a clear error even before the build
        from .sim import SimTarget

        return SimTarget(text, overrides=overrides, seed=seed)
    p = Path(spec)
    if p.suffix == ".toml":
        if not p.is_file():
            raise ValueError(f"profile file '{spec}' not found")
        from .sim import SimTarget

        try:
            text = p.read_text(encoding="utf-8")
        except UnicodeDecodeError as e:
            raise ValueError(f"profile file '{spec}' is not UTF-8 text (byte {e.object[e.start]:#04x} "
                             f"at offset {e.start}); save it as UTF-8") from None
        except OSError as e:
            raise ValueError(f"profile file '{spec}': {e.strerror or e}") from None
        return SimTarget(text, overrides=overrides, seed=seed)
    raise ValueError(
        f"unknown drive '{spec}': use sim:PROFILE (see `ssdlab drives`), a profile .toml file, "
        "a block device /dev/..., file:PATH:SIZE, nbd:SOCKET (a served drive), or HOST:/dev/... "
        "(a drive on another host, reached over ssh)"
    )
