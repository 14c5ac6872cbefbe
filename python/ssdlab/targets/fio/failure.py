"""When fio on a real drive did not do what it was asked: it failed or left no usable
report, or its report falls short of the phase."""

from __future__ import annotations

from ...phase import ResolvedPhase


class FioFailed(RuntimeError):
    """fio failed or left no usable report (`no_report`)."""

    def __init__(self, msg: str, no_report: bool = False):
        super().__init__(msg)
        self.no_report = no_report


def shortfall(spec: ResolvedPhase, totals: dict) -> str:
    """Why a phase fio reported as done did not do what it was asked ("" when it did): a
    report from before the end (fio printed its final one torn or not at all) must not be
    stored as a complete phase."""
    stop_b, stop_s = spec.get("stop_bytes"), spec.get("stop_seconds")
    moved = float(totals.get("read_bytes") or 0) + float(totals.get("write_bytes") or 0)
    dur = float(totals.get("duration_s") or 0)
    if stop_b and not stop_s and moved < int(stop_b):
        return f"moved {moved:.0f} of its {int(stop_b)} bytes"
    if stop_s and not stop_b and dur < 0.9 * float(stop_s) - 0.5:
        return f"ran {dur:.1f} of its {float(stop_s):g} s"
    return ""
