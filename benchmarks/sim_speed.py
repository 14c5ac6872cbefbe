"""Simulator speed and memory figures against their targets, printed as one table.

- consistency test wall time: purge + sequential fill + 2000 s of 4 KiB QD32 random writes
  on the 256 GB drive (target <= 30 s) and a 1 TB drive (target <= 120 s);
- simulated 4 KiB random writes per wall-second in GC steady state on the full 256 GB
  drive with 7.37 % spare (target >= 2,000,000);
- memory per 4 KiB of raw NAND of drives up to 4 TB once filled (target <= 10 bytes), and of
  a new drive, whose tables take memory only as it is written (target <= 64 MB).
Each measurement runs in its own process so its peak RSS is its own.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time

ONE_TB = ["user_capacity_gb=1024", "nand.dies_per_channel=4", "slc.dynamic_max_gb=96"]
FOUR_TB = ["user_capacity_gb=4096", "nand.dies_per_channel=16", "slc.dynamic_max_gb=96"]


def _drive(overrides):
    from ssdlab import _sim, profiles

    return _sim.Drive(profiles.load_text("tlc-256"), overrides=overrides)


def consistency(overrides) -> dict:
    from ssdlab.phase import purge, rand_io, seq_write

    d = _drive(overrides)
    cap = int(d.info()["user_bytes"])
    t0 = time.perf_counter()
    d.run(purge().resolve(cap))
    d.run(seq_write("fill", stop_bytes=cap).resolve(cap))
    r = d.run(rand_io("rw", 0, stop_seconds=2000).resolve(cap))
    wall = time.perf_counter() - t0
    return {"wall_s": wall, "ios": r["totals"]["ios"], "steady_iops": float(r["series"]["iops"][1400:].mean())}


def steady(overrides) -> dict:
    from ssdlab.phase import purge, rand_io, seq_write

    d = _drive(overrides)
    cap = int(d.info()["user_bytes"])
    d.run(purge().resolve(cap))
    d.run(seq_write("fill", stop_bytes=cap).resolve(cap))
    d.run(rand_io("pre", 0, block_size=4096, stop_bytes=int(1.5 * cap) // 4096 * 4096).resolve(cap))
    # Five windows of 60 simulated seconds (~0.6 M writes each); their median is the
    # process's figure.
    rates, iops, wafs = [], 0.0, []
    for i in range(5):
        t0 = time.perf_counter()
        r = d.run(rand_io(f"rw{i}", 0, stop_seconds=60).resolve(cap))
        wall = time.perf_counter() - t0
        rates.append(r["totals"]["ios"] / wall)
        iops += r["totals"]["iops"] / 5
        wafs.append(r["totals"]["waf"])
    rates.sort()
    return {"writes_per_s": rates[2], "fastest_window": rates[-1], "waf": sum(wafs) / 5, "drive_iops": iops,
            "spare_pct": d.info()["spare_pct"]}


def memory(overrides) -> dict:
    """Peak RSS of a new drive, then of the drive filled end to end: the tables take memory
    as the drive is written, so the full drive is the worst case."""
    from ssdlab.phase import seq_write

    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    d = _drive(overrides)
    built = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    cap = int(d.info()["user_bytes"])
    d.run(seq_write("fill", stop_bytes=cap).resolve(cap))
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    raw = d.info()["raw_bytes"]
    return {"raw_gb": raw / 1e9, "rss_gb": (after - before) / 1e9, "bytes_per_4k": (after - before) / (raw / 4096),
            "built_mb": (built - before) / 1e6}


def _child(name: str, overrides: list[str]) -> dict:
    out = subprocess.run([sys.executable, __file__, "--one", name, json.dumps(overrides)],
                         check=True, capture_output=True, text=True)
    return json.loads(out.stdout)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--one", nargs=2)
    ap.add_argument("--quick", action="store_true", help="skip the 1 TB and 4 TB drives; steady state in one process, not three")
    a = ap.parse_args()
    if a.one:
        print(json.dumps(globals()[a.one[0]](json.loads(a.one[1]))))
        return
    rows = []
    c = _child("consistency", [])
    rows.append(("consistency test, 256 GB", f"{c['wall_s']:.1f} s wall", "<= 30 s", c["wall_s"] <= 30))
    # Separate processes of the same build differ more than windows of one process do on
    # a shared VM (memory latency under neighbours), so the figure is the median over
    # processes, with each process's median shown.
    runs = [_child("steady", []) for _ in range(1 if a.quick else 3)]
    meds = sorted(r["writes_per_s"] for r in runs)
    s, med = runs[0], meds[len(meds) // 2]
    # The fastest window is shown, not judged: contention on a shared host only slows a
    # window down, so it tells what the code does on a quiet core.
    fastest = max(r["fastest_window"] for r in runs)
    rows.append((f"steady-state 4 KiB random writes, 256 GB, {s['spare_pct']:.2f} % spare (WAF {s['waf']:.2f})",
                 f"{med / 1e6:.2f} M/s (processes: {', '.join(f'{m / 1e6:.2f}' for m in meds)}; "
                 f"fastest window {fastest / 1e6:.2f})",
                 ">= 2.00 M/s", med >= 2e6))
    mems = [("256 GB", [])] + ([] if a.quick else [("1 TB", ONE_TB), ("4 TB", FOUR_TB)])
    if not a.quick:
        c = _child("consistency", ONE_TB)
        rows.append(("consistency test, 1 TB", f"{c['wall_s']:.1f} s wall", "<= 120 s", c["wall_s"] <= 120))
    for label, ov in mems:
        m = _child("memory", ov)
        rows.append((f"memory, {label} filled ({m['raw_gb']:.0f} GB raw, {m['rss_gb']:.2f} GB RSS)",
                     f"{m['bytes_per_4k']:.2f} B per 4 KiB", "<= 10 B", m["bytes_per_4k"] <= 10))
        rows.append((f"memory, {label} new (nothing written)", f"{m['built_mb']:.0f} MB", "<= 64 MB",
                     m["built_mb"] <= 64))
    w = max(len(r[0]) for r in rows)
    for name, value, target, ok in rows:
        print(f"{name:<{w}}  {value:>18}  target {target:<12} {'met' if ok else 'NOT MET'}")


if __name__ == "__main__":
    main()
