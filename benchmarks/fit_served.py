"""A twin fitted end to end through a real block-device path: a hidden drive (a small
generic TLC drive, its times drawn within +-30 %, another SLC cache size and spare area) is
served by `ssdlab serve` over NBD, and the fingerprint runs on it in real time through fio
(`--drive nbd:SOCKET`), as on a user's drive; `ssdlab fit` sees that run alone. The same
fingerprint also runs on the hidden drive in virtual time and is fitted the same way. Both
twins then run the closed loop's tests outside the fingerprint against the hidden drive (in
virtual time): the table says how far a twin from the real path predicts, and what the path
itself (fio, the NBD socket, the served drive's pacing) costs next to the virtual-time one.

    python benchmarks/fit_served.py [--trials 120] [--seed 1] [--json FILE]

Root is not needed (no block device is written: the socket serves a simulated drive).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "python"), str(ROOT / "tests"), str(ROOT / "tests" / "fit")]

from clirun import cli  # noqa: E402
from closedloop import HELD_OUT, WITHIN, metrics, perturbed, sets  # noqa: E402
from docsection import load  # noqa: E402
from ssdlab.serve.server import ServeOptions, Serving  # noqa: E402
from ssdlab.store import Store  # noqa: E402

PROFILE = "tlc-256"
# a small drive of the class: 32 GB on two channels
BASE = ["user_capacity_gb=32", "nand.channels=2", "nand.blocks_per_plane=720", "slc.dynamic_max_gb=3"]
SEARCHED = ("dies,spare_pct,slc.cache_share,nand.slc.read_us,nand.native.read_us,nand.slc.prog_us,"
            "nand.native.prog_us,host.host_latency_us,host.command_overhead_us,host.write_latency_us")
FINGERPRINT = ["--seconds", "120", "--interval", "30"]
HELD = {"consistency": ["--seconds", "600"],  # steady state from about 450 s
        "quick": ["--repeat", "1", "--seconds", "0.5", "--interval", "0"],
        "idle": ["--seconds", "30"],
        "trace": ["--trace", "builtin:pcmark8-photoshop-light-like", "--state", "full"]}


def fit(db: Path, run_id: int, out: Path, trials: str) -> dict:
    r = cli("fit", "--runs", str(run_id), "--db", str(db), "--out", str(out), "--start", PROFILE,
            "--params", SEARCHED, "--trials", trials, "--no-crossval", "--seed", "3", "--json",
            timeout=3 * 3600, check=True)
    return json.loads(r.stdout)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--trials", default="120")
    ap.add_argument("--seed", type=int, default=1, help="the hidden drive's perturbation")
    ap.add_argument("--json", type=Path, help="write the measurements here")
    a = ap.parse_args()
    hidden = perturbed(PROFILE, a.seed, BASE)
    print(f"hidden drive: sim:{PROFILE} {' '.join(hidden)}  ({load()})", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["XDG_STATE_HOME"] = f"{tmp}/state"  # each fit from scratch: none of the trials an earlier fit kept (fit/trial_record.py)
        t = Path(tmp)
        db = t / "r.sqlite"
        t0 = time.time()
        server = Serving(ServeOptions(drive=f"sim:{PROFILE}", sets=hidden, socket=t / "drive.sock"))
        server.start(Store(t / "serve.sqlite"), {"benchmark": "fit_served"})
        try:
            r = cli("run", "fingerprint", "--drive", f"nbd:{t / 'drive.sock'}", *FINGERPRINT, "--db", str(db),
                    "--json", timeout=3 * 3600, check=True)
        finally:
            lag, _ = server.finish()
        served_s = time.time() - t0
        served_doc = json.loads(r.stdout)
        print(f"fingerprint through fio over NBD: {served_s:.0f} s real time; served requests late: "
              f"{lag.get('late')} of {lag.get('lag_requests')}", flush=True)
        virtual_doc = json.loads(cli("run", "fingerprint", "--drive", f"sim:{PROFILE}", *sets(hidden), *FINGERPRINT,
                                     "--db", str(db), "--json", timeout=3600, check=True).stdout)
        fp = {n: d["drives"][0]["metrics"] for n, d in (("served", served_doc), ("virtual", virtual_doc))}
        print(f"\nthe two fingerprints (what the real path measures of the same drive):\n"
              f"{'figure':32s} {'served':>12s} {'virtual':>12s} {'difference':>10s}")
        for k in sorted(set(fp["served"]) & set(fp["virtual"])):
            v, s = fp["virtual"][k], fp["served"][k]
            if isinstance(v, (int, float)) and isinstance(s, (int, float)) and not isinstance(v, bool):
                print(f"{k:32s} {s:12.4g} {v:12.4g} " + (f"{100 * (s - v) / v:+9.1f}%" if v else "         -"))
        twins = {}
        for name, run_id in (("served", served_doc["run_id"]), ("virtual", virtual_doc["run_id"])):
            t1 = time.time()
            doc = fit(db, run_id, t / f"{name}.toml", a.trials)
            twins[name] = {"fit_s": round(time.time() - t1), "passed": doc["passed"], "total": doc["total"],
                           "trials": doc["trials"],
                           "spare_pct": next(p["value"] for p in doc["parameters"] if p["key"] == "spare_pct")}
            print(f"fit of the {name} fingerprint: {doc['trials']} trials in {twins[name]['fit_s']} s, "
                  f"{doc['passed']} of {doc['total']} figures", flush=True)
        rows = []
        for test, args in HELD.items():
            h = metrics(test, [f"sim:{PROFILE}", *sets(hidden)], db, args, 3600)
            got = {n: metrics(test, [f"sim:{t / f'{n}.toml'}"], db, args, 3600) for n in twins}
            for fig in HELD_OUT[test]:
                row = {"test": test, "figure": fig, "hidden": h.get(fig)}
                for n in twins:
                    v = got[n].get(fig)
                    row[n] = v
                    row[f"{n}_error"] = None if not row["hidden"] or v is None else (v - row["hidden"]) / row["hidden"]
                rows.append(row)
    print(f"\n{'test':12s} {'figure':28s} {'hidden':>10s} {'served twin':>12s} {'error':>8s} {'virtual twin':>12s} {'error':>8s}")
    for x in rows:
        cells = "".join(f" {x[n] or 0:12.4g} " + ("       -" if x[f"{n}_error"] is None else f"{100 * x[f'{n}_error']:+7.1f}%")
                        for n in twins)
        print(f"{x['test']:12s} {x['figure']:28s} {x['hidden'] or 0:10.4g}{cells}")
    within = {n: sum(x[f"{n}_error"] is not None and abs(x[f"{n}_error"]) <= WITHIN for x in rows) for n in twins}
    print("\n" + "; ".join(f"{n} twin: {k} of {len(rows)} held-out figures within {100 * WITHIN:.0f} %"
                           for n, k in within.items()) + f"  ({load()})")
    if a.json:
        a.json.write_text(json.dumps({"hidden": hidden, "served_s": round(served_s), "late": lag.get("late"),
                                      "lag_requests": lag.get("lag_requests"), "twins": twins, "rows": rows,
                                      "within": within}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
