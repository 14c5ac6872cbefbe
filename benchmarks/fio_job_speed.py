"""`ssdlab run fio` speed, end to end (the command, compiling the job, the simulator, the
store): simulated I/Os per wall second for 4 KiB random jobs, one job and many (target
>= 1 M/s), and the wall time of fio's examples/fsx.fio job (its options: a 256 KiB region,
4 KiB random reads and writes at depth 1, no random map, 500 000 loops: 32 M I/Os; target
under 60 s). Also the simulator alone (Drive.run_fiojob), without the command around it.

    .venv/bin/python benchmarks/fio_job_speed.py [--quick]
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

JOBS = {
    "4k randread, 1 job, QD32": "[a]\nrw=randread\nbs=4k\niodepth=32\nnumber_ios={n}\n",
    "4k randwrite, 1 job, QD32": "[a]\nrw=randwrite\nbs=4k\niodepth=32\nnumber_ios={n}\n",
    "4k randread, 8 jobs x QD4": "[a]\nrw=randread\nbs=4k\niodepth=4\nnumjobs=8\nnumber_ios={n8}\n",
}
FSX = ("[file]\nioengine=libaio\niodepth=1\nrw=randrw\nsize=256k\nbs=4k\nnorandommap\n"
       "direct=1\nloops={loops}\n")


def cli(job: Path, db: Path) -> tuple[float, float, dict]:
    """Wall and CPU seconds of the command (CPU: what an unloaded machine's wall would be
    near; a shared machine's wall time is not the program's)."""
    exe = Path(sys.executable).parent / "ssdlab"
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    r = subprocess.run([str(exe), "run", "fio", str(job), "--drive", "sim:tlc-256", "--db", str(db),
                        "--output-format", "json"], capture_output=True, text=True)
    wall = time.perf_counter() - t
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    if r.returncode:
        sys.exit(r.stderr)
    cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    return wall, cpu, json.loads(r.stdout)


def ios(doc: dict) -> int:
    return sum(j[d]["total_ios"] for j in doc["jobs"] for d in ("read", "write", "trim"))


def simulator_only(body: str) -> tuple[float, float]:
    from ssdlab import _sim, profiles
    from ssdlab.fiojob.compile import compile_job

    with tempfile.TemporaryDirectory() as tmp:
        f = Path(tmp) / "j.fio"
        f.write_text(body)
        d = _sim.Drive(profiles.load_text("tlc-256"))
        spec = compile_job(f, int(d.info()["user_bytes"])).spec()
        t, c = time.perf_counter(), time.process_time()
        r = d.run_fiojob(spec)
        n = r["totals"]["ios"]
        return n / (time.perf_counter() - t), n / (time.process_time() - c)


def main() -> None:
    quick = "--quick" in sys.argv
    n = 2_000_000 if quick else 10_000_000
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        for name, body in JOBS.items():
            text = body.format(n=n, n8=n // 8)
            (tmp / "j.fio").write_text(text)
            wall, cpu, doc = cli(tmp / "j.fio", tmp / "r.sqlite")
            sw, sc = simulator_only(text)
            print(f"{name}: {ios(doc) / wall / 1e6:.2f} M simulated I/Os per wall second end to end "
                  f"({ios(doc):,} I/Os in {wall:.1f} s wall, {cpu:.1f} s CPU: "
                  f"{ios(doc) / cpu / 1e6:.2f} M per CPU second); simulator alone "
                  f"{sw / 1e6:.2f} M/s wall, {sc / 1e6:.2f} M per CPU second", flush=True)
        loops = 50_000 if quick else 500_000
        (tmp / "fsx.fio").write_text(FSX.format(loops=loops))
        wall, cpu, doc = cli(tmp / "fsx.fio", tmp / "r.sqlite")
        print(f"fsx.fio (loops={loops}): {wall:.1f} s wall, {cpu:.1f} s CPU for {ios(doc):,} I/Os "
              f"({ios(doc) / wall / 1e6:.2f} M/s; target under 60 s at loops=500000)")


if __name__ == "__main__":
    main()
