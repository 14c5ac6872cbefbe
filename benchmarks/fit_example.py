"""The worked example of docs/fit-example.md: a 256 GB drive (the generic TLC class, sim:tlc-256, with
its times, SLC cache and spare area changed as benchmarks/fit_speed.py changes them: a drive
whose values the fit does not know) runs the fingerprint at its defaults; `ssdlab fit` sees
that run alone (default trials, cross-validation on). Prints the commands as a user types
them, what they print (abridged), the parameter table against the hidden values and the
cross-validation table; --update-docs writes that section into docs/fit-example.md.

    python benchmarks/fit_example.py [--trials 400] [--seed 2] [--update-docs]
"""

from __future__ import annotations

import argparse
import datetime
import io
import json
import os
import re
import resource
import shlex
import sys
import tempfile
import time
from contextlib import redirect_stdout
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "python"), str(ROOT / "tests"), str(ROOT / "tests" / "fit")]
# each command in a fresh child process: a fork of the tests' warm server (clirun) is not
# this process's child, so RUSAGE_CHILDREN would not count its CPU
os.environ["SSDLAB_TEST_FRESH_CLI"] = "1"

from clirun import cli  # noqa: E402
from closedloop import hidden_values, perturbed, sets  # noqa: E402
from docsection import load, num, replace  # noqa: E402

from ssdlab.cli.fit import show  # noqa: E402
from ssdlab.fit.profile_out import pinned_label  # noqa: E402

HEADING = "## The fingerprint, the fit and the twin"


def cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def abridged_run(out: str) -> str:
    """The fingerprint's printout with each curve cut to its first entries."""
    lines = []
    for line in out.splitlines():
        name, _, value = line.partition("\t")
        if value.startswith("{") and len(value) > 70:
            value = value[:60].rsplit(",", 1)[0] + ", ...}"
        lines.append(f"{name}\t{value}" if _ else line)
    return "\n".join(lines)


def abridged_fit(out: str, keep: int = 6) -> str:
    """The fit's printout with the cross-validation table cut to its first rows."""
    lines, rows, cut = [], 0, 0
    table = None
    for line in out.splitlines():
        if line.startswith("# "):
            table, rows = line, 0
        elif table and table.startswith("# cross-validation") and "\t" in line:
            rows += 1
            if rows > keep + 1:  # the header and `keep` rows
                cut += 1
                continue
        elif cut:
            lines.append(f"... ({cut} more rows)")
            cut = 0
        lines.append(line)
    if cut:
        lines.append(f"... ({cut} more rows)")
    return "\n".join(lines)


def section(a: dict) -> str:
    doc = a["doc"]
    hidden = hidden_values("tlc-256", a["hidden"], [p["key"] for p in doc["parameters"]])
    fp_cmd = ["ssdlab", "run", "fingerprint", "--drive", "sim:tlc-256", *sets(a["hidden"]), "--db", "runs.sqlite"]
    fit_cmd = ["ssdlab", "fit", "--runs", str(a["run"]), "--db", "runs.sqlite", "--out", "twin.toml",
               "-o", "report/", *(["--trials", str(a["trials"])] if a["trials"] != 400 else []),
               *(["--minutes", f"{a['minutes']:g}"] if a.get("minutes") else [])]
    pinned = sum(p["pinned"] for p in doc["parameters"])
    cv = doc["crossval"]
    lines = [
        HEADING, "",
        f"Written by `python benchmarks/fit_example.py --update-docs` on {a['date']} (this machine, 2 cores",
        f"shared with other work: {a['load']} at the start of the fit). The drive is the generic TLC class",
        "(sim:tlc-256, 256 GB PCIe 3.0 TLC with DRAM) with every time drawn within +-30 %, another SLC cache",
        "size and more spare area: a drive whose values the fit does not know (the same hidden drive as",
        "benchmarks/fit_speed.py's). On a real drive the first command is",
        "`ssdlab run fingerprint --drive /dev/nvme1n1 --destroy-data=/dev/nvme1n1`.", "",
        "```",
        "$ " + shlex.join(fp_cmd[:5]) + " \\",
        *[f"      {shlex.join(sets([o]))} \\" for o in a["hidden"][:-1]],
        f"      {shlex.join(sets(a['hidden'][-1:]))} --db runs.sqlite",
        abridged_run(a["fp_out"]),
        f"$ {shlex.join(fit_cmd)}",
        abridged_fit(a["fit_out"]),
        "```", "",
        f"The fingerprint took {a['fp_wall']:.0f} s wall ({a['fp_cpu']:.0f} s CPU); the fit {a['fit_wall'] / 60:.1f} min wall",
        f"({a['fit_cpu'] / 60:.1f} min CPU over its workers), cross-validation included, with {doc['trials']} trials",
        "of the search" + (f" (`--minutes {a['minutes']:g}` stopped it before `--trials {a['trials']}`)"
                           if a.get("minutes") and doc["trials"] < a["trials"] else "") + ".",
        f"The twin passes {doc['passed']} of {doc['total']} evidence figures within their tolerance; the",
        f"evidence pins {pinned} of {len(doc['parameters'])} parameters. Against the values the fit was not told",
        "(\"hidden\": the hidden drive's values, derived ones computed as the fit computes them):", "",
        "| parameter | hidden | twin | class | pinned | range (pinned: the nearest values looked at beyond it fit worse) |",
        "|---|---|---|---|---|---|",
    ]
    for p in doc["parameters"]:
        lines.append(f"| {p['key']} | {num(hidden[p['key']])} | {p['value']:.4g} {p['unit']} | "
                     f"{p['class_value']:.4g} | {pinned_label(p) if p['pinned'] else 'NOT pinned: ' + p['note']} | "
                     f"{p['lo']:.4g}..{p['hi']:.4g} |")
    groups: dict[str, list[dict]] = {}
    for h in cv:
        groups.setdefault(h["group"], []).append(h)
    lines += ["", f"Cross-validation: each group held back in turn and predicted by a fit to the others "
              f"({sum(h['passed'] for h in cv)} of {len(cv)} held-back figures within their tolerance):", "",
              "| held back | figures | within tolerance | worst error |", "|---|---|---|---|"]
    for g, hs in groups.items():
        errs = [h for h in hs if h["error"] is not None]
        worst = max(errs, key=lambda h: abs(h["error"])) if errs else None
        lines.append(f"| {g} | {len(hs)} | {sum(h['passed'] for h in hs)} | "
                     + ("-" if worst is None else f"{100 * worst['error']:+.1f} % ({worst['figure']})") + " |")
    lines += ["", "<details><summary>every held-back figure</summary>", "",
              "| held back | figure | measured | predicted | error | within tolerance |", "|---|---|---|---|---|---|"]
    for h in cv:
        err = "-" if h["error"] is None else f"{100 * h['error']:+.1f} %"
        lines.append(f"| {h['group']} | {h['figure']} | {h['measured']} | {num(h['predicted'])} | {err} | "
                     f"{'yes' if h['passed'] else 'no'} |")
    lines += ["", "</details>", ""]
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--trials", type=int, default=400)
    ap.add_argument("--minutes", type=float, help="bound the fit's time (ssdlab fit --minutes)")
    ap.add_argument("--seed", type=int, default=2, help="the hidden drive's perturbation")
    ap.add_argument("--update-docs", action="store_true", help="write the section into docs/fit-example.md")
    ap.add_argument("--save", type=Path, help="keep the measurements in this JSON file")
    ap.add_argument("--load", type=Path, help="write the section from a --save file instead of measuring")
    a = ap.parse_args()
    if a.load:
        m = json.loads(a.load.read_text())
    else:
        m = measure(a.trials, a.minutes, a.seed)
        if a.save:
            a.save.write_text(json.dumps(m))
    text = section(m)
    print(text)
    print(f"fit: {m['fit_wall']:.0f} s wall, {m['fit_cpu']:.0f} s CPU; {m['load']} at its start, {m['load_end']} at its end")
    if a.update_docs:
        replace(ROOT / "docs" / "fit-example.md", text)
    return 0


def measure(trials: int, minutes: float | None, seed: int) -> dict:
    hidden = perturbed("tlc-256", seed)
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["XDG_STATE_HOME"] = f"{tmp}/state"  # each fit from scratch: none of the trials an earlier fit kept (fit/trial_record.py)
        t0, c0 = time.time(), cpu()
        r = cli("run", "fingerprint", "--drive", "sim:tlc-256", *sets(hidden), "--db", "runs.sqlite",
                timeout=3600, check=True, cwd=Path(tmp))
        fp_wall, fp_cpu = time.time() - t0, cpu() - c0
        run = int(re.search(r"stored as run (\d+)", r.stdout).group(1))  # type: ignore[union-attr]
        started, t0, c0 = load(), time.time(), cpu()
        bound = ["--minutes", f"{minutes:g}"] if minutes else []
        doc = json.loads(cli("fit", "--runs", str(run), "--db", "runs.sqlite", "--out", "twin.toml", "-o", "report/",
                             "--trials", str(trials), *bound, "--json", timeout=6 * 3600, check=True,
                             cwd=Path(tmp)).stdout)
        fit_wall, fit_cpu = time.time() - t0, cpu() - c0
    doc["report"] = "report/report.html"
    buf = io.StringIO()
    with redirect_stdout(buf):
        show(doc)  # what `ssdlab fit` prints without --json (the same function)
    return {"doc": doc, "hidden": hidden, "run": run, "trials": trials, "minutes": minutes, "fp_out": r.stdout,
            "fit_out": buf.getvalue(), "fp_wall": fp_wall, "fp_cpu": fp_cpu, "fit_wall": fit_wall,
            "fit_cpu": fit_cpu, "load": started, "load_end": load(), "date": datetime.date.today().isoformat()}


if __name__ == "__main__":
    sys.exit(main())
