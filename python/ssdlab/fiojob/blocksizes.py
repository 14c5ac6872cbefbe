"""fio's block-size options per direction (read, write, trim): `bs` (one size, or one per
direction), `bsrange` (MIN-MAX, drawn by the simulator as fio draws it), `bssplit`
(SIZE/WEIGHT:... with blank weights sharing what is left), and the extended-LBA formats
whose blocks carry metadata (4096 + 8, 16 or 64 bytes)."""

from __future__ import annotations

from . import FioJobError
from . import limits as L
from . import options as O


def bs_list(value: str, key: str, where: str, base: int) -> list:
    """bs=4k or bs=4k,8k,16k (read, write, trim): per direction [[bytes, 100]]. As fio reads
    it: a blank value is the default (4096), and the last value applies to the directions
    after it unless a comma ends it (bs=,8k: 4096 for reads, 8k for writes and trims;
    bs=8k,: 8k for reads, 4096 for the rest). A size of 0 is refused, as fio refuses it."""
    parts = [p.strip() for p in value.split(",")][:3]
    sizes = []
    for p in parts:
        s = O.size(p, key, where, base) if p else 4096
        if s <= 0:
            raise FioJobError(f"{where}: {key}={value[:40]}: a block size of 0 (fio refuses it: "
                              f"\"min value out of range\"); give a size such as {key}=4k")
        sizes.append(s)
    return [[[sizes[min(i, len(sizes) - 1)], 100.0]] for i in range(3)]


def bsrange(value: str, where: str, base: int) -> list[tuple[int, int]]:
    """bsrange=MIN-MAX[,MIN-MAX,...] per direction, checked as sizes before anything is
    made of them (the simulator draws within the range, as fio does)."""
    out = []
    parts = [p.strip() for p in value.split(",")]
    for i in range(3):
        p = parts[min(i, len(parts) - 1)]
        lo, sep, hi = p.partition("-")
        if not sep:
            raise FioJobError(f"{where}: bsrange={value[:40]}: write MIN-MAX, e.g. 4k-64k")
        a, b = O.size(lo, "bsrange", where, base), O.size(hi, "bsrange", where, base)
        if a <= 0 or b < a:
            raise FioJobError(f"{where}: bsrange={value[:40]}: MIN must be > 0 and at most MAX")
        if a % 512 or b > 64 << 20:
            raise FioJobError(f"{where}: bsrange={value[:40]}: block sizes are multiples of 512 bytes "
                              "up to 64 MiB")
        out.append((a, b))
    return out


def bssplit(value: str, where: str, base: int) -> list:
    out = []
    dirs = [d for d in value.split(",")]
    for i in range(3):
        d = dirs[min(i, len(dirs) - 1)].strip()
        items, blank = [], []
        if d.count(":") >= L.MAX_BSSPLIT:
            raise FioJobError(f"{where}: bssplit: over {L.MAX_BSSPLIT} block sizes in a direction "
                              "(fio's limit too)")
        for it in filter(None, d.split(":")):
            s, _, w = it.partition("/")
            sz = O.size(s, "bssplit", where, base)
            if sz <= 0:
                raise FioJobError(f"{where}: bssplit={value}: a block size must be > 0")
            if w.strip():
                items.append([sz, float(w)])
            else:
                blank.append(sz)
        left = 100.0 - sum(w for _, w in items)
        if left < -1e-9:
            raise FioJobError(f"{where}: bssplit={value}: the shares add up to over 100 %")
        items += [[s, left / len(blank)] for s in blank]
        if not items:
            raise FioJobError(f"{where}: bssplit={value}: no block sizes")
        out.append(items)
    return out


def extended_lba(bs: list, where: str) -> int:
    """Metadata bytes per block if the block sizes are of an extended-LBA format (4096 data
    + 8, 16 or 64 bytes of metadata: fio's bs then counts both), else 0."""
    mds = {md for d in bs for b, _ in d if b % 512 for md in (8, 16, 64) if b % (4096 + md) == 0}
    if not mds:
        small = next(((b, md) for d in bs for b, _ in d if b % 512 for md in (8, 16, 64)
                      if b % (512 + md) == 0), None)
        if small:
            raise FioJobError(f"{where}: block size {small[0]}: blocks of a 512+{small[1]}-byte "
                              "extended-LBA format; a simulated drive has 4096-byte blocks "
                              "(use a 4096 + 8, 16 or 64 format, e.g. bs=4160)")
        return 0
    md = min(mds)
    if any(b % (4096 + md) for d in bs for b, _ in d):
        odd = sorted({b for d in bs for b, _ in d if b % (4096 + md)})
        raise FioJobError(f"{where}: block size {odd[0]}: an extended-LBA format needs every block "
                          f"size a multiple of {4096 + md} (4096 data + {md} metadata bytes)")
    return md
