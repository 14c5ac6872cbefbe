"""zonemode=zbd when a job file is compiled: fio's zone alignment of a job's region and its
0-to-1 options (the zone rules themselves run in the simulator, crates/ssdsim/src/fiojob/zbd.rs)."""

from __future__ import annotations

from . import FioJobError


def fraction(o: dict, key: str) -> float:
    v, where = o.get(key, ("0", ""))
    try:
        f = float(v.strip())
    except ValueError:
        raise FioJobError(f"{where}: {key}={v}: not a number") from None
    if not 0 <= f <= 1:
        raise FioJobError(f"{where}: {key}={v}: must be 0 to 1")
    return f


def region(off: int, size: int, zone: int, read_only: bool, where: str) -> tuple[int, int]:
    """fio's zone alignment of a zbd job's region: a job that writes starts at the first
    whole zone; every job's region ends at a zone boundary."""
    end = off + size
    if not read_only and off % zone:
        off = off // zone * zone + zone
    end = end // zone * zone
    if end <= off:
        raise FioJobError(f"{where}: zonemode=zbd: the job's region holds no whole zone of "
                          f"{zone} bytes (offset and size are aligned to zones): give at least one zone")
    return off, end - off
