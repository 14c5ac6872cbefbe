"""Clean / full / after-idle surface passes (HD Tach style) and recycling speed.

Order: purge; clean read and write passes; torture; full read and write passes; torture
again; idle --seconds (30 min by default); idle read and write passes; TRIM all; a last
write pass; a read pass of what that last pass wrote. Each pass is one sequential sweep of
the written area, 128 KiB at QD1, reads first as HD Tach does. The clean write pass is the
"after purge" write (a purged drive is the same state), and the last write pass is the
"after fill then TRIM" write: the idle write pass has just filled the drive.

Two read baselines: the clean read covers LBAs that hold no data, which a drive answers
without reading flash (after a purge a real drive does the same), so it is the interface
and controller limit. The last read (`read_written_mbps`) reads freshly, sequentially
written data: the fair baseline for the full and after-idle reads, which read data that
torture has scattered. It runs last so that it changes nothing the other passes measure.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from .. import phase as ph
from .common import Options, area_bytes, by_name, mbps
from ..figures import lazy
from .test import Test

DEFAULT_SECONDS = 1800
SECONDS_HELP = "idle time before the after-idle passes"
TORTURE_S = 300  # heavy use: 4 KiB random writes QD32 over the area
PASS_BLOCK, PASS_QD = 128 * 1024, 1


@dataclass(frozen=True)
class Plan:
    """The timed steps (`ssdlab fit`'s trials run the test on a drive of fewer blocks: the
    torture then overwrites the same share of it in proportionally less time, and the idle
    period's background work, which grows with the blocks, takes proportionally less)."""

    torture_s: float = TORTURE_S
    idle_s: float = DEFAULT_SECONDS

    def scaled(self, time_scale: float) -> "Plan":
        """The test on a drive of `time_scale` times the blocks."""
        return replace(self, torture_s=self.torture_s * time_scale, idle_s=self.idle_s * time_scale)


def sized(opts: Options) -> Plan:
    return Plan(idle_s=opts.secs(DEFAULT_SECONDS))


def phases(capacity: int, opts: Options) -> list[ph.Phase]:
    n = area_bytes(capacity, opts)
    rng = dict(offset=0, length=n, stop_bytes=n, block_size=PASS_BLOCK, queue_depth=PASS_QD)
    plan = opts.of(Plan, sized(opts))

    def torture(name: str) -> ph.Phase:
        return ph.rand_io(name, read_pct=0, offset=0, length=n, stop_seconds=plan.torture_s)

    return [
        ph.purge(),
        ph.seq_read("clean_read", **rng), ph.seq_write("clean_write", **rng),
        torture("torture_1"),
        ph.seq_read("full_read", **rng), ph.seq_write("full_write", **rng),
        torture("torture_2"),
        ph.idle(plan.idle_s),
        ph.seq_read("idle_read", **rng), ph.seq_write("idle_write", **rng),
        ph.trim("trim"),
        ph.seq_write("trim_write", **rng),
        ph.seq_read("written_read", **rng),
    ]


def analyze(results, opts: Options) -> dict:
    r = by_name(results)
    out = {f"{n}_mbps": mbps(r[n]) for n in
           ("clean_read", "clean_write", "full_read", "full_write", "idle_read", "idle_write")}
    out["purge_write_mbps"] = out["clean_write_mbps"]
    out["trim_write_mbps"] = mbps(r["trim_write"])
    out["read_written_mbps"] = mbps(r["written_read"])
    return out


# the report's bars: the sequential passes; the two read baselines named for what they read
BARS = dict(
    test="idle", title="Sequential passes, HD Tach style: clean, full, after idle; purge vs after TRIM",
    metrics=["clean_read_mbps", "read_written_mbps", "full_read_mbps", "idle_read_mbps",
             "clean_write_mbps", "full_write_mbps", "idle_write_mbps", "purge_write_mbps",
             "trim_write_mbps"],
    names={"clean_read_mbps": "clean read (unwritten LBAs)",
           "read_written_mbps": "read of freshly written data"},
    note=("Two read baselines: the clean read covers LBAs that were never written, which a "
          "drive answers without reading flash (the interface limit); the read of freshly "
          "written data is the baseline for the full and after-idle reads."))

TEST = Test(
    name="idle",
    title="Sequential passes, HD Tach style",
    phases=phases,
    analyze=analyze,
    figures=lazy("bars", "scalar_figures", **BARS),
    default_seconds=DEFAULT_SECONDS,
    seconds_help=SECONDS_HELP,
    cost=12.7,
    scale_free=True,
    sized=sized,
)
