"""What the fingerprint's trimmed stretch tells apart: the battery at its defaults on a
built-in profile and on copies with one parameter changed (more spare area: more blocks per
plane; a slower or faster native program; GC pace, GC buffers, GC firmware time): the random-
write stretch's steady level moves with all of them, the trimmed stretch's gain over it
mostly with the spare area. Prints one line per drive (and the battery's length on a real drive of
those speeds, and the simulated run's CPU).

    python benchmarks/fit_spare.py [--profile tlc-256] [--profile bg4-128] [--set KEY=V ...] [--as-is]
"""

from __future__ import annotations

import argparse
import sys
import time
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "python"), str(ROOT / "tests"), str(ROOT / "tests" / "fit")]

from closedloop import hidden_values  # noqa: E402
from ssdlab.methodology import Options, get  # noqa: E402
from ssdlab.profiles import load_text  # noqa: E402
from ssdlab.runner import walk_phases  # noqa: E402
from ssdlab.targets.sim import SimTarget  # noqa: E402

PROFILES = ("tlc-256", "bg4-128")


def variants(p: dict) -> list[list[str]]:
    """The profile, 10 % and 20 % more blocks per plane, and each GC or program parameter
    changed at the profile's spare area."""
    n, ftl = p["nand"], p.get("ftl", {})
    b, prog = n["blocks_per_plane"], n["native"]["prog_us"]
    return [[], [f"nand.blocks_per_plane={int(b * 1.1)}"], [f"nand.blocks_per_plane={int(b * 1.2)}"],
            [f"nand.native.prog_us={prog * 0.7:g}"], [f"nand.native.prog_us={prog * 1.3:g}"],
            [f"ftl.gc_pace={float(ftl.get('gc_pace', 1.0)) * 2:g}"], ["ftl.gc_buffers=64" if ftl.get("gc_buffers")
                                                                      else "ftl.gc_buffers=1"],
            ["ftl.gc_move_us=20"]]


def one(profile: str, ov: list[str]) -> str:
    text = load_text(profile)
    target = SimTarget(text, ov)
    cap = target.identify().capacity
    opts = Options()
    t0 = time.process_time()
    res = walk_phases(get("fingerprint"), target, cap, opts)
    cpu = time.process_time() - t0
    m = get("fingerprint").analyze(res, opts)
    dur = {r.phase.name: float(r.totals.get("duration_s") or 0.0) for r in res}
    # a real drive's settle waits its whole cap (a simulated one stops once it is quiet)
    real = sum(dur.values()) - dur.get("settle", 0.0) + next(float(r.phase.seconds or 0.0) for r in res
                                                               if r.phase.name == "settle")
    bins = " ".join(f"{v / 1e3:.1f}" for v in m["trimmed_iops_by_share"].values())
    sp = hidden_values(profile, ov, ["spare_pct"])["spare_pct"]
    return (f"{profile:10s} {' '.join(ov) or '(profile)':28s} spare {sp:5.1f} %  steady {m['steady_iops']:8.0f}  "
            f"stretch WAF {m['stretch_waf']:5.2f}  trimmed gain {m['trimmed_gain']:5.2f} (WAF {m['trimmed_waf']:4.2f}; "
            f"kIOPS by fifth {bins})  real drive {real / 60:.0f} min (fill {dur['fill'] / 60:.0f}, "
            f"stretch {dur['stretch'] / 60:.0f}, trimmed {dur['trimmed'] / 60:.1f}), CPU {cpu:.1f} s")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--profile", action="append", help=f"built-in profiles (default: {', '.join(PROFILES)})")
    ap.add_argument("--set", action="append", default=None, help="run only the profile with this override")
    ap.add_argument("--as-is", action="store_true", help="run only the profiles themselves (the battery's length)")
    a = ap.parse_args()
    for profile in a.profile or PROFILES:
        p = tomllib.loads(load_text(profile))
        for ov in [a.set] if a.set else [[]] if a.as_is else variants(p):
            print(one(profile, ov), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
