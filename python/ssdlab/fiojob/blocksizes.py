"""fio's block-size options per direction (read, write, trim): `bs` (one size, or one per
direction), `bsrange` (MIN-MAX, drawn by the simulator as fio draws it), `bssplit`
(SIZE/PCT:... with blank shares splitting what is left, drawn as fio draws them), a
blank direction (`bssplit=,4k/100`) keeping the job's bs, and the extended-LBA formats
whose blocks carry metadata (4096 + 8, 16 or 64 bytes)."""

from __future__ import annotations

import re

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


def _range(p: str, value: str, where: str, base: int) -> tuple[int, int]:
    """One direction's MIN-MAX (or MIN:MAX), swapped when MIN is larger, as fio takes it."""
    lo, sep, hi = p.partition("-")
    if not sep:
        lo, sep, hi = p.partition(":")
    if not sep:
        raise FioJobError(f"{where}: bsrange={value[:40]}: write MIN-MAX, e.g. 4k-64k")
    a, b = sorted((O.size(lo, "bsrange", where, base), O.size(hi, "bsrange", where, base)))
    if a <= 0:
        raise FioJobError(f"{where}: bsrange={value[:40]}: a block size of 0: give sizes such as 4k-64k")
    if a % 512 or b > 64 << 20:
        raise FioJobError(f"{where}: bsrange={value[:40]}: block sizes are multiples of 512 bytes "
                          "up to 64 MiB")
    return a, b


def _per_direction(value: str) -> list[str]:
    """A per-direction value as fio splits it (read,write,trim): the last one given applies
    to the directions after it; a blank one (`,4k-8k`, `4k-8k,`) leaves the direction at
    its default."""
    parts = [p.strip() for p in value.split(",")]
    return [parts[min(i, len(parts) - 1)] for i in range(3)]


def bsrange(value: str, where: str, base: int, default: list[int]) -> list[tuple[int, int]]:
    """bsrange=MIN-MAX[,MIN-MAX,...] per direction, checked as sizes before anything is
    made of them (the simulator draws within the range, as fio does); a blank direction
    has the job's bs (`default`)."""
    return [_range(p, value, where, base) if p else (default[i], default[i])
            for i, p in enumerate(_per_direction(value))]


def _split_entries(d: str, value: str, where: str, base: int) -> list[list]:
    """One direction's SIZE/PCT:SIZE:... as fio reads it: parsing stops at an empty entry,
    or after the 64th (fio's limit: the rest is ignored); a share is a whole number (fio's
    atoi: 50.5 is 50) at most 100, and a share of 0 is as blank as a missing one (None)."""
    out = []
    for it in d.split(":", L.MAX_BSSPLIT)[:L.MAX_BSSPLIT]:
        if not it.strip():
            break
        s, _, w = it.partition("/")
        sz = O.size(s, "bssplit", where, base)
        if sz <= 0:
            raise FioJobError(f"{where}: bssplit={value[:60]}: a block size must be > 0")
        pct = None
        if w.strip():
            m = re.match(r"\s*(\d{1,9})", w)
            if not m:
                raise FioJobError(f"{where}: bssplit={value[:60]}: '{w.strip()[:20]}' is not a share: "
                                  "write SIZE/PCT, e.g. 4k/60:64k/40")
            pct = min(int(m.group(1)), 100) or None
        out.append([sz, pct])
    return out


def fio_shares(entries: list[list], value: str, where: str) -> tuple[list[list], str]:
    """The share of I/Os fio gives each [size, pct or None] of a direction, and a note when
    the shares as written do not add up to 100 %. fio (options.c bssplit_ddir, io_u.c
    get_next_buflen): blanks split what is left in whole %; two blanks or more over 100 %
    are refused; the entries sorted by share (stably), each takes its share of a draw up to
    100 % in all, the last one what is left; a single blank after shares over 100 % wraps
    (unsigned) and sorts first: it takes every I/O."""
    given = sum(p for _, p in entries if p is not None)
    blanks = sum(p is None for _, p in entries)
    if given > 100 and blanks > 1:
        raise FioJobError(f"{where}: bssplit={value[:60]}: the shares add up to {given} %, over 100, "
                          "with blank shares to split what is left (fio refuses it: \"bssplit "
                          "percentages add to more than 100%\"): give shares that add up to 100")
    if len(entries) == 1:
        return [[entries[0][0], 100.0]], ""
    wrap = given > 100 and blanks == 1
    pcts = [p if p is not None else (-1 if wrap else (100 - given) // blanks) for _, p in entries]
    order = sorted(range(len(entries)), key=lambda i: pcts[i])
    out, cum, last = [], 0, None
    for i in order:
        p = pcts[i]
        if p == 0:
            out.append([entries[i][0], 0.0])
            continue
        share = 100 if p < 0 else max(0, min(cum + p, 100) - min(cum, 100))
        cum = 100 if p < 0 else cum + p
        out.append([entries[i][0], float(share)])
        last = out[-1]
    if last is not None and cum < 100:
        last[1] += 100 - cum
    note = ""
    if wrap or given > 100 or (not blanks and given < 100):
        shares = ", ".join(f"{_fmt(b)} {w:g} %" for b, w in out if w)
        note = (f"bssplit={value.strip()[:60]}: the shares add up to {given} %"
                + (" with a blank one" if blanks else "") + f"; fio draws {shares}; so does ssdlab")
    return out, note


def _fmt(b: int) -> str:
    for unit, n in (("m", 1 << 20), ("k", 1 << 10)):
        if b % n == 0:
            return f"{b // n}{unit}"
    return str(b)


def bssplit(value: str, where: str, base: int, default: list[int]) -> tuple[list, list[str]]:
    """bssplit=SIZE/PCT:...[,...] per direction, as fio draws them; a blank direction has
    the job's bs (`default`). Returns the sizes per direction and the notes on shares that
    do not add up to 100 %."""
    out: list = []
    notes: list[str] = []
    for i, d in enumerate(_per_direction(value)):
        entries = _split_entries(d, value, where, base)
        if len(entries) == L.MAX_BSSPLIT and d.count(":") >= L.MAX_BSSPLIT and d.split(":")[L.MAX_BSSPLIT].strip():
            _add(notes, f"bssplit: over {L.MAX_BSSPLIT} block sizes in a direction: fio says \"hit max "
                        f"of {L.MAX_BSSPLIT} split entries\" and keeps the first {L.MAX_BSSPLIT}; so does ssdlab")
        if not entries:
            out.append([[default[i], 100.0]])
            continue
        shares, note = fio_shares(entries, value, where)
        out.append(shares)
        _add(notes, note)
    return out, notes


def _add(notes: list[str], note: str) -> None:
    if note and note not in notes:
        notes.append(note)


def job_sizes(o: dict, base: int, notes: list[str]) -> tuple[list, list[tuple[int, int]]]:
    """The job's block sizes per direction from bssplit, bsrange or bs (that order), with
    bs (or fio's 4096) where bssplit or bsrange leaves a direction blank; and the ranges
    drawn from ((0, 0): none)."""
    bs = bs_list(o["bs"][0], "bs", o["bs"][1], base) if "bs" in o else [[[4096, 100.0]] for _ in range(3)]
    default = [int(d[0][0]) for d in bs]
    if "bssplit" in o:
        bs, more = bssplit(o["bssplit"][0], o["bssplit"][1], base, default)
        notes += [n for n in more if n not in notes]
    elif "bsrange" in o:
        rng = bsrange(o["bsrange"][0], o["bsrange"][1], base, default)
        bs = [[[lo, 100.0], [hi, 0.0]] if hi > lo else [[lo, 100.0]] for lo, hi in rng]  # the range's ends
        return bs, [(lo, hi) if hi > lo else (0, 0) for lo, hi in rng]
    return bs, [(0, 0)] * 3


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
