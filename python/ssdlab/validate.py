"""Calibration check (`ssdlab validate`): the built-in profiles against the published figures
of methodology.md, the manufacturers' spec sheets, and behaviour no real drive shows (the
figures themselves are in `calibration/`).

Each figure names a drive, what a source gives (a value, passing within its tolerance, or a
range, passing inside it), which test measures it (the same methodology modules `ssdlab run`
uses, on the simulated drive) and how the number is read. A few figures compare two drives
(e.g. "same SLC share of capacity as the 128 GB"); those run the other drive too.

Runs are the tests as `ssdlab run` has them: fills, the review's 2000 s consistency runs,
the idle test with its 30 min idle, quick, and the fio jobs of published fio logs
(`ssdlab run fio`, calibration/jobs/). They go through executor.py to worker processes
(one per core, fewer when the drives' tables would not fit in memory together) so every
profile validates in minutes.

`python -m ssdlab.validate --markdown > docs/calibration.md` (or `ssdlab validate
--markdown`) regenerates the calibration page.
"""

from __future__ import annotations

import json
import math
import sys
import time
from pathlib import Path
from typing import Any, Callable

import numpy as np

from .calibration import TOLERANCE, Ctx, Figure, RunKey, all_figures, fio_logs, fmt, testbed_flags

# The figures (calibration/figures/<drive>.toml); a figure the current simulator cannot
# reach carries its reason there (`expected_failure`: shown in docs/calibration.md and run as
# strict xfails by the test suite, so a figure that starts to pass is noticed).
FIGURES: list[Figure] = all_figures()
XFAIL: dict[tuple[str, str], str] = {(f.drive, f.name): f.xfail for f in FIGURES if f.xfail}


def drives() -> list[str]:
    seen: list[str] = []
    for f in FIGURES:
        if f.drive not in seen:
            seen.append(f.drive)
    return seen


# ---- running ---------------------------------------------------------------------------------
def run_setup(drive: str, run: RunKey, seed: int = 42, overrides: tuple[str, ...] = (),
              profile_text: str | None = None, own: Any = None):
    """What a run builds its drive from and runs: (profile text, overrides, capacity, test,
    options); `run_one` says what the arguments are."""
    from .methodology import Options
    from .methodology.common import Paced
    from .profiles import load_text
    from .targets.sim import capacity

    test, spare, seconds, repeat, testbed = run
    interval = None
    if isinstance(own, Paced):  # a stored run's idle between tests, replayed
        interval, own = own.interval, None
    text = profile_text or load_text(drive)
    # the source's host first, then the what-if overrides of the whole validation
    ov = [*testbed, *overrides]
    cap = capacity(text, ov)
    job = fio_logs.job_file(test)
    opts = Options(spare=spare, seconds=seconds, repeat=repeat, interval=interval,
                   own=own if job is None else fio_job(job, cap, seed))
    return text, ov, cap, fio_logs.test_of(test), opts


def run_keys(drive: str, run: RunKey, seed: int = 42, overrides: tuple[str, ...] = (),
             profile_text: str | None = None, own: Any = None) -> list:
    """The drive states a run's phases pass through (targets/sim_state.py)."""
    from .runner import plan_phases
    from .targets.sim_state import StateKey, plan_keys

    text, ov, cap, test, opts = run_setup(drive, run, seed, overrides, profile_text, own)
    return plan_keys(StateKey.new(text, ov, seed), plan_phases(test, cap, opts), cap)


def run_group(runs: tuple[tuple[str, RunKey], ...], keep: dict, seed: int = 42,
              overrides: tuple[str, ...] = ()) -> list[dict]:
    """Runs that begin alike on one drive, one after another in this process, the later
    ones taking the drive states (`keep`) the earlier ones left (a worker's entry point)."""
    from .targets.sim_state import StateCache

    states = StateCache(keep)
    return [run_one(d, r, seed, overrides, states=states) for d, r in runs]


def run_one(drive: str, run: RunKey, seed: int = 42, overrides: tuple[str, ...] = (),
            profile_text: str | None = None, own: Any = None, states=None, on_start=None) -> dict:
    """Run one test on one built-in profile (or on `profile_text`, a profile of its own, e.g. a
    twin's; `own`: the test's own options) with `overrides` (key=value) if any: metrics,
    the segments of its last pass (fill, trim), capacity, and per I/O phase its largest latency and its seconds without
    a completed I/O. With `states` (a targets.sim_state.StateCache), phases a kept drive
    state holds come from it. `on_start`: walk_phases's (a fit's --minutes stops a run with it)."""
    from .methodology import get
    from .runner import walk_phases
    from .targets.sim import SimTarget

    text, ov, cap, name, opts = run_setup(drive, run, seed, overrides, profile_text, own)
    target = SimTarget(text, ov or None, seed=seed, states=states)
    the_test = get(name)
    t0 = time.time()
    try:
        results = walk_phases(the_test, target, cap, opts, on_start=on_start)
    finally:
        target.close()  # a drive state the group keeps is handed over
    metrics = the_test.analyze(results, opts)
    metrics.pop("repeats", None)
    out: dict[str, Any] = {"metrics": metrics, "capacity": cap, "wall_s": time.time() - t0,
                           "phases": {r.phase.name: phase_behaviour(r) for r in results if r.phase.kind == "io"}}
    if the_test.keeps_segments:  # the fill; the sequential pass after TRIM
        seg = results[-1].segments
        out["segments"] = {k: np.asarray(seg[k], dtype=float).tolist() for k in ("gb", "mbps", "t_s")}
    return out


def fio_job(job: Path, capacity: int, seed: int):
    """A source's fio job (calibration/jobs) compiled for the drive, on the filled drive."""
    from .fiojob.compile import compile_job
    from .methodology.fio_run import FioJobOptions

    return FioJobOptions.compiled(str(job), compile_job(job, capacity, seed, 0), "full")


def phase_behaviour(r) -> dict:
    iops = np.asarray(r.series.get("iops", []), dtype=float)
    return {"max_latency_ms": float(r.latency.get("max_us", math.nan)) / 1000.0,
            "zero_seconds": int((iops == 0).sum())}


def needed_runs(figs: list[Figure]) -> list[tuple[str, RunKey]]:
    jobs: list[tuple[str, RunKey]] = []
    for f in figs:
        for j in ((f.drive, f.run), *f.needs):
            if j not in jobs:
                jobs.append(j)
    return jobs


def cost(job: tuple[str, RunKey], memory: float) -> float:
    """Rough wall-time weight, to start the longest runs first: the test's cost at the
    drive's size."""
    from .methodology import get

    return get(fio_logs.test_of(job[1][0])).cost * memory


def run_all(jobs: list[tuple[str, RunKey]], workers: int | None = None,
            log: Callable[[str], None] | None = None,
            overrides: tuple[str, ...] = (), ray: str | None = None) -> dict[tuple[str, RunKey], dict]:
    """Run the jobs, longest first, through executor.py: `workers` local processes (one per
    core by default; never more at once than the drives' tables fit in 70 % of the memory
    available: two 4 TB drives need 16 GB), or Ray (`ray`: an address or "local"). Runs of
    one drive that begin alike (purge and fill) are one unit, which pays for those phases
    once (targets/sim_state.py)."""
    from .executor import Unit, cores, open_executor
    from .profiles import load_text
    from .targets.sim import table_bytes
    from .targets.sim_state import drives_at_once, share_groups

    mem = {d: table_bytes(load_text(d), list(overrides)) for d in {d for d, _ in jobs}}
    keys = [run_keys(d, r, 42, overrides) for d, r in jobs]
    groups, keep = share_groups(keys)
    units = []
    for g in groups:
        mine = {k: keep[k] for i in g for k in keys[i] if k in keep}
        runs = tuple(jobs[i] for i in g)
        d = runs[0][0]
        units.append(Unit(runs, run_group, (runs, mine, 42, overrides), memory=mem[d] * drives_at_once(mine, [keys[i] for i in g]),
                          cost=sum(cost(j, mem[j[0]]) for j in runs)))
    n = workers or min(len(units), cores()) or 1
    out: dict[tuple[str, RunKey], dict] = {}
    with open_executor(n, ray) as ex:
        for done in ex.run(units):
            if done.error is not None:  # done.ok, in a form mypy follows
                raise done.error
            for key, value in zip(done.key, done.value):
                out[key] = value
                if log:
                    log(f"{key[0]} {key[1][0]}: {value['wall_s']:.0f} s")
    return out


def select(drive_ids: list[str] | None, names: list[str] | None = None) -> list[Figure]:
    """The figures of `drive_ids` (all drives by default), only those named `names` if given:
    a calibrator working on one figure runs only what it needs."""
    figs = list(FIGURES)
    if drive_ids:
        known = drives()
        bad = [d for d in drive_ids if d not in known]
        if bad:
            raise ValueError(f"no figures for {', '.join(bad)}: validate knows {', '.join(known)}")
        figs = [f for f in figs if f.drive in drive_ids]
    if names:
        have = sorted({f.name for f in figs})
        bad = [n for n in names if n not in have]
        if bad:
            where = f" of {', '.join(drive_ids)}" if drive_ids else ""
            choices = (f"one of {', '.join(map(repr, have))}" if len(have) <= 30 else
                       f"one of {len(have)} names (`ssdlab validate --drive ID --json` lists a drive's)")
            raise ValueError(f"no figure {', '.join(map(repr, bad))} among the figures{where}: --figure takes {choices}")
        figs = [f for f in figs if f.name in names]
    return figs


def evaluate(figs: list[Figure], runs: dict) -> list[dict]:
    rows = []
    for f in figs:
        try:
            sim = f.measure(Ctx(f.drive, runs))
        except (KeyError, ValueError, TypeError):
            sim = None
        if sim is not None and not math.isfinite(sim):
            sim = None
        ok, err = f.check(sim)
        rows.append({
            "drive": f.drive, "figure": f.name, "published": f.published(),
            "published_value": f.value, "published_lo": f.lo, "published_hi": f.hi,
            "simulated": sim, "unit": f.unit, "error": err, "pass": ok,
            "test": f.run[0] + (f" --spare {f.run[1]:g}" if f.run[1] else "")
            + (f" {testbed_flags(f.run)}" if f.run[4] else ""),
            "how": f.how, "source": f.source, "kind": f.kind,
            "xfail": XFAIL.get((f.drive, f.name)),
        })
    return rows


def validate(drive_ids: list[str] | None = None, workers: int | None = None,
             log: Callable[[str], None] | None = None, overrides: list[str] | None = None,
             ray: str | None = None, names: list[str] | None = None) -> dict:
    """Run and check the figures of `drive_ids` (all by default; only those named `names` if
    given). `overrides` (key=value) change every profile first: what-if calibration against
    the published figures."""
    t0 = time.time()
    figs = select(drive_ids, names)
    ov = tuple(overrides or ())
    if ov:
        # A bad override fails here, in one line, before any long run starts (building
        # the smallest drive checks the profile).
        from .profiles import load_text
        from .targets.sim import SimTarget, table_bytes

        smallest = min({f.drive for f in figs}, key=lambda d: table_bytes(load_text(d)))
        SimTarget(load_text(smallest), list(ov))
    runs = run_all(needed_runs(figs), workers, log, ov, ray)
    rows = evaluate(figs, runs)
    passed = sum(r["pass"] for r in rows)
    return {"figures": rows, "passed": passed, "failed": len(rows) - passed,
            "total": len(rows), "wall_seconds": time.time() - t0,
            "tolerance": TOLERANCE, "overrides": list(ov)}


# ---- output ----------------------------------------------------------------------------------
HEADERS = ["drive", "figure", "published", "simulated", "error", "pass"]


def table_rows(doc: dict) -> list[list[str]]:
    out = []
    for r in doc["figures"]:
        unit = "" if r["unit"] in ("count", "ratio", "of capacity", "share of fill") else f" {r['unit']}"
        err = "-" if r["error"] is None else f"{100 * r['error']:+.1f} %"
        out.append([r["drive"], r["figure"], r["published"] + unit,
                    (fmt(r["simulated"]) + unit) if r["simulated"] is not None else "-",
                    err, "pass" if r["pass"] else "FAIL"])
    return out


SECTIONS = {
    "published": ("Published figures (methodology.md)",
                  "Each row is one figure of `methodology.md` (\"Published figures to calibrate "
                  "simulated profiles against\"), passing within +-15 % of a value or inside a range "
                  "(python/ssdlab/calibration/figures/<drive>.toml)."),
    "spec sheet": ("Spec sheets",
                   "The drive's rated sequential speeds (within +-15 %) and 4 KiB random IOPS "
                   "(within +-35 %) against CrystalDiskMark on the purged simulated drive; a series' "
                   "best figure is an upper bound, a generic profile's class a range "
                   "(python/ssdlab/calibration/figures/<drive>.toml, sources in docs/profiles.md)."),
    "latency": ("QD1 latency (published fio logs and a review's QD1 test)",
                "The source's own fio job, or a review's test written as one (python/ssdlab/calibration/jobs/), "
                "run on the filled simulated drive with `ssdlab run fio`: each percentile of fio's completion "
                "latency plus the source's mean submission latency, within +-15 %; a maximum, one rare event, "
                "within a factor of 2 (python/ssdlab/calibration/fio_logs.py, figures/<drive>.toml)."),
    "behaviour": ("No freezes",
                  "Over the fill and random-write phases of the consistency test (full drive and "
                  "25 % spare): the largest latency under 1 s and no second without a completed I/O."),
}


def markdown(doc: dict) -> str:
    lines = [
        "# Calibration: simulated profiles against published figures, spec sheets and behaviour",
        "",
        "Generated by `ssdlab validate --markdown > docs/calibration.md` (do not edit by hand).",
        "Every figure is measured on the built-in profile with the same test `ssdlab run` uses.",
        "Error: (simulated - published) / published; for a range, 0 inside it, else the",
        "distance to the nearest bound. How each profile was built (and which parameters are",
        "fitted to which figure) is in docs/profiles.md. The figures are in",
        "python/ssdlab/calibration/figures/<drive>.toml, one file per drive (format: docs/fit-evidence.md,",
        "\"Figures files\").",
        "",
        f"**{doc['passed']} of {doc['total']} figures pass, {doc['failed']} fail.**",
        *([f"Profiles changed with `--set {' '.join(doc['overrides'])}`: not the built-in ones."]
          if doc.get("overrides") else []),
    ]
    rows = table_rows(doc)
    for kind, (title, text) in SECTIONS.items():
        mine = [(r, row) for r, row in zip(doc["figures"], rows) if r.get("kind", "published") == kind]
        if not mine:
            continue
        passed = sum(r["pass"] for r, _ in mine)
        lines += ["", f"## {title}: {passed} of {len(mine)} pass", "", text, "",
                  "| drive | figure | published | simulated | error | pass |", "|---|---|---|---|---|---|"]
        lines += ["| " + " | ".join(c.replace("|", "\\|") for c in row) + " |" for _, row in mine]
    lines += ["", "## How each figure is measured", "",
              "| drive | figure | test and metric | source |", "|---|---|---|---|"]
    for r in doc["figures"]:
        lines.append(f"| {r['drive']} | {r['figure']} | {r['how']} | {r['source']} |")
    fails = [r for r in doc["figures"] if not r["pass"]]
    if fails:
        lines += ["", "## Failing figures", ""]
        for r in fails:
            why = r["xfail"] or "not explained"
            lines.append(f"- **{r['drive']} {r['figure']}**: {why}")
    lines.append("")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    import argparse
    ap = argparse.ArgumentParser(prog="python -m ssdlab.validate")
    ap.add_argument("--drive", action="append")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--markdown", action="store_true")
    ap.add_argument("--workers", type=int)
    a = ap.parse_args(argv)
    doc = validate(a.drive, a.workers, log=lambda s: print(s, file=sys.stderr))
    if a.json:
        print(json.dumps(doc, indent=1))
    elif a.markdown:
        print(markdown(doc))
    else:
        print("\t".join(HEADERS))
        for row in table_rows(doc):
            print("\t".join(row))
        print(f"# {doc['passed']}/{doc['total']} pass, {doc['wall_seconds']:.0f} s", file=sys.stderr)
    return 0 if doc["failed"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
