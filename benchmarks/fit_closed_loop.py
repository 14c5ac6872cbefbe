"""The closed loop of `ssdlab fit` in full (tests/fit/test_closed_loop.py is the short one):
for a DRAM-less HMB NVMe drive, a SATA MLC drive and a QLC drive, a hidden drive (the
built-in profile with every time drawn within +-30 %, another SLC cache size and spare
area) runs the fingerprint at its defaults; `ssdlab fit` sees that run alone (the whole
parameter space, the class the evidence suggests); twin and hidden drive then run the 2000 s
consistency test, CrystalDiskMark (quick), the idle test and a PCMark 8 trace, and every
figure must agree within 10 %. Prints a table per drive and the totals.

    python benchmarks/fit_closed_loop.py [--drive bg4-128] [--trials 400] [--seed 1]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "python"), str(ROOT / "tests"), str(ROOT / "tests" / "fit")]

from closedloop import closed_loop, perturbed, table  # noqa: E402

KINDS = {"bg4-128": "DRAM-less HMB NVMe (TLC)", "mx100-256": "SATA MLC", "qlc-pcie4-hmb-1000": "QLC (HMB NVMe)"}
HELD = {"consistency": [],
        "quick": ["--repeat", "1", "--seconds", "1", "--interval", "0"],
        "idle": [],
        "trace": ["--trace", "builtin:pcmark8-photoshop-light-like", "--state", "full"]}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--drive", action="append", help=f"built-in profiles (default: {', '.join(KINDS)})")
    ap.add_argument("--trials", default="400")
    ap.add_argument("--seed", type=int, default=1, help="the hidden drive's perturbation")
    ap.add_argument("--jobs", default=None)
    a = ap.parse_args()
    ok = True
    for drive in a.drive or list(KINDS):
        hidden = perturbed(drive, a.seed)
        t0 = time.time()
        with tempfile.TemporaryDirectory() as tmp:
            fit = ["--trials", a.trials, "--no-crossval", *(["--jobs", a.jobs] if a.jobs else [])]
            loop = closed_loop(Path(tmp), drive, hidden, [], fit, HELD, timeout=6 * 3600)
        n = sum(r["ok"] for r in loop.rows)
        print(f"\n== {drive} ({KINDS.get(drive, '')}), hidden: {' '.join(hidden)}")
        print(f"class {loop.fit['class']}; {loop.fit['trials']} trials; {loop.fit['passed']} of {loop.fit['total']} "
              f"fingerprint figures within tolerance; {time.time() - t0:.0f} s")
        print(table(loop))
        print(f"{n} of {len(loop.rows)} held-out figures within 10 %")
        print(json.dumps({"drive": drive, "held_out_within_10pct": n, "held_out": len(loop.rows),
                          "parameters": [[p["key"], p["value"], p["pinned"]] for p in loop.fit["parameters"]]}))
        ok &= loop.passed
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
