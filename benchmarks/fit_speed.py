"""`ssdlab fit` speed and determinism on a 256 GB drive: the generic TLC class with perturbed
times, cache and spare area runs the fingerprint at its defaults; the fit from that run
alone (default trials, cross-validation on) is timed (target: <= 10 min on 2 cores) and its
figures counted; then a short fit runs with and without --ray, which must write the same twin.

    python benchmarks/fit_speed.py [--trials 400] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "python"), str(ROOT / "tests"), str(ROOT / "tests" / "fit")]
# each command in a fresh child process: a fork of the tests' warm server (clirun) is not
# this process's child, so RUSAGE_CHILDREN would not count its CPU
os.environ["SSDLAB_TEST_FRESH_CLI"] = "1"

from clirun import cli  # noqa: E402
from closedloop import perturbed, sets  # noqa: E402
from docsection import load  # noqa: E402


def cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--trials", default="400")
    ap.add_argument("--identity-only", action="store_true", help="only the --ray vs local workers check")
    ap.add_argument("--keep", type=Path, help="a directory to keep the timed fit's --json (fit.json) in")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "r.sqlite"
        hidden = perturbed("tlc-256", 2)
        t0, c0 = time.time(), cpu()
        fp = json.loads(cli("run", "fingerprint", "--drive", "sim:tlc-256", *sets(hidden), "--db", str(db), "--json",
                            timeout=3600, check=True).stdout)
        print(f"fingerprint of a 256 GB drive: {time.time() - t0:.0f} s wall, {cpu() - c0:.0f} s CPU ({load()})")
        if not a.identity_only:
            t0, c0 = time.time(), cpu()
            os.environ["XDG_STATE_HOME"] = f"{tmp}/state-timed"  # from scratch: no trial an earlier fit kept
            out = cli("fit", "--runs", str(fp["run_id"]), "--db", str(db), "--out", f"{tmp}/t.toml",
                      "--trials", a.trials, "--json", timeout=6 * 3600, check=True).stdout
            wall, used = time.time() - t0, cpu() - c0
            doc = json.loads(out)
            if a.keep:
                a.keep.mkdir(parents=True, exist_ok=True)
                (a.keep / "fit.json").write_text(out)
            # the fit's time is its trials' CPU over the workers, plus what they sat idle
            cores = len(os.sched_getaffinity(0))
            print(f"fit (trials {doc['trials']}, cross-validation on): {wall:.0f} s wall, {used:.0f} s CPU "
                  f"(workers idle {max(0.0, cores * wall - used):.0f} of {cores * wall:.0f} worker-seconds); "
                  f"{doc['passed']} of {doc['total']} figures within tolerance; "
                  f"{sum(h['passed'] for h in doc['crossval'])} of {len(doc['crossval'])} held-back figures predicted "
                  f"within their tolerance; target <= 600 s: {'met' if wall <= 600 else 'NOT met'}")
            print("  stages: " + ", ".join(f"{k} {v['seconds']:.0f} s ({v['trials_run']} trials run)"
                                          for k, v in doc["stages"].items()))
            print("  search: " + ", ".join(f"{p['phase']} {p['trials']} (loss {p['loss']}, {p['failing']} failing)"
                                          for p in doc["search_phases"]))
        short = ["--runs", str(fp["run_id"]), "--db", str(db), "--trials", "24", "--no-crossval", "--json"]
        # each its own trial record: --ray runs every trial itself, none taken from the local fit's
        os.environ["XDG_STATE_HOME"] = f"{tmp}/state-local"
        cli("fit", *short, "--out", f"{tmp}/local.toml", timeout=3600, check=True)
        os.environ["XDG_STATE_HOME"] = f"{tmp}/state-ray"
        cli("fit", *short, "--ray", "--out", f"{tmp}/ray.toml", timeout=3600, check=True)
        same = (Path(tmp) / "local.toml").read_text().replace("twin-local", "x") == \
            (Path(tmp) / "ray.toml").read_text().replace("twin-ray", "x")
        print(f"--ray writes the same twin as local workers: {same} ({load()})")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
