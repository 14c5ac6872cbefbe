"""Parallel speed-ups, each the same work one after another and then through
executor.py on every core, with the machine's load printed beside it (a shared machine's
other work slows the parallel run most):

- a 16-point consistency sweep on sim:sn520-128 (4 write-buffer sizes x 4 spare areas;
  target >= 1.8x on 2 cores), and that both gave the same metrics;
- `ssdlab review` on sim:tlc-256 (target >= 1.6x);
- `ssdlab validate`, every profile (target >= 1.6x).

`python benchmarks/parallel.py [--only sweep,review,validate]`
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

SWEEP = ["sweep", "consistency", "--drive", "sim:sn520-128",
         "--set", "host.write_buffer_kib=1024,2048,4096,8192", "--spare", "0,7,15,25"]


def cpu_children() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)  # the command and its worker processes
    return r.ru_utime + r.ru_stime


def ssdlab(args: list[str], tmp: Path) -> tuple[float, float, dict | None]:
    """Wall seconds, CPU seconds (the command and its workers), its --json document."""
    for f in tmp.glob("*.sqlite*"):  # every round starts from an empty store
        f.unlink()
    c0, t0 = cpu_children(), time.perf_counter()
    p = subprocess.run([sys.executable, "-m", "ssdlab.cli", *args], capture_output=True, text=True,
                       cwd=tmp)
    wall, cpu = time.perf_counter() - t0, cpu_children() - c0
    if p.returncode not in (0, 1):
        sys.exit(f"ssdlab {' '.join(args)} failed ({p.returncode}): {p.stderr.strip()[-500:]}")
    try:
        return wall, cpu, json.loads(p.stdout)
    except json.JSONDecodeError:
        return wall, cpu, None


def load() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


def measure(name: str, seq_args: list[str], par_args: list[str], target: float, tmp: Path,
            compare=None, rounds: int = 1) -> dict:
    """Sequential and parallel runs alternate for `rounds` rounds; the fastest of each counts
    (on a shared machine, the round least disturbed by other work)."""
    seq, par, loads, same = [], [], [load()], True
    for _ in range(rounds):
        w, c, sdoc = ssdlab(seq_args, tmp)
        seq.append((w, c))
        loads.append(load())
        w, c, pdoc = ssdlab(par_args, tmp)
        par.append((w, c))
        loads.append(load())
        if compare:
            same = same and compare(sdoc, pdoc)
    (sw, sc), (pw, pc) = min(seq), min(par)
    row = {"what": name, "sequential_s": sw, "parallel_s": pw, "speedup": sw / pw,
           "target": target, "sequential_cpu_s": sc, "parallel_cpu_s": pc,
           "parallel_cores_used": pc / pw, "rounds": rounds, "loads": loads,
           "same_results": same if compare else None}
    print(f"{name:<34} {sw:8.1f} s {pw:8.1f} s  {sw / pw:5.2f}x (target >= {target}x)"
          + ("" if not compare else f"  same results: {'yes' if same else 'NO'}")
          + f"  parallel used {pc / pw:.2f} cores ({pc:.0f} CPU s; sequential {sc:.0f})"
          + f"  load 1 min: {' | '.join(x.split()[0] for x in loads)}", flush=True)
    return row


def spin(n: int) -> int:
    x = 0
    for i in range(n):
        x += i
    return x


def ceiling(n: int = 20_000_000) -> float:
    """What this machine gives right now: the speed-up of one pure-Python loop per core over
    the same loops one after another (no I/O, no memory traffic). On an idle machine it is
    the core count; other work on a shared machine pulls it down, and every figure below
    with it."""
    from concurrent.futures import ProcessPoolExecutor

    k = len(os.sched_getaffinity(0))
    t0 = time.perf_counter()
    for _ in range(k):
        spin(n)
    seq = time.perf_counter() - t0
    with ProcessPoolExecutor(k) as ex:
        list(ex.map(spin, [1] * k))  # workers started before the clock
        t0 = time.perf_counter()
        list(ex.map(spin, [n] * k))
        par = time.perf_counter() - t0
    return seq / par


def sweep_metrics(doc: dict | None) -> dict:
    return {json.dumps(p["point"], sort_keys=True): p["metrics"] for p in (doc or {}).get("points", [])}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", default="sweep,review,validate")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--validate-drives", default="", help="validate only these profiles "
                    "(comma-separated; default: every profile, the benchmark's figure)")
    ap.add_argument("--rounds", type=int, default=1, help="alternate sequential and parallel "
                    "runs this many times; the fastest of each counts")
    a = ap.parse_args()
    which = a.only.split(",")
    cores = len(os.sched_getaffinity(0))
    print(f"parallel speed-ups on {cores} cores (executor: local worker processes, one per core); "
          f"load average before: {load()}", flush=True)
    c = ceiling()
    print(f"control: {cores} pure-Python loops on {cores} processes vs one after another: "
          f"{c:.2f}x (the most this machine gives now)", flush=True)
    print(f"{'':<34} {'sequential':>10} {'parallel':>10}", flush=True)
    rows: list[dict] = [{"what": "control: pure-Python loops", "speedup": c}]
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        if "sweep" in which:
            rows.append(measure("sweep: 16 x consistency sn520-128",
                                [*SWEEP, "--db", "seq.sqlite", "--json", "--jobs", "1"],
                                [*SWEEP, "--db", "par.sqlite", "--json"], 1.8, tmp,
                                lambda s, p: bool(s) and sweep_metrics(s) == sweep_metrics(p), a.rounds))
        if "review" in which:
            rev = ["review", "--drive", "sim:tlc-256", "--json"]
            rows.append(measure("review sim:tlc-256",
                                [*rev, "--db", "rs.sqlite", "-o", "rs", "--jobs", "1"],
                                [*rev, "--db", "rp.sqlite", "-o", "rp"], 1.6, tmp,
                                lambda s, p: bool(s) and s["runs"] == p["runs"], a.rounds))
        if "validate" in which:
            only = [x for d in a.validate_drives.split(",") if d for x in ("--drive", d)]
            rows.append(measure(f"validate ({a.validate_drives or 'every profile'})",
                                ["validate", "--json", "--workers", "1", *only],
                                ["validate", "--json", *only], 1.6, tmp,
                                lambda s, p: bool(s) and s["figures"] == p["figures"], a.rounds))
    if a.json:
        print(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
