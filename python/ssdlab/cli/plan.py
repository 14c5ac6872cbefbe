"""`--plan`: what `run TEST` or a whole `review` would do, running nothing. A simulated
drive shows its phases; a real drive its safety verdict and an estimate of how long it
takes first, its device once, then its phases a line each (repeats as one line); its own
plan in full (every fio job file and command) with `run TEST --plan --fio-jobs`."""

from __future__ import annotations

import itertools
import re
import shlex
import sys
from typing import Any

from ..errors import printable
from .output import emit_table, print_json
from ..methodology import Options
from ..phase import Phase, flat
from ..runner import plan_items
from ..targets.fio import memory

# writes that end on a byte count (a fill) timed at a speed most drives hold past their
# cache; a drive's own speed is known only once it ran (pts estimates the same way)
ASSUMED_MBPS = 500.0


def drive_plans(test: str, drv: list[tuple[str, Any]], opts: Options) -> list[dict]:
    """`run --plan --json`'s "plan": per drive {"drive", "capacity", "phases"}, and for a
    real drive "commands", "safety", "estimate" and "fio_memory"."""
    plans = []
    for spec, target in drv:
        cap = target.identify().capacity
        items = plan_items(test, cap, opts)
        phases = flat(items)
        plan: dict[str, Any] = {"drive": spec, "capacity": cap,
                                "phases": [p.resolve(cap) if p.kind in ("io", "trim") else p.model_dump()
                                           for p in phases]}
        # real drives: the fio jobs and commands they would run; the device's names in them (a
        # loop device's file, a model) are the device's or its owner's, which never drive the terminal
        commands = printable(target.plan(items), keep="\n")
        if commands:
            plan.update(commands=commands, safety=plan_safety(commands), estimate=estimate(phases),
                        fio_memory=fio_memory(phases, commands))
        plans.append(plan)
    return plans


FIO_JOBS_HINT = "# every phase's fio job file and command: the same command with --fio-jobs"


def print_plan(test: str, drv: list[tuple[str, Any]], opts: Options, json_out: bool,
               fio_jobs: bool = False) -> None:
    """`run TEST --plan`; `fio_jobs`: a real drive's own plan in full (--json always has it)."""
    plans = drive_plans(test, drv, opts)
    if json_out:
        print_json({"test": test, "plan": plans})
    else:
        show(test, plans, fio_jobs)


def show(test: str, plans: list[dict], fio_jobs: bool = False) -> None:
    """Per drive: a real one's safety line and estimate, its device lines and where its fio
    jobs are shown (`fio_jobs`: instead, its own plan in full: every job file and command);
    then the phase table."""
    for p in plans:
        if "commands" in p and fio_jobs:
            sys.stdout.write(p["commands"] + f"# estimate: {estimate_text(p['estimate'])}\n")
            continue
        if "commands" in p:
            verdict = safety_line(p["commands"].splitlines())
            for line in [verdict] if verdict else []:
                print(line)
            print(f"# estimate: {estimate_text(p['estimate'])}")
            mem = memory_line(p["commands"].splitlines())
            for line in ([mem] if mem else []) + device_lines(p["commands"]):
                print(line)
            print(FIO_JOBS_HINT)
        emit_table(f"{test} on {p['drive']}", ["#", "name", "kind", "what"], phase_rows(p["phases"]))


def print_review_plan(runs: list[tuple[str, Options, list[tuple[str, Any]]]], json_out: bool) -> None:
    """`review --plan`: every run the review makes (test, options and drives, in order),
    each planned as `run TEST --plan` plans it, then per real drive the verdict over all
    of them and the estimate of the whole review."""
    tests: list[dict[str, Any]] = [{"test": test, "plan": drive_plans(test, drv, opts)} for test, opts, drv in runs]
    by_drive: dict[str, list[tuple[str, dict]]] = {}
    for t in tests:
        for p in t["plan"]:
            if "safety" in p:
                by_drive.setdefault(p["drive"], []).append((t["test"], p))
    drives = []
    for spec, mine in by_drive.items():
        refused = [f"{test}: {p['safety']['refusal']}" for test, p in mine if not p["safety"]["allowed"]]
        drives.append({"drive": spec, "capacity": mine[0][1]["capacity"],
                       "safety": {"allowed": not refused, "writes": any(p["safety"]["writes"] for _, p in mine),
                                  "refusal": refused[0] if refused else None},
                       "estimate": total([p["estimate"] for _, p in mine]),
                       "fio_memory": largest_memory([(test, p["fio_memory"]) for test, p in mine])})
    if json_out:
        print_json({"tests": tests, "drives": drives})
    else:
        show_review(tests, drives)


def show_review(tests: list[dict], drives: list[dict]) -> None:
    """The review's plan as a reviewer reads it to decide whether to start: per real drive
    its verdict, device and estimate once at the top (the same device for every test);
    then each test's phases, a line each, and its estimate. One test's commands and fio
    job files are `run TEST --plan --fio-jobs`'s (--json carries them all)."""
    common: dict[str, str] = {}  # per real drive: its first test's safety line
    for d in drives:
        verdict = ("a review would be REFUSED: " + d["safety"]["refusal"] if not d["safety"]["allowed"]
                   else "writing is allowed" if d["safety"]["writes"] else "read-only phases")
        print(f"# ---- review of {d['drive']}: {verdict}; estimate: {estimate_text(d['estimate'])}")
        print(memory_text(d["fio_memory"]))
        commands = next(p["commands"] for t in tests for p in t["plan"] if p["drive"] == d["drive"])
        common[d["drive"]] = safety_line(commands.splitlines())
        for line in device_lines(commands):
            print(line)
        print(f"# each test's commands and fio job files: ssdlab run TEST --drive {shlex.quote(d['drive'])} "
              "--plan --fio-jobs, with the review's options")
    for t in tests:
        print(f"# ---- review: {t['test']}")
        for p in t["plan"]:
            emit_table(f"{t['test']} on {p['drive']}", ["#", "name", "kind", "what"], phase_rows(p["phases"]))
            if "commands" in p:
                own = safety_line(p["commands"].splitlines())
                if own != common.get(p["drive"]):  # e.g. a read-only test of a writing review
                    print(own)
                print(f"# estimate: {estimate_text(p['estimate'])}")
                mem = memory_line(p["commands"].splitlines())
                if mem:
                    print(mem)


def phase_rows(phases: list[dict]) -> list[list[Any]]:
    """A table row per phase, the repeats of one (NAME#0, NAME#1, ... alike) as one row
    `NAME#0..#5`: a quick test repeats each of its tests; and a cycle of phases repeated
    (a quick test's AS SSD part: its phases, then again, numbered 1 to 5) as its first
    cycle and one row for the rest: `95..134  repeat #2..#5    the 10 phases 85..94 again,
    4 more times` (the first column: the phases it stands for)."""
    rows: list[list[Any]] = []
    for i, ph in enumerate(phases):
        name, what = ph["name"], describe(ph)
        base, _, k = (name or "").rpartition("#")
        if rows and base and k.isdigit() and str(rows[-1][1]).startswith(base + "#") and rows[-1][2:] == [ph["kind"], what]:
            rows[-1][1] = f"{rows[-1][1].split('..')[0]}..#{k}"
            continue
        rows.append([i, name, ph["kind"], what])
    return _cycles(rows, len(phases))


def _cycle_key(row: list[Any]) -> tuple:
    """A row as its cycle's rows compare: its name without its cycle's number."""
    return (_NUMBERED.sub("", str(row[1] or "")), row[2], row[3])


_NUMBERED = re.compile(r"\d+$")


def _cycles(rows: list[list[Any]], n_phases: int) -> list[list[Any]]:
    """Rows with each run of a repeated cycle (of 2 or more rows) as its first cycle and one
    row for the others; where cycles of several lengths repeat, the one that covers most."""
    keys = [_cycle_key(r) for r in rows]
    out: list[list[Any]] = []
    j = 0
    while j < len(rows):
        best_len, best_times = 0, 1
        for size in range(2, (len(rows) - j) // 2 + 1):
            times = 1
            while keys[j + times * size:j + (times + 1) * size] == keys[j:j + size]:
                times += 1
            if times > 1 and size * times > best_len * best_times:
                best_len, best_times = size, times
        if not best_len:
            out.append(rows[j])
            j += 1
            continue
        out += rows[j:j + best_len]
        after = j + best_len * best_times
        first, last = rows[j + best_len][0], (rows[after][0] if after < len(rows) else n_phases) - 1
        nums = [_NUMBERED.search(str(rows[j + c * best_len][1] or "")) for c in (1, best_times - 1)]
        name = "repeat" + (f" #{nums[0].group()}..#{nums[1].group()}" if all(nums) else "")  # type: ignore[union-attr]
        more = best_times - 1
        out.append([f"{first}..{last}", name, "",
                    f"the {best_len} phases {rows[j][0]}..{first - 1} again, {more} more time{'s' if more != 1 else ''}"])
        j = after
    return out


SHOWN_POINTS = 100  # rows of `sweep --plan`'s table; --json lists every point


def sweep_plan(grid: Any) -> dict:
    """`sweep --plan --json`: the grid's points, each with its drive's capacity and the
    estimate of its phases (as `run --plan` estimates a real drive's), and their total."""
    from ..sweep import capacities

    plan = []
    for point, cap in zip(grid.points(), capacities(grid)):
        phases = flat(plan_items(grid.test, cap, grid.options(point)))
        plan.append({"point": point, "capacity": cap, "estimate": estimate(phases)})
    return {"sweep": grid.id, "test": grid.test, "points": len(plan),
            "axes": {k: len(v) for k, v in grid.axes.items()},
            "estimate": total([p["estimate"] for p in plan]), "plan": plan}


def print_sweep_plan(grid: Any, json_out: bool) -> None:
    doc = sweep_plan(grid)
    if json_out:
        print_json(doc)
        return
    names = grid.swept or ["drive"]  # as the sweep's own table: the axes that vary
    axes = " x ".join(f"{k} {doc['axes'][k]}" for k in names)
    print(f"# sweep {doc['sweep']} {doc['test']}: {doc['points']} point{'s' if doc['points'] != 1 else ''} "
          f"({axes}); nothing run or stored")
    rows = [[p["point"][k] for k in names] + [p["capacity"] / 1e9, duration(p["estimate"]["seconds"])]
            for p in doc["plan"][:SHOWN_POINTS]]
    emit_table("points", names + ["capacity_gb", "estimate"], rows)
    if doc["points"] > SHOWN_POINTS:
        print(f"# ... and {doc['points'] - SHOWN_POINTS} more points (--json lists every one)")
    # a simulated drive runs in virtual time: this is the drives' time, not the sweep's
    print(f"# estimate: drive time of all points {estimate_text(doc['estimate'])}; the simulator "
          "runs it in virtual time, in far less wall time")


DEVICE_NOTES = ("# purge method: ", "# write cache: ")  # what a phase's plan says of the device, and why


def device_lines(commands: str) -> list[str]:
    """A real drive's plan's lines about its device (the comments before its phases, but
    its safety and fio memory lines: a plan shows its verdict first), its purge method and, where a phase
    would leave the write cache as it is, why: each once."""
    lines = commands.splitlines()
    head = list(itertools.takewhile(lambda x: x.startswith("#"), lines))
    notes = [next(x for x in lines if x.startswith(n)) for n in DEVICE_NOTES if any(x.startswith(n) for x in lines)]
    return [x for x in head if not x.startswith(("# safety: ", memory.PLAN_PREFIX))] + notes


def safety_line(lines: list[str]) -> str:
    """A real drive's plan's `# safety:` line ("" when it has none)."""
    return next((x for x in lines if x.startswith("# safety: ")), "")


def plan_safety(commands: str) -> dict:
    """A real drive's verdict, from its plan's `# safety:` line (local and remote plans
    alike): {"allowed", "writes", "refusal"} (refusal: the one line a run would print)."""
    line = safety_line(commands.splitlines())
    refused = line.startswith("# safety: a run would be REFUSED: ")
    return {"allowed": bool(line) and not refused, "writes": "read-only" not in line,
            "refusal": line.split("REFUSED: ", 1)[1] if refused else None}


def memory_line(lines: list[str]) -> str:
    """A real drive's plan's `# fio memory:` line ("" when it has none)."""
    return next((x for x in lines if x.startswith(memory.PLAN_PREFIX)), "")


def fio_memory(phases: list[Phase], commands: str) -> dict:
    """fio's memory for the largest io phase (targets/fio/memory.py's estimate: its I/O
    buffers and the logs it keeps): {"bytes", "phase", "allowed", "refusal"}; the verdict
    from the plan's `# fio memory:` line (the drive's host checks, local or remote; allowed
    None when the plan has no such line)."""
    big = memory.largest(phases)
    line = memory_line(commands.splitlines())
    refused = line.startswith(memory.PLAN_REFUSED)
    return {"bytes": big[1] if big else 0.0, "phase": (big[0].name or big[0].kind) if big else None,
            "allowed": (not refused) if line else None,
            "refusal": line[len(memory.PLAN_REFUSED):] if refused else None}


def largest_memory(per_test: list[tuple[str, dict]]) -> dict:
    """A review's fio memory on one drive: its largest phase over every test (named TEST:
    PHASE), and the first test's refusal."""
    test, big = max(per_test, key=lambda x: x[1]["bytes"])
    refused = [f"{t}: {m['refusal']}" for t, m in per_test if m["refusal"]]
    known = [m["allowed"] for _, m in per_test if m["allowed"] is not None]
    return {"bytes": big["bytes"], "phase": f"{test}: {big['phase']}" if big["phase"] else None,
            "allowed": all(known) if known else None, "refusal": refused[0] if refused else None}


def memory_text(m: dict) -> str:
    if m["refusal"]:
        return f"{memory.PLAN_REFUSED}{m['refusal']}"
    if not m["phase"]:
        return f"{memory.PLAN_PREFIX}no io phase, no fio job"
    return f"{memory.PLAN_PREFIX}about {memory.size(m['bytes'])} for the largest phase ({m['phase']})"


def estimate(phases: list[Phase]) -> dict:
    """About how long the phases take: {"seconds", "timed_s", "bytes", "assumed_mbps",
    "untimed_phases"}. Phases that run for a time (idle included) count their seconds, those
    that end on a byte count their bytes at ASSUMED_MBPS; a purge, a discard, a trace or a
    job file takes what the drive takes, and is only counted."""
    timed, nbytes, untimed = 0.0, 0, 0
    for p in phases:
        if p.kind == "idle":
            timed += float(p.seconds or 0.0)
        elif p.kind == "io" and p.stop_seconds is not None:
            timed += float(p.stop_seconds)  # stops on its seconds, if not sooner on its bytes
        elif p.kind == "io":
            nbytes += int(p.stop_bytes or 0)
        elif p.kind != "write_cache":  # a setting, no time
            untimed += 1
    return {"seconds": timed + nbytes / (ASSUMED_MBPS * 1e6), "timed_s": timed, "bytes": nbytes,
            "assumed_mbps": ASSUMED_MBPS, "untimed_phases": untimed}


def total(estimates: list[dict]) -> dict:
    out = {k: sum(e[k] for e in estimates) for k in ("seconds", "timed_s", "bytes", "untimed_phases")}
    return {**out, "assumed_mbps": ASSUMED_MBPS}


def estimate_text(e: dict) -> str:
    untimed = e["untimed_phases"]
    return (f"about {duration(e['seconds'])} ({duration(e['timed_s'])} of timed phases, "
            f"{e['bytes'] / 1e9:.3g} GB to a byte count at {e['assumed_mbps']:g} MB/s"
            + (f", {untimed} purge, discard or trace phase{'s' if untimed != 1 else ''} not counted" if untimed else "")
            + ")")


def duration(s: float) -> str:
    return f"{s / 3600:.1f} h" if s >= 3600 else f"{s / 60:.0f} min" if s >= 60 else f"{s:.0f} s"


def describe(ph: dict) -> str:
    """A phase in a few words: what matters for its kind."""
    if ph["kind"] == "idle":
        return f"{ph['seconds']:.4g} s"
    if ph["kind"] == "purge":
        return "whole drive"
    if ph["kind"] == "write_cache":
        return f"write cache {'on' if ph['write_cache'] else 'off'}"
    if ph["kind"] == "fiojob":
        n = len(ph["fiojob"]["jobs"])
        return f"{n} job{'s' if n != 1 else ''} of {ph['fiojob']['file']}"
    if ph["kind"] == "replay":
        r = ph["replay"]
        how = (f"QD{r['queue_depth']}" if r["queue_depth"] else f"x{r['speed']:g}"
               + (f" idle cap {r['idle_cap_s'] * 1e3:g} ms" if r["idle_cap_s"] is not None else ""))
        return f"trace {r['trace']} ({r['format'] or 'detected'}) {how}" + (" wrapped" if r["wrap"] else "")
    rng = f"bytes {ph['offset']}..{ph['offset'] + ph['length']}"
    if ph["kind"] == "trim":
        return rng
    stop = " ".join(x for x in (ph["stop_bytes"] and f"stop {ph['stop_bytes']} B",
                                ph["stop_seconds"] and f"stop {ph['stop_seconds']:g} s") if x)
    return (f"{ph['pattern']} {ph['read_pct']}% read {ph['block_size'] // 1024} KiB "
            f"QD{ph['queue_depth']}x{ph['jobs']} {rng} {stop}")
