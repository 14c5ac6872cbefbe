"""Served IOPS of `ssdlab serve` (target: >= 40,000 at QD16 for 4 KiB random I/O
on this machine) and the lag, next to what the simulator gives in virtual time for the
same I/O: the served figure can only reach the simulated one when this machine keeps up.

A fast drive (pm981a-512, whose 4 KiB QD16 figures are far above the target) is served
over a Unix socket; fio's nbd engine writes 1 GiB sequentially (so reads find data), then
runs 4 KiB random reads and writes at QD1 and QD16 over that 1 GiB. Lag per test from the
plugin's stats lines (docs/serve.md)."""

from __future__ import annotations

import argparse
import json
import subprocess
import tempfile
import time
from pathlib import Path

from ssdlab import _sim
from ssdlab.profiles import load_text
from ssdlab.serve.server import ServeOptions, Serving
from ssdlab.store import Store

PROFILE = "pm981a-512"
AREA = 1 << 30


def fio(uri: str, rw: str, bs: str, qd: int, seconds: float | None) -> float:
    cmd = ["fio", "--name=b", "--ioengine=nbd", f"--uri={uri}", f"--rw={rw}", f"--bs={bs}",
           f"--iodepth={qd}", f"--size={AREA}", "--thread", "--output-format=json"]
    if seconds:
        cmd += [f"--runtime={seconds}", "--time_based"]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    job = json.loads(out[out.index("{"):])["jobs"][0]
    return job["read"]["iops"] + job["write"]["iops"]


def virtual_iops(read: bool, qd: int) -> float:
    d = _sim.Drive(load_text(PROFILE))
    d.run({"kind": "io", "pattern": "seq", "block_size": 131072, "queue_depth": 32,
           "length": AREA, "stop_bytes": AREA})
    r = d.run({"kind": "io", "pattern": "rand", "read_pct": 100 if read else 0, "block_size": 4096,
               "queue_depth": qd, "length": AREA, "stop_seconds": 1.0})
    return r["totals"]["iops"]


def lag(rows: list[dict]) -> tuple[int, int, float, float]:
    n = sum(r.get("i_requests", 0) for r in rows)
    late = sum(r.get("i_late", 0) for r in rows)
    mean = sum(r.get("i_lag_mean_us", 0) * r.get("i_requests", 0) for r in rows) / n if n else 0.0
    p99 = max((r.get("i_lag_p99_us", 0) for r in rows if r.get("i_requests")), default=0.0)
    return n, late, mean, p99


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--one", nargs=2, metavar=("RW", "QD"),
                    help="one test only (e.g. randwrite 16), its served IOPS as JSON")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="ssdlab-bench-serve-") as d:
        s = Serving(ServeOptions(drive=f"sim:{PROFILE}", socket=Path(d) / "b.sock"))
        s.start(Store(Path(d) / "r.sqlite"), {"bench": True})
        try:
            fio(s.uri, "write", "128k", 32, None)
            time.sleep(1.2)
            s.rows()
            if a.one:
                iops = fio(s.uri, a.one[0], "4k", int(a.one[1]), a.seconds)
                print(json.dumps({"iops": iops}))
                return
            print(f"served {PROFILE} over a Unix socket, fio ioengine=nbd, 4 KiB random over 1 GiB, "
                  f"{a.seconds:g} s each")
            print(f"{'test':<16}{'served IOPS':>12}{'virtual IOPS':>14}{'requests':>10}{'late':>8}"
                  f"{'lag mean us':>12}{'lag p99 us <=':>14}")
            for rw in ("randread", "randwrite"):
                for qd in (1, 16):
                    iops = fio(s.uri, rw, "4k", qd, a.seconds)
                    time.sleep(1.2)  # the interval's stats line
                    n, late, mean, p99 = lag(s.rows())
                    v = virtual_iops(rw == "randread", qd)
                    print(f"{rw + f' QD{qd}':<16}{iops:>12,.0f}{v:>14,.0f}{n:>10,}{late:>8,}"
                          f"{mean:>12.1f}{p99:>14.0f}")
        finally:
            totals, status = s.finish()
        print(f"whole session: {totals.get('lag_requests', 0):,.0f} requests, "
              f"{totals.get('late', 0):,.0f} late ({totals.get('late_pct', 0):.2f} %), "
              f"lag mean {totals.get('lag_mean_us', 0):.1f} us, max {totals.get('lag_max_us', 0):.0f} us")


if __name__ == "__main__":
    main()
