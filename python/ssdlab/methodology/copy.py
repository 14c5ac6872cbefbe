"""File copy, large files and small files, within the drive and from a slower source.

Approximations (a simulated drive has no filesystem):
- *copy within the drive*: source and destination live on the drive, so it reads and
  writes at once. We write a region of 2 x SIZE first (source files plus the previous
  contents of the destination), then run one sequential stream over it that is 50 % reads
  and 50 % writes until 2 x SIZE bytes have moved. Copy MB/s = SIZE / duration.
- *transfer from another disk*: the source delivers at SOURCE_MBPS; the drive writes what
  arrives. We write SIZE in CHUNKS pieces; after each piece the drive idles for as long
  as the source still needs to deliver the next one (pipelined copy), so the drive gets
  the idle time a slow source really gives it. Transfer time = sum of max(write, chunk /
  source rate). Transfer MB/s = SIZE / that time.
- each copy and each transfer starts from a drive at rest: an idle until the drive's
  background work is done (at most REST_S; a real drive idles REST_S), as a copy a user
  starts comes after the files were written. Straight after the source files and the copy,
  the SLC cache is still full of them and the figure is what the test's own preparation
  left (sim:870qvo-1000's 30 GB transfer: 85 MB/s, the native speed; at rest 500).
- *large files*: 1 MiB I/O at QD8 (copy engines use large overlapped I/O);
  *small files*: one 32 KiB I/O per file at QD1, the way small files are copied one by one.
"""

from __future__ import annotations

from typing import Generator

from .. import phase as ph
from ..phase import GB, KIB
from ..phase import PhaseResult
from .common import MIB, Options, area_bytes, area_too_small, by_name
from ..figures import lazy
from .test import Test

DEFAULT_SECONDS = None
SECONDS_HELP = "not used"
SOURCE_MBPS = 500.0  # a SATA SSD source
CHUNKS = 16
REST_S = 600.0  # the longest fold of a copy's writes (sim:870qvo-1000: 30 GB into QLC)
# kind: (size cap, share of the area cap, block size, queue depth)
KINDS = {"large": (30 * GB, 0.20, MIB, 8), "small": (3 * GB, 0.05, 32 * KIB, 1)}


def size(kind: str, area: int) -> int:
    cap, share, bs, _ = KINDS[kind]
    unit = CHUNKS * MIB
    return max(unit, int(min(cap, area * share)) // unit * unit)


def phases(capacity: int, opts: Options) -> Generator[ph.Phase, PhaseResult | None, None]:
    area = area_bytes(capacity, opts)
    yield ph.purge()
    base = 0
    for kind, (_, _, bs, qd) in KINDS.items():
        s = size(kind, area)
        if base + 3 * s > area:
            raise area_too_small(f"the {kind}-file copy", base + 3 * s, capacity, area, opts)
        yield ph.seq_write(f"{kind}_source", offset=base, length=2 * s, stop_bytes=2 * s)
        yield ph.idle(REST_S, name=f"{kind}_rest_copy", until_quiet=True)
        yield ph.Phase(kind="io", name=f"{kind}_copy", pattern="seq", read_pct=50,
                       block_size=bs, queue_depth=qd, offset=base, length=2 * s,
                       stop_bytes=2 * s)
        chunk = s // CHUNKS
        deliver_s = chunk / (SOURCE_MBPS * 1e6)
        yield ph.idle(REST_S, name=f"{kind}_rest_transfer", until_quiet=True)
        for i in range(CHUNKS):
            res = yield ph.seq_write(f"{kind}_transfer_{i}", block_size=bs, queue_depth=qd,
                                     offset=base + 2 * s + i * chunk, length=chunk,
                                     stop_bytes=chunk)
            # --plan sends nothing back: show the longest possible gap
            wrote_s = float(res.totals["duration_s"]) if res is not None else 0.0
            if i < CHUNKS - 1 and deliver_s - wrote_s > 1e-6:
                yield ph.idle(deliver_s - wrote_s, name=f"{kind}_source_wait_{i}")
        base += 3 * s


def _stop_bytes(res: PhaseResult) -> float:
    b = res.phase.stop_bytes
    assert b is not None  # phases() gives every copy and transfer phase a byte stop
    return float(b)


def analyze(results, opts: Options) -> dict:
    r = by_name(results)
    out = {}
    for kind in KINDS:
        s = _stop_bytes(r[f"{kind}_copy"]) / 2
        out[f"{kind}_copy_mbps"] = s / 1e6 / float(r[f"{kind}_copy"].totals["duration_s"])
        writes = [x for n, x in r.items() if n.startswith(f"{kind}_transfer_")]
        chunk = _stop_bytes(writes[0])
        t = sum(max(float(w.totals["duration_s"]), chunk / (SOURCE_MBPS * 1e6)) for w in writes)
        out[f"{kind}_transfer_mbps"] = chunk * len(writes) / 1e6 / t
    return out


TEST = Test(
    name="copy",
    title="File copy",
    phases=phases,
    analyze=analyze,
    figures=lazy("bars", "scalar_figures", test="copy", title="File copy: within the drive and from a rate-limited source",
                 metrics=["large_copy_mbps", "large_transfer_mbps", "small_copy_mbps", "small_transfer_mbps"]),
    default_seconds=DEFAULT_SECONDS,
    seconds_help=SECONDS_HELP,
    cost=0.9,
)
