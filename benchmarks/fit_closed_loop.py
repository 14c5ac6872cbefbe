"""The closed loop of `ssdlab fit` in full (tests/fit/test_closed_loop.py is the short one):
for a DRAM-less HMB NVMe drive, a SATA MLC drive and a QLC drive, a hidden drive (the
built-in profile with every time drawn within +-30 %, another SLC cache size and spare
area) runs the fingerprint at its defaults; `ssdlab fit` sees that run alone (the whole
parameter space, the class the evidence suggests); twin and hidden drive then run the 2000 s
consistency test, CrystalDiskMark (quick), the idle test and a PCMark 8 trace, and every
figure must agree within 10 % (a consistency run of either drive that did not reach steady
state: both read over the same seconds, closedloop.same_window). Prints a table per drive and the totals; --results keeps each
drive's measurements (merged into the file), --update-docs writes the section of docs/fit-closed-loops.md
from them (--docs-only: without running anything).

    python benchmarks/fit_closed_loop.py [--drive bg4-128] [--trials 400] [--seed 1]
        [--results closed-loop.json] [--update-docs] [--docs-only]
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "python"), str(ROOT / "tests"), str(ROOT / "tests" / "fit")]

from closedloop import WITHIN, basis, closed_loop, held_rows, hidden_values, perturbed, table  # noqa: E402
from docsection import load, num, replace  # noqa: E402

from ssdlab.fit.profile_out import pinned_label  # noqa: E402
from ssdlab.fit.space import CHOICES  # noqa: E402

KINDS = {"bg4-128": "DRAM-less HMB NVMe (TLC)", "mx100-256": "SATA MLC", "qlc-pcie4-hmb-1000": "QLC (HMB NVMe)"}
HELD = {"consistency": [],
        "quick": ["--repeat", "1", "--seconds", "1", "--interval", "0"],
        "idle": [],
        "trace": ["--trace", "builtin:pcmark8-photoshop-light-like", "--state", "full"]}
# the consistency test's 1 % low is a few seconds' stalls of its 2000: one run of the hidden
# mx100-256 gives 5691, 7356, 6185, 6598 or 7070 by its seed (docs/fit-closed-loops.md), and the idle test's
# reads after 300 s of random writes move by up to 6 % between seeds of one drive (mx100-256's
# twin: 353, 374, 375 MB/s after idle), so their figures are each drive's mean over these seeds
SEEDS = {"consistency": (42, 1, 2, 3, 4), "idle": (42, 1, 2, 3, 4)}
HEADING = "## Closed loop"


def size_text(sc: dict | None) -> str:
    """What the trial size's correction did (fit --json: size_correction), as a clause."""
    if not sc:
        return ""
    return (f"the size correction took {sc['taken']} of {sc['rounds']} rounds (full-size loss "
            f"{sc['loss_before']:.2f}, then {sc['loss_after']:.2f}); ")


def runs(row: dict, side: str) -> str:
    """Each seed's value behind a mean (nothing for a single run)."""
    vals = row.get(f"{side}_runs")
    return f" (runs: {', '.join(num(v) for v in vals)})" if vals else ""


def section(results: dict[str, dict]) -> str:
    lines = [HEADING, "",
             "Written by `python benchmarks/fit_closed_loop.py --results FILE --update-docs` (the short version",
             "is tests/fit/test_closed_loop.py, in `make test`). For each drive a hidden drive, the built-in",
             "profile with every time drawn within +-30 % (seed 1), another SLC cache size and more spare",
             "area, runs the fingerprint at its defaults; `ssdlab fit --runs ID --no-crossval` sees that run",
             "alone (the whole parameter space, the class the evidence suggests); then twin and hidden drive",
             "run tests outside the fingerprint (the 2000 s consistency test, CrystalDiskMark quick with one",
             "repeat of 1 s, the idle test, the PCMark 8 Photoshop-light-like trace on a full drive) and every",
             f"figure must agree within {100 * WITHIN:.0f} %. The consistency and idle tests' figures are each drive's",
             f"mean over {len(SEEDS['consistency'])} runs with simulator seeds {', '.join(map(str, SEEDS['consistency']))} (one run's 1 % low is a few",
             "seconds' stalls: it moves by a quarter between seeds of one drive; the reads after random",
             "writes by a few percent); each run's value is in the table. A consistency run that ends before",
             "steady state has no figure of its own: where a run of either drive did not reach it, every run of",
             "both is read over the same seconds (from the latest steady start of the runs that reached it, every",
             "one of them steady there; none did: the steady rule's last five rounds), and the row says so.",
             "Times are this machine's, 2 cores shared with other work.", ""]
    for drive, x in results.items():
        hidden = hidden_values(drive, x["hidden"], [p["key"] for p in x["parameters"]])
        n = sum(r["ok"] for r in x["rows"])
        lines += [f"**{drive}** ({x['kind']}), measured {x['date']}: hidden drive `{' '.join(x['hidden'])}`; "
                  f"the fit started from class {x['class']}, {x['trials']} trials in {x['fit_s'] / 60:.0f} min (`--trials {x['asked']}`"
                  + (f" `--minutes {x['minutes']}`" if x.get("minutes") else "") + "), "
                  + size_text(x.get("size_correction")) +
                  f"its twin passes {x['passed']} of {x['total']} fingerprint figures; the whole loop "
                  f"{x['wall_s'] / 60:.0f} min wall ({x['load']} at its start, {x['load_end']} at its end). "
                  f"**{n} of {len(x['rows'])} held-out figures within {100 * WITHIN:.0f} %.**", "",
                  "| test | figure | hidden drive | twin | error | within 10 % |", "|---|---|---|---|---|---|"]
        for r in x["rows"]:
            err = "-" if r["error"] is None else f"{100 * r['error']:+.1f} %"
            lines.append(f"| {r['test']} | {r['figure']}{basis(r)} | {num(r['hidden'])}{runs(r, 'hidden')} | "
                         f"{num(r['twin'])}{runs(r, 'twin')} | {err} | {'yes' if r['ok'] else '**no**'} |")
        lines += ["", f"<details><summary>{drive}: the twin's parameters against the hidden drive's</summary>", "",
                  "| parameter | hidden | twin | class | pinned | range (pinned: the nearest values looked at beyond it fit worse) |",
                  "|---|---|---|---|---|---|"]
        for p in x["parameters"]:
            why = f" ({p['note']})" if p.get("note") and not p["pinned"] else ""
            names = CHOICES.get(p["key"])  # a policy: its name, not its number
            said = (lambda v: names[int(round(v))]) if names else (lambda v: f"{v:.4g}")
            unit = "" if names else f" {p['unit']}"
            hid = hidden[p["key"]]
            lines.append(f"| {p['key']} | {said(float(hid)) if names else num(hid)} | "
                         f"{said(p['value'])}{unit} | {said(p['class_value'])} | "
                         f"{pinned_label(p) if p['pinned'] else 'NOT pinned' + why} | {said(p['lo'])}..{said(p['hi'])} |")
        lines += ["", "</details>", ""]
    return "\n".join(lines)


def rerun(results: Path, drives: list[str], tests: list[str]) -> None:
    """The held-out `tests` again for each drive's saved twin (the others' rows kept)."""
    saved = json.loads(results.read_text())
    for drive in drives:
        if drive not in saved:
            continue
        x = saved[drive]
        with tempfile.TemporaryDirectory() as tmp:
            twin = Path(tmp) / "twin.toml"
            twin.write_text(x["twin_toml"])
            new = held_rows(Path(tmp) / "r.sqlite", drive, x["hidden"], twin, {t: HELD[t] for t in tests},
                            timeout=6 * 3600, seeds=SEEDS)
        x["rows"] = [r for r in x["rows"] if r["test"] not in tests] + new
        x["rows"].sort(key=lambda r: list(HELD).index(r["test"]))
        print(f"== {drive}: {sum(r['ok'] for r in x['rows'])} of {len(x['rows'])} held-out figures within 10 %")
        saved = json.loads(results.read_text()) if results.exists() else {}
        saved[drive] = x
        results.write_text(json.dumps(saved, indent=1))


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--drive", action="append", help=f"built-in profiles (default: {', '.join(KINDS)})")
    ap.add_argument("--trials", default="400")
    ap.add_argument("--seed", type=int, default=1, help="the hidden drive's perturbation")
    ap.add_argument("--jobs", default=None)
    ap.add_argument("--minutes", default=None, help="bound each fit's time (ssdlab fit --minutes)")
    ap.add_argument("--results", type=Path, help="merge each drive's measurements into this JSON file")
    ap.add_argument("--update-docs", action="store_true", help="write the section of docs/fit-closed-loops.md (needs --results)")
    ap.add_argument("--docs-only", action="store_true", help="write the section from --results, run nothing")
    ap.add_argument("--held", action="append", choices=list(HELD),
                    help="run this held-out test again on each --results twin (its profile kept there), no fit")
    a = ap.parse_args()
    if (a.update_docs or a.docs_only or a.held) and not a.results:
        ap.error("--update-docs, --docs-only and --held read --results FILE")
    if a.held:
        rerun(a.results, a.drive or list(KINDS), a.held)
    ok = True
    for drive in [] if a.docs_only or a.held else a.drive or list(KINDS):
        hidden = perturbed(drive, a.seed)
        t0, started = time.time(), load()
        with tempfile.TemporaryDirectory() as tmp:
            os.environ["XDG_STATE_HOME"] = f"{tmp}/state"  # each fit from scratch: none of the trials an earlier fit kept (fit/trial_record.py)
            fit = ["--trials", a.trials, "--no-crossval", *(["--jobs", a.jobs] if a.jobs else []),
                   *(["--minutes", a.minutes] if a.minutes else [])]
            loop = closed_loop(Path(tmp), drive, hidden, [], fit, HELD, timeout=6 * 3600, seeds=SEEDS)
        n = sum(r["ok"] for r in loop.rows)
        print(f"\n== {drive} ({KINDS.get(drive, '')}), hidden: {' '.join(hidden)}")
        print(f"class {loop.fit['class']}; {loop.fit['trials']} trials; {loop.fit['passed']} of {loop.fit['total']} "
              f"fingerprint figures within tolerance; {time.time() - t0:.0f} s")
        print(table(loop))
        print(f"{n} of {len(loop.rows)} held-out figures within 10 %")
        x = {"kind": KINDS.get(drive, ""), "hidden": hidden, "class": loop.fit["class"], "trials": loop.fit["trials"],
             "asked": a.trials, "minutes": a.minutes, "fit_s": loop.fit["seconds"], "passed": loop.fit["passed"], "total": loop.fit["total"],
             "wall_s": round(time.time() - t0), "load": started, "load_end": load(),
             "date": datetime.date.today().isoformat(), "rows": loop.rows, "twin_toml": loop.twin,
             "size_correction": loop.fit.get("size_correction"), "stages": loop.fit.get("stages"),
             "parameters": [{k: p[k] for k in ("key", "value", "unit", "class_value", "pinned", "lo", "hi", "note",
                                               "range_is", "range_rel", "class_loss") if k in p} for p in loop.fit["parameters"]]}
        print(json.dumps({"drive": drive, **x}), flush=True)
        if a.results:
            saved = json.loads(a.results.read_text()) if a.results.exists() else {}
            saved[drive] = x
            a.results.write_text(json.dumps(saved, indent=1))
        ok &= loop.passed
    if a.update_docs or a.docs_only:
        saved = json.loads(a.results.read_text())
        replace(ROOT / "docs" / "fit-closed-loops.md", section({d: saved[d] for d in KINDS if d in saved}
                                                  | {d: x for d, x in saved.items() if d not in KINDS}))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
