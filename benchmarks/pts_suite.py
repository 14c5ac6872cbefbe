"""Wall time of the whole SNIA PTS client suite on a simulated drive, every test to steady
state (or 25 rounds) at the specification's parameters: `ssdlab pts --drive sim:tlc-256`.
Prints the total and each test's rounds; the report lands in a temporary directory.

    .venv/bin/python benchmarks/pts_suite.py [--drive sim:tlc-256] [--enterprise]
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TARGET_S = 600.0  # target: the whole client suite in under 10 minutes on 2 cores


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--drive", default="sim:tlc-256")
    ap.add_argument("--enterprise", action="store_true")
    ap.add_argument("--test", action="append", default=[])
    a = ap.parse_args()
    exe = Path(sys.executable).with_name("ssdlab")
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [str(exe), "pts", "--drive", a.drive, "-o", f"{tmp}/report", "--db", f"{tmp}/s.db",
               "--json", *(["--enterprise"] if a.enterprise else []),
               *[x for t in a.test for x in ("--test", t)]]
        t0 = time.perf_counter()
        p = subprocess.run(cmd, check=False, capture_output=True, text=True)
        wall = time.perf_counter() - t0
        if p.returncode:
            print(p.stderr, file=sys.stderr)
            return p.returncode
        doc = json.loads(p.stdout)
    for r in doc["runs"]:
        m = r["drives"][0]["metrics"]
        print(f"{r['test']:16s} steady={m.get('steady_reached')} round={m.get('steady_round')} "
              f"rounds={m.get('rounds')}")
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = ru.ru_utime + ru.ru_stime
    verdict = "met" if wall <= TARGET_S else "NOT met"
    print(f"pts suite on {a.drive} ({'enterprise' if a.enterprise else 'client'}): "
          f"{wall:.1f} s wall (target {TARGET_S:.0f} s: {verdict}), {cpu:.1f} s CPU "
          f"(user + system of ssdlab and its workers: the wall time on an idle machine with "
          f"one core per worker is about CPU / workers)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
