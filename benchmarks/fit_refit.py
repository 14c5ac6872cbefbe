"""Refits from figures files alone: five built-in drives of different kinds (SATA MLC, DRAM
TLC NVMe, DRAM-less HMB NVMe, QLC, the Vertex 460) fitted by `ssdlab fit --figures` to their
calibration/figures/<drive>.toml, starting from the generic class their facts suggest (never
from the shipped profile), each within --minutes; then the refitted and the hand-fitted
profile are both checked against the drive's validate figures (figures that compare with
another drive run that drive's shipped profile). Prints the table of docs/calibration.md.

    python benchmarks/fit_refit.py [--drive m4-256] [--minutes 28] [--keep DIR] [--rows FILE] [--update-docs]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))

from ssdlab import validate as val  # noqa: E402
from ssdlab.calibration import builtin  # noqa: E402

DRIVES = {"m4-256": "SATA MLC", "pm981a-256": "DRAM TLC NVMe", "sn520-128": "DRAM-less HMB NVMe",
          "870qvo-1000": "QLC (SATA)", "vertex460-240": "Vertex 460 (SATA MLC, performance mode)"}


def check(drive: str, twin_text: str | None) -> list[dict]:
    """validate's rows of `drive` with its shipped profile (None) or the twin's."""
    figs = [f for f in val.FIGURES if f.drive == drive]
    runs = {}
    for d, run in val.needed_runs(figs):
        runs[(d, run)] = val.run_one(d, run, profile_text=twin_text if d == drive else None)
    return val.evaluate(figs, runs)


MARK = "## Refits from figures files alone"


def section(rows: list[dict]) -> str:
    """The section of docs/calibration.md this benchmark writes (after validate's page)."""
    lines = [MARK, "",
             "Written by `python benchmarks/fit_refit.py --update-docs` (`ssdlab validate --markdown` writes",
             "the page above it; `--rows FILE` adds rows measured before, a JSON row a line). Each drive's twin",
             "is fitted by `ssdlab fit --figures` to its figures file alone, from the generic class its facts",
             "suggest, within `--minutes` (the budget column) on this machine's 2 cores, without",
             "cross-validation; then the refitted and the hand-fitted profile are both checked against every",
             "figure of the drive above (figures that compare with another drive run that drive's shipped",
             "profile; they are left out of the fit). Wall time includes that check.", "",
             "| drive | kind | class started from | measured | budget | trials | wall | hand-fitted pass | refitted pass |",
             "|---|---|---|---|---|---|---|---|---|"]
    for x in rows:
        lines.append(f"| {x['drive']} | {x['kind']} | {x['class']} | {x.get('date', '')} | {x.get('minutes', '')} min | "
                     f"{x['trials']} | {x['wall_s'] / 60:.0f} min | "
                     f"{x['hand_pass']} of {x['figures']} | {x['refit_pass']} of {x['figures']} |")
    lines.append("")
    for x in rows:
        lines.append(f"- **{x['drive']}**: the refit fails {', '.join(x['refit_fails']) or 'nothing'}; the "
                     f"hand-fitted profile fails {', '.join(x['hand_fails']) or 'nothing'}"
                     + (f"; left out of the fit: {'; '.join(x['left_out'])}" if x["left_out"] else "") + ".")
    return "\n".join(lines) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--drive", action="append")
    # the fit's budget: its last batch, the pinning's and the validate check end within 30 minutes
    ap.add_argument("--minutes", type=float, default=28.0)
    ap.add_argument("--trials", default="2000")
    ap.add_argument("--update-docs", action="store_true", help="write the table into docs/calibration.md")
    ap.add_argument("--rows", type=Path, help="rows measured before (JSON a line, as printed) to add to the table")
    ap.add_argument("--keep", type=Path, help="a directory to keep each twin (DRIVE-refit.toml) and its fit's --json in")
    a = ap.parse_args()
    rows = [json.loads(x) for x in a.rows.read_text().splitlines() if x.startswith("{")] if a.rows else []
    for drive in a.drive if a.drive is not None else ([] if a.rows else list(DRIVES)):
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / f"{drive}-refit.toml"
            t0 = time.time()
            c0 = resource.getrusage(resource.RUSAGE_CHILDREN)
            r = subprocess.run([sys.executable, "-m", "ssdlab.cli", "fit", "--figures",
                                str(builtin(drive).path), "--out", str(out), "--minutes", str(a.minutes),
                                "--trials", a.trials, "--no-crossval", "--json"],
                               capture_output=True, text=True,
                               env={**os.environ, "PYTHONPATH": str(ROOT / "python"),
                                    "XDG_STATE_HOME": f"{tmp}/state"})  # from scratch: no kept trial
            wall = time.time() - t0
            c1 = resource.getrusage(resource.RUSAGE_CHILDREN)
            if r.returncode != 0:
                print(f"{drive}: fit failed: {r.stderr.strip()[-400:]}")
                continue
            doc = json.loads(r.stdout)
            refit = check(drive, out.read_text())
            if a.keep:
                a.keep.mkdir(parents=True, exist_ok=True)
                (a.keep / out.name).write_text(out.read_text())
                (a.keep / f"{drive}-fit.json").write_text(r.stdout)
        hand = check(drive, None)
        row = {"drive": drive, "kind": DRIVES.get(drive, ""), "class": doc["class"], "trials": doc["trials"],
               "date": time.strftime("%Y-%m-%d", time.gmtime()), "minutes": a.minutes,
               "wall_s": round(wall), "cpu_s": round(c1.ru_utime + c1.ru_stime - c0.ru_utime - c0.ru_stime),
               "figures": len(hand), "hand_pass": sum(x["pass"] for x in hand),
               "refit_pass": sum(x["pass"] for x in refit),
               "left_out": doc["left_out"],
               "refit_fails": [x["figure"] for x in refit if not x["pass"]],
               "hand_fails": [x["figure"] for x in hand if not x["pass"]]}
        rows.append(row)
        print(json.dumps(row), flush=True)
    latest = {x["drive"]: x for x in rows}  # a drive measured again: its latest row
    order = list(DRIVES) + sorted(set(latest) - set(DRIVES))
    rows = [latest[d] for d in order if d in latest]
    text = section(rows)
    print(text)
    if a.update_docs:
        doc = ROOT / "docs" / "calibration.md"
        body = doc.read_text()
        body = body.split(MARK)[0].rstrip() + "\n\n" + text
        doc.write_text(body)
    return 0 if all(x["refit_pass"] >= x["hand_pass"] for x in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
