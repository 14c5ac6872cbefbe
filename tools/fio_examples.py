"""The table of docs/fio-examples.md: every job file of fio's examples/ directory run with
`ssdlab run fio` on a simulated drive, and its outcome (ran, with what it did, or refused
with its reason). fio's examples are not part of ssdlab: give a checkout's examples/ dir.

    nice -n 10 .venv/bin/python tools/fio_examples.py FIO_SOURCE/examples \\
        [--cap SECONDS] [--rows ROWS.jsonl] > docs/fio-examples.md

--cap: wall seconds an example may run before its row says it was still running (default
7200). --rows: a file of finished rows, kept as they finish, so an interrupted table resumes
where it stopped (a row is reused only for the same job file text and the same cap, whatever
build of ssdlab ran it: the table names the rows it did not run again, and a rows file is
emptied after a change of the simulator or the fio job compiler for the table to be this
build's throughout).
"""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

DRIVE = "sim:tlc-256"
DRIVE_TEXT = "a 256 GB drive"
LARGE = "sim:870qvo-4000"  # for jobs that address more than DRIVE holds
LARGE_TEXT = "a 4 TB drive"
PAST_END = "past the end of the drive"
CAP_S = 7200


def run(job: Path, drive: str, db: Path, cap: int) -> subprocess.CompletedProcess | None:
    exe = Path(sys.executable).parent / "ssdlab"
    try:
        return subprocess.run([str(exe), "run", "fio", str(job), "--drive", drive, "--db", str(db),
                               "--output-format", "json"], capture_output=True, text=True,
                              timeout=cap, cwd=job.parent)
    except subprocess.TimeoutExpired:
        return None


def refusal(job: Path, stderr: str) -> str:
    line = stderr.strip().splitlines()[-1].removeprefix("ssdlab: error: ")
    line = re.sub(re.escape(str(job)) + r":(\d+):", r"line \1:", line)
    return line.replace(str(job) + ": ", "").replace(str(job), job.name)


def outcome(job: Path, db: Path, cap: int) -> str:
    r, where = run(job, DRIVE, db, cap), ""
    if r is not None and r.returncode == 2 and PAST_END in r.stderr:
        first = refusal(job, r.stderr)
        r, where = run(job, LARGE, db, cap), f" on `{LARGE}` ({LARGE_TEXT}; on {DRIVE}: {first})"
    if r is None:
        return f"runs{where} (still running after {cap} s of wall time; not waited for)"
    if r.returncode == 2:
        return "refused" + where + ": " + refusal(job, r.stderr)
    if r.returncode != 0:
        return f"FAILED{where} (exit {r.returncode}): {r.stderr.strip().splitlines()[-1:]}"
    doc = json.loads(r.stdout)
    jobs = doc["jobs"]
    ios = sum(j[d]["total_ios"] for j in jobs for d in ("read", "write", "trim") if d in j)
    per = {d: sum(j[d]["total_ios"] for j in jobs if d in j) for d in ("read", "write", "trim")}
    split = ", ".join(f"{n:,} {d}s" for d, n in per.items() if n)  # a verify's reads among them
    secs = round(doc.get("ssdlab", {}).get("duration_s", 0.0), 3)  # the run's virtual time
    notes = [ln for ln in r.stderr.splitlines() if "note: accepted" in ln]
    note = " (with a note: " + notes[0].split(": ", 3)[-1] + ")" if notes else ""
    n = sum(int(j.get("jobs", 1)) for j in jobs)  # a group_reporting entry stands for its jobs
    failed = [j["jobname"] for j in jobs if j.get("error")]
    err = (f"; {', '.join(failed)} ended with fio's error EIO (its rate fell under rate_min / "
           "rate_iops_min)") if failed else ""
    what = f"{ios:,} I/Os ({split})" if sum(1 for v in per.values() if v) > 1 else f"{ios:,} I/Os"
    return f"runs{where}: {n} job{'s' if n != 1 else ''}, {what}, {secs:g} s of virtual time{err}{note}"


def fio_version(examples: Path) -> str:
    gen = examples.parent / "FIO-VERSION-GEN"
    if gen.is_file():
        m = re.search(r"DEF_VER=(\S+)", gen.read_text())
        if m:
            return m.group(1)
    return "fio"


def main(examples: Path, cap: int, rows_file: Path | None) -> None:
    done: dict[str, str] = {}
    if rows_file and rows_file.exists():
        for ln in rows_file.read_text().splitlines():
            x = json.loads(ln)
            done[x["key"]] = x["outcome"]
    earlier = set(done)  # rows an earlier run of this table wrote, not run again now
    kept: list[str] = []
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for f in sorted(examples.glob("*.fio")):
            key = f"{f.name}:{hashlib.sha256(f.read_bytes()).hexdigest()}:{cap}"
            if key in earlier:
                kept.append(f.name)
            if key not in done:
                done[key] = outcome(f, Path(tmp) / "r.sqlite", cap).replace("|", "/")
                if rows_file:
                    with rows_file.open("a") as out:
                        out.write(json.dumps({"key": key, "outcome": done[key]}) + "\n")
                print(f"{f.name}: {done[key]}", file=sys.stderr, flush=True)
            rows.append((f.name, done[key]))
    ran = sum(o.startswith("runs") and "still running" not in o for _, o in rows)
    running = sum("still running" in o for _, o in rows)
    large = sum(o.startswith(f"runs on `{LARGE}`") for _, o in rows)
    print("# fio's examples on a simulated drive\n")
    print(f"Each job file of fio's `examples/` directory ({fio_version(examples)} source) run with")
    print(f"`ssdlab run fio FILE --drive {DRIVE}` ({DRIVE_TEXT}, empty); a job that addresses more")
    print(f"than that drive holds is run on `{LARGE}` ({LARGE_TEXT}) and its row says so.")
    print(f"Generated by `tools/fio_examples.py` (each run given up to {cap} s of wall time).")
    print(f"Of {len(rows)} examples, {ran} ran to their end ({large} on the larger drive), "
          f"{running} were still running at the cap and {len(rows) - ran - running} were refused "
          "with the reason shown; `${VAR}` examples need their variables named (`--env NAME=VALUE`).")
    if kept:
        print(f"The rows of {len(kept)} examples were kept from an earlier run of this table (`--rows`), "
              f"not run again by the build that wrote it: {', '.join(kept)}.")
    print()
    print("| example | outcome |")
    print("|---|---|")
    for name, o in rows:
        print(f"| {name} | {o} |")


if __name__ == "__main__":
    args = sys.argv[1:]
    cap = int(args[args.index("--cap") + 1]) if "--cap" in args else CAP_S
    rows = Path(args[args.index("--rows") + 1]) if "--rows" in args else None
    main(Path(args[0]), cap, rows)
