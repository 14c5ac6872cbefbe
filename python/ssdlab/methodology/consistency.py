"""Performance consistency: purge, sequential fill, then 4 KiB random writes at QD32 over
the same area for --seconds (2000 by default), IOPS every second."""

from __future__ import annotations

import numpy as np

from .. import phase as ph
from ..analysis import round_seconds, steady_state, summary
from ..analysis.gc_onset import gc_onset_s, spare_floor_bytes
from .fill import segment_bytes
from .common import Options, area_bytes, by_name, opt_total
from ..figures import lazy
from .test import Test

DEFAULT_SECONDS = 2000
SECONDS_HELP = "duration of the random-write phase"
STEADY_WAF_S = 600  # steady_waf: over the last 600 s (the second half of shorter runs)


def phases(capacity: int, opts: Options) -> list[ph.Phase]:
    n = area_bytes(capacity, opts)
    return [
        ph.purge(),
        ph.seq_write("fill", offset=0, length=n, stop_bytes=n, segment_bytes=segment_bytes(n)),
        ph.rand_io("random", read_pct=0, offset=0, length=n,
                   stop_seconds=opts.secs(DEFAULT_SECONDS)),
    ]


def analyze(results, opts: Options) -> dict:
    r = by_name(results)["random"]
    iops = np.asarray(r.series["iops"], dtype=np.float64)
    area = int(r.phase.length or 0)
    onset = gc_onset_s(r.series, r.phase.block_size, spare_floor_bytes(area, opts.spare))
    ss = steady_state(iops, not_before=onset)
    out: dict = {"steady_iops": None, "steady_stdev": None, "p1_low_iops": None, "min_iops": None,
                 "steady_start_s": ss.start_s, "waf": opt_total(r, "waf"), "steady_waf": None,
                 "steady_reached": ss.reached}
    if ss.reached:  # never steady: no figure of the burst or the way down is called steady
        s = summary(iops[ss.start_s:])
        out.update(steady_iops=s.mean, steady_stdev=s.stdev, p1_low_iops=s.p1_low, min_iops=s.min,
                   steady_waf=steady_waf(r.series))
    return out


def verdict(metrics: dict, opts: Options) -> str | None:
    """The summary's line for a run that never reached steady state (None: it did)."""
    if metrics.get("steady_reached") is not False:
        return None
    return (f"steady state not reached in {opts.secs(DEFAULT_SECONDS):g} s: the random writes did not use up the "
            "spare area, or the IOPS had not settled; run longer (--seconds, 2000 by default)")


def resolution_of(phases: list[dict], metrics: dict) -> dict[str, float]:
    """Steady state is found on a grid of rounds (a minute in a 2000 s run): where it begins
    moves by one round at least (`ssdlab fit` widens its tolerance to that)."""
    start = metrics.get("steady_start_s")
    r = next((p for p in phases if p["name"] == "random"), None)
    iops = (r or {}).get("series", {}).get("iops")
    if not start or iops is None or not len(iops):
        return {}
    return {"steady_start_s": round_seconds(len(iops)) / start}


def steady_waf(series: dict) -> float | None:
    """NAND / host bytes over the last STEADY_WAF_S seconds (the second half of a run
    shorter than twice that): `waf` covers the whole phase, burst included. None without
    the simulator's per-second byte counters, or without host writes."""
    host, nand = series.get("host_write_bytes"), series.get("nand_write_bytes")
    if host is None or nand is None or len(host) != len(nand) or not len(host):
        return None
    n = min(STEADY_WAF_S, len(host) // 2) or len(host)
    h = float(np.nansum(np.asarray(host, dtype=np.float64)[-n:]))
    w = float(np.nansum(np.asarray(nand, dtype=np.float64)[-n:]))
    return w / h if h > 0 else None


TEST = Test(
    name="consistency",
    title="Performance consistency",
    phases=phases,
    analyze=analyze,
    figures=lazy("consistency"),
    default_seconds=DEFAULT_SECONDS,
    seconds_help=SECONDS_HELP,
    cost=5.7,
    spare_matters=True,
    resolution=resolution_of,
    verdict=verdict,
)
