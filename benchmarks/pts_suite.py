"""Wall time of the whole SNIA PTS suite on a simulated drive, every test to steady state
(or 25 rounds) at the specification's parameters: `ssdlab pts --drive sim:tlc-256`, the
client settings (target: under 10 minutes on 2 cores) and then the enterprise settings
(`--enterprise`: its time is printed, without a target). Prints each suite's total and
each test's rounds; the reports land in a temporary directory.

    .venv/bin/python benchmarks/pts_suite.py [--drive sim:tlc-256] [--segment client|enterprise|both]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TARGET_S = 600.0  # target: the whole client suite in under 10 minutes on 2 cores


def cpu_children() -> float:
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def suite(exe: Path, drive: str, enterprise: bool, tests: list[str]) -> int:
    seg = "enterprise" if enterprise else "client"
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [str(exe), "pts", "--drive", drive, "-o", f"{tmp}/report", "--db", f"{tmp}/s.db",
               "--json", *(["--enterprise"] if enterprise else []),
               *[x for t in tests for x in ("--test", t)]]
        cpu0, t0 = cpu_children(), time.perf_counter()
        p = subprocess.run(cmd, check=False, capture_output=True, text=True)
        wall, cpu = time.perf_counter() - t0, cpu_children() - cpu0
        if p.returncode:
            print(p.stderr, file=sys.stderr)
            return p.returncode
        doc = json.loads(p.stdout)
    for r in doc["runs"]:
        m = r["drives"][0]["metrics"]
        print(f"  {seg:10s} {r['test']:16s} steady={m.get('steady_reached')} "
              f"round={m.get('steady_round')} rounds={m.get('rounds')}")
    verdict = ("" if enterprise else
               f" (target {TARGET_S:.0f} s: {'met' if wall <= TARGET_S else 'NOT met'})")
    print(f"pts suite on {drive} ({seg}): {wall:.1f} s wall{verdict}, {cpu:.1f} s CPU (user + "
          f"system of ssdlab and its workers: the wall time on an idle machine with one core per "
          f"worker is about CPU / workers); load average at the end {os.getloadavg()[0]:.1f}")
    return 0


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--drive", default="sim:tlc-256")
    ap.add_argument("--segment", choices=("client", "enterprise", "both"), default="both")
    ap.add_argument("--enterprise", action="store_true", help="the same as --segment enterprise")
    ap.add_argument("--test", action="append", default=[])
    a = ap.parse_args()
    exe = Path(sys.executable).with_name("ssdlab")
    segs = ["enterprise"] if a.enterprise else (["client", "enterprise"] if a.segment == "both"
                                                 else [a.segment])
    print(f"load average at the start: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    for seg in segs:
        rc = suite(exe, a.drive, seg == "enterprise", a.test)
        if rc:
            return rc
    return 0


if __name__ == "__main__":
    sys.exit(main())
