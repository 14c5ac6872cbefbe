"""How a guard says no: one line naming why and what to do; the CLI exits with status 2."""

from __future__ import annotations


class UnsafeTarget(ValueError):
    """A refusal: the message says why and how to proceed. The CLI exits with status 2."""

    exit_code = 2


class DeviceLocked(UnsafeTarget):
    pass
