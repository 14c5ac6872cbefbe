"""The jobs users wait for, each timed on this build (A) and on a baseline build (B) in turn,
A B B A A B ..., so that the machine's drift cancels in the ratio A/B (taken pair by pair, the
median shown). CPU seconds (user + system of the command and its workers) are the steadier
figure on a shared machine; the load average is printed with each row.

Rows and targets (docs/performance.md, "Jobs"):

- `ssdlab review --drive sim:tlc-256`: <= 15 s wall on 2 cores;
- its critical path, `ssdlab run idle --drive sim:tlc-256`: <= 4 s CPU;
- `ssdlab validate` (every profile, every figure): <= 3 min wall;
- `ssdlab run trace` of a 1 M-line CSV (4 KiB random, 70 % reads, 200 K I/Os a second
  offered), parse + simulate + store: >= 1 M I/Os per wall second;
- `ssdlab serve` over NBD, 4 KiB random writes at QD16 (fio's nbd engine): >= 40 K IOPS;
- the consistency test of a 1 TB drive (benchmarks/sim_speed.py): <= 10 s wall.

The baseline is the build of a git commit (`--base REF`, default the commit before HEAD; make
bench: BASE=):
its Rust extension and nbdkit plugin are built once into target/bench-base/COMMIT (a
detached worktree of the commit, removed afterwards, built with the flags of that commit's
`make build`) and its Python package is that commit's. `--base none` times this build alone.

    python benchmarks/jobs.py [--base REF] [--only review,idle,...] [--runs N]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PY = sys.executable
ONE_TB = ["user_capacity_gb=1024", "nand.dies_per_channel=4", "slc.dynamic_max_gb=96"]
TRACE_IOS = 1_000_000


@dataclass
class Build:
    name: str
    env: dict[str, str]  # PYTHONPATH and the nbdkit plugin of this build


def git(*args: str, cwd: Path = ROOT) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout.strip()


def base_build(ref: str) -> Build:
    """The build of commit `ref`, made once and kept in target/bench-base/COMMIT."""
    commit = git("rev-parse", "--verify", f"{ref}^{{commit}}")
    out = ROOT / "target" / "bench-base" / commit
    pkg, plugin = out / "python", out / "libssdsim_nbd.so"
    if not (pkg / "ssdlab" / "_sim.abi3.so").is_file() or not plugin.is_file():
        print(f"# building the baseline {ref} ({commit[:10]}) into {out}", flush=True)
        with tempfile.TemporaryDirectory(prefix="ssdlab-bench-base-") as tmp:
            wt = Path(tmp) / "src"
            git("worktree", "add", "--detach", str(wt), commit)
            try:
                subprocess.run(["cargo", "build", "--release", "--quiet", "-p", "ssdsim-py", "-p", "ssdsim-nbd",
                                "--target-dir", str(ROOT / "target" / "bench-base" / "cargo")],
                               cwd=wt, check=True, env={**os.environ, "RUSTFLAGS": rustflags(wt)})
                if pkg.exists():
                    shutil.rmtree(pkg)
                shutil.copytree(wt / "python" / "ssdlab", pkg / "ssdlab",
                                ignore=shutil.ignore_patterns("__pycache__", "*.so"))
                lib = ROOT / "target" / "bench-base" / "cargo" / "release"
                shutil.copy(lib / "lib_sim.so", pkg / "ssdlab" / "_sim.abi3.so")
                shutil.copy(lib / "libssdsim_nbd.so", plugin)
            finally:
                git("worktree", "remove", "--force", str(wt))
    return Build(f"{ref} ({commit[:10]})", {"PYTHONPATH": str(pkg), "SSDLAB_NBD_PLUGIN": str(plugin)})


def rustflags(src: Path) -> str:
    """The release build's flags of the checkout `src`, as its `make build` sets them (its
    profile-guided optimisation; none before the checkout had tools/rustflags.sh)."""
    tool = src / "tools" / "rustflags.sh"
    if not tool.is_file():
        return ""
    return subprocess.run([str(tool)], check=True, capture_output=True, text=True).stdout.strip()


def compiled(pkg: Path) -> None:
    """Bytecode for the package, as `make build` writes it: where PYTHONDONTWRITEBYTECODE is
    set, a package without it compiles every module again on each start (0.1-0.2 s)."""
    subprocess.run([PY, "-m", "compileall", "-q", str(pkg / "ssdlab")], check=True)


def this_build() -> Build:
    return Build("this build", {"PYTHONPATH": str(ROOT / "python"),
                                "SSDLAB_NBD_PLUGIN": str(ROOT / "target" / "release" / "libssdsim_nbd.so")})


def cpu_children() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def timed(build: Build, args: list[str], cwd: Path) -> tuple[float, float, str]:
    """Wall and CPU seconds of one command under `build`, and what it printed; a command that
    fails stops the run (timing it would time its failure: a missing module takes 0.05 s)."""
    env = {**os.environ, **build.env}
    c0, t0 = cpu_children(), time.perf_counter()
    p = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True)
    wall, cpu = time.perf_counter() - t0, cpu_children() - c0
    if p.returncode != 0:
        sys.exit(f"{' '.join(args)} failed ({p.returncode}) under {build.name}: {p.stderr.strip()[-800:]}")
    return wall, cpu, p.stdout


def load() -> float:
    return os.getloadavg()[0]


def ssdlab(*args: str) -> list[str]:
    return [PY, "-m", "ssdlab.cli", *args]


def trace_csv(path: Path) -> None:
    """TRACE_IOS lines of 4 KiB random I/O over 256 GB, 70 % reads, one every 5 us."""
    import numpy as np

    rng = np.random.default_rng(1)
    off = rng.integers(0, 256 * 10**9 // 4096, TRACE_IOS) * 4096
    op = np.where(rng.random(TRACE_IOS) < 0.7, "read", "write")
    with open(path, "w") as f:
        f.write("time_us,op,offset_bytes,length_bytes\n")
        f.writelines(f"{i * 5},{o},{x},4096\n" for i, (o, x) in enumerate(zip(op, off)))


def row_commands(tmp: Path) -> dict[str, tuple[list[str], str]]:
    """Each row's command and what its figure is."""
    def db(name: str) -> list[str]:
        return ["--db", str(tmp / f"{name}.sqlite")]

    return {
        "review": (ssdlab("review", "--drive", "sim:tlc-256", *db("review"), "-o", str(tmp / "rep"), "--json"),
                   "wall s (target <= 15 on 2 cores)"),
        "idle": (ssdlab("run", "idle", "--drive", "sim:tlc-256", *db("idle"), "--json"),
                 "CPU s (target <= 4)"),
        "validate": (ssdlab("validate", "--json"), "wall s (target <= 180)"),
        "trace": (ssdlab("run", "trace", "--drive", "sim:tlc-256", "--trace", str(tmp / "t.csv"), *db("trace"),
                         "--json"), f"I/Os per wall s, {TRACE_IOS:,} I/Os (target >= 1 M)"),
        "serve": ([PY, str(ROOT / "benchmarks" / "serve_speed.py"), "--one", "randwrite", "16"],
                  "served IOPS, 4 KiB random write QD16 (target >= 40 K)"),
        "consistency-1tb": ([PY, str(ROOT / "benchmarks" / "sim_speed.py"), "--one", "consistency",
                             json.dumps(ONE_TB)], "wall s (target <= 10)"),
    }


def figure(row: str, wall: float, cpu: float, out: str) -> float:
    if row == "idle":
        return cpu
    if row == "trace":
        return TRACE_IOS / wall
    if row == "serve":
        return float(json.loads(out)["iops"])
    if row == "consistency-1tb":
        return float(json.loads(out)["wall_s"])
    return wall


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--base", default="HEAD~1", help="git ref of the baseline build, or 'none'")
    ap.add_argument("--only", default="review,idle,validate,trace,serve,consistency-1tb")
    ap.add_argument("--runs", type=int, default=3, help="pairs per row (validate: one)")
    a = ap.parse_args()
    builds = [this_build()] + ([] if a.base == "none" else [base_build(a.base)])
    for b in builds:
        compiled(Path(b.env["PYTHONPATH"]))
    print(f"# jobs: A = {builds[0].name}" + (f", B = {builds[1].name}" if len(builds) > 1 else "")
          + f"; {len(os.sched_getaffinity(0))} cores; figures are medians, A/B the median of the "
          "pairs' ratios", flush=True)
    with tempfile.TemporaryDirectory(prefix="ssdlab-bench-jobs-") as d:
        tmp = Path(d)
        rows = row_commands(tmp)
        for name in a.only.split(","):
            args, what = rows[name]
            if name == "trace" and not (tmp / "t.csv").exists():
                trace_csv(tmp / "t.csv")
            runs = 1 if name == "validate" else a.runs
            got: list[list[tuple[float, float, float]]] = [[] for _ in builds]
            loads = [load()]
            for k in range(runs):
                # A B, then B A: a run after a pause (memory the host took back) or after the
                # other build's run costs differently, and neither build always goes first
                for i in (range(len(builds)) if k % 2 == 0 else reversed(range(len(builds)))):
                    b = builds[i]
                    for f in tmp.glob("*.sqlite*"):
                        f.unlink()
                    wall, cpu, out = timed(b, args, tmp)
                    got[i].append((figure(name, wall, cpu, out), wall, cpu))
                    loads.append(load())
            med = [tuple(statistics.median(x[k] for x in g) for k in range(3)) for g in got]
            line = (f"{name:<16} {what}: A {med[0][0]:,.2f} ({med[0][1]:.2f} s wall, {med[0][2]:.2f} s CPU)")
            if len(builds) > 1:
                ratio = statistics.median(x[0] / y[0] for x, y in zip(got[0], got[1]))
                line += (f"  B {med[1][0]:,.2f} ({med[1][1]:.2f} s wall, {med[1][2]:.2f} s CPU)"
                         f"  A/B {ratio:.3f}")
            print(line + f"  n={runs}  load {min(loads):.1f}-{max(loads):.1f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
