"""`ssdlab fit`: a simulated twin of a drive from its runs in the store and/or a figures file
(fit/): the twin's profile TOML, a report, cross-validation."""

from __future__ import annotations

import contextlib
import os
import sys
import time
from pathlib import Path
from typing import Any, Optional

import typer

from .. import safe_path
from ..errors import file_problem, one_line
from .errors import EXIT_USER, UserError, fail, interrupted_status, user_errors
from .inputs import check_out_dir, existing_store, ray_choice
from .options import Db, JsonOut, Seed
from .output import emit_table, print_json


def _run_ids(store: Any, text: str) -> list[int]:
    """--runs: run ids, or -N for the N-th newest run (as `results show` takes them)."""
    try:
        given = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise UserError(f"--runs {text}: expected run ids, e.g. --runs 12,13 (-1: the latest run)") from None
    if not given or 0 in given:
        raise UserError(f"--runs {text}: expected distinct run ids, e.g. --runs 12,13 (-1: the latest run)")
    ids = [store.nth_latest_run_id(-i) if i < 0 else i for i in given]
    if len(set(ids)) != len(ids):
        raise UserError(f"--runs {text}: names a run twice; give distinct runs, e.g. --runs 12,13")
    return ids


def _check_out(out: Path, force: bool) -> None:
    """The twin's file: a .toml, never a built-in profile, never an existing file without --force."""
    from .. import profiles

    if out.suffix != ".toml":
        raise UserError(f"--out {out}: a profile file ends in .toml (e.g. --out twin.toml)")
    builtin = Path(str(profiles.__file__)).resolve().parent
    where = out.resolve()
    if where.parent == builtin or where.is_relative_to(builtin):
        raise UserError(f"--out {out}: that is where the built-in profiles live; write the twin elsewhere")
    real = safe_path.real(out, f"--out {out}")  # through no other user's link
    if out.is_symlink() or (out.exists() and not force):
        raise UserError(f"--out {out} exists; give --force to replace it (or another path)")
    if out.exists() and not out.is_file():
        raise UserError(f"--out {out}: not a regular file")
    why = safe_path.cannot_make_files(os.path.dirname(real))
    if why:
        raise UserError(f"--out {out}: no file can be made in {out.parent} ({why})")


def _write(out: Path, text: str, force: bool) -> None:
    """Created new (no --force) or renamed over the old file (--force): never through a
    symlink another user planted (in the name or in a directory above it), never half
    written (safe_path)."""
    what = f"--out {out}"
    if force:
        safe_path.write(out, text, what, mode=0o644)
        return
    fd = safe_path.create(out, what, 0o644)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text)


class Bar:
    """A progress bar over the trials at a terminal (nothing otherwise)."""

    def __init__(self, total: int):
        self.bar: Any = None
        self.best = float("inf")
        if sys.stderr.isatty():
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

            self.bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                                TextColumn("best loss {task.fields[best]}"), TimeElapsedColumn(),
                                console=Console(stderr=True))
            self.task = self.bar.add_task("fit", total=total, best="-")

    def __enter__(self) -> "Bar":
        if self.bar is not None:
            self.bar.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        if self.bar is not None:
            self.bar.stop()

    def trial(self, stage: str, t: Any) -> None:
        if self.bar is None:
            return
        if stage == "search":
            self.best = min(self.best, t.loss)
            self.bar.update(self.task, advance=1, description="search", best=f"{self.best:.3g}")
        else:
            self.bar.update(self.task, description=f"{stage} (held back a group)")


def fit_cmd(
    runs: Optional[str] = typer.Option(None, "--runs", help="the drive's runs in the store, e.g. 12,13 (the fingerprint first: ssdlab run fingerprint; -1: the latest run)"),
    figures: Optional[Path] = typer.Option(None, "--figures", help="a figures file (TOML, docs/fit-evidence.md): a review's or a spec sheet's figures"),
    out: Path = typer.Option(..., "--out", help="the twin's profile TOML (use it as --drive sim:./twin.toml)"),
    report_dir: Optional[Path] = typer.Option(None, "-o", "--report", help="write the fit report (HTML + PNG) here"),
    trials: int = typer.Option(400, "--trials", min=1, help="trials of the search past its opening (the die-count scan and screening, about 5 trials a parameter, run whole: --minutes bounds them; a cross-validation fold's: --crossval-trials)"),
    minutes: Optional[float] = typer.Option(None, "--minutes", min=0.01, help="bound the fit's time (the search, pinning and cross-validation share it; trials still running at its end are stopped)"),
    jobs: Optional[int] = typer.Option(None, "--jobs", "-j", help="trials at once on local worker processes (default: one per core; 1: in this process)"),
    ray: bool = typer.Option(False, "--ray", help="run the trials on a local Ray instance (or --ray-address)"),
    ray_address: Optional[str] = typer.Option(None, "--ray-address", metavar="ADDRESS", help="the Ray cluster to run the trials on (implies --ray)"),
    seed: Seed = 42,
    start: Optional[str] = typer.Option(None, "--start", help="the generic class to start from (a built-in profile; default: the one the evidence suggests)"),
    params: Optional[str] = typer.Option(None, "--params", help="search only these parameters (comma-separated, e.g. nand.native.read_us,spare_pct); the rest keep the class's values"),
    crossval: bool = typer.Option(True, "--crossval/--no-crossval", help="hold back each group of figures in turn and predict it"),
    crossval_trials: Optional[int] = typer.Option(None, "--crossval-trials", min=1, help="trials of each cross-validation fold, reused ones counted (default: the die-count scan and screening, which a fold mostly reuses, and one Levenberg-Marquardt round)"),
    force: bool = typer.Option(False, "--force", help="replace an existing --out file"),
    db: Db = None,
    json_out: JsonOut = False,
) -> None:
    """Fit a simulated twin of a drive to its runs or published figures."""
    from ..executor import open_executor
    from ..fit import evidence as E
    from ..fit import fitting
    from ..fit.search import SEEDS

    started = time.monotonic()  # --minutes counts from here: reading the evidence is in it
    with user_errors():
        if runs is None and figures is None:
            raise UserError("give the evidence: --runs ID[,ID...] (the drive's runs) and/or --figures FILE.toml")
        if jobs is not None and jobs < 1:
            raise UserError(f"--jobs {jobs}: must be at least 1")
        if not 0 <= seed < SEEDS:  # the search's sampler takes 32 bits (a run's seed takes 64)
            raise UserError(f"--seed {seed}: a fit's seed is 0 to {SEEDS - 1}")
        if figures is not None and out.resolve() == figures.resolve():
            raise UserError(f"--out {out} is the figures file (the evidence); write the twin elsewhere")
        _check_out(out, force)
        if report_dir is not None and report_dir.resolve().is_relative_to(out.resolve()):
            raise UserError(f"-o {report_dir} is the twin's file (--out) or inside it; give the report a directory "
                            "of its own")
        parts = []
        if runs is not None:
            store = existing_store(db)
            parts.append(E.from_runs(store, _run_ids(store, runs)))
        if figures is not None:
            if (why := file_problem(figures)) is not None:
                raise UserError(f"--figures {figures}: {why}")
            ev_f = E.from_figures(figures)
            try:
                E.check_metrics(ev_f, E.metric_names)
            except UserError as e:  # the file's figure: named with the file, as the file's own checks are
                raise UserError(f"{figures}: {e}") from None
            parts.append(ev_f)
        ev = parts[0] if len(parts) == 1 else parts[0].merged(parts[1])
        for c in ev.cautions:  # before the fit's minutes, while the user can still run it again
            typer.echo(f"ssdlab: warning: {c}", err=True)
        if start is not None:
            from ..profiles import builtin_ids

            if start not in builtin_ids():
                raise UserError(f"--start {start}: not a built-in profile ({', '.join(builtin_ids())})")
        searched = None if params is None else [k.strip() for k in params.split(",") if k.strip()]
        if searched == []:  # given but naming nothing: not the same as leaving it out
            raise UserError(f"--params {params!r} names no parameter: give them comma-separated (e.g. "
                            "nand.native.read_us,spare_pct), or leave --params out to search every parameter")
        where = ray_choice(ray, ray_address)
        record = _open_record()  # before the report directory is made: a refused one makes none
        made = report_dir is not None and not report_dir.exists()
        if report_dir is not None:  # once the evidence is read: a refused fit makes no directory
            check_out_dir(report_dir)
        req = fitting.Request(ev, trials=trials, minutes=minutes, seed=seed, start=start, crossval=crossval,
                              crossval_trials=crossval_trials, started=started, params=searched, record=record)
        executor = open_executor(jobs, where)
        try:
            with Bar(trials) as bar, executor, record or contextlib.nullcontext():
                res = fitting.fit(req, executor, bar.trial)
        except (UserError, ValueError):  # the fit's own checks (--params, evidence that pins nothing)
            _unmake(report_dir, made)
            raise
        except KeyboardInterrupt:  # Ctrl-C or SIGTERM: the twin is written at the end; the trials as they end
            _unmake(report_dir, made)
            typer.echo(f"ssdlab: fit interrupted: no twin written to {out}; {_kept(record)} (--minutes bounds a "
                       "fit's time)", err=True)
            raise typer.Exit(interrupted_status()) from None
        if record is not None and record.failed:
            typer.echo(f"ssdlab: warning: the fit's trial record stopped keeping trials: {record.failed}", err=True)
        sources = "; ".join(ev.sources)
        name = ev.facts.get("name") or (next(iter(ev.measured.values()))["spec"] if ev.measured else out.stem)
        twin_id = out.stem if out.stem.startswith("twin") else f"twin-{out.stem}"  # twin.toml: "twin"
        text = fitting.twin_text(res, twin_id, f"Twin of {name} (ssdlab fit)", sources, seed)
        from ..targets.sim import SimTarget

        SimTarget(text)  # the simulator takes it (a fit that writes a profile it refuses is a bug)
        _write(out, text, force)
        doc = res.doc()
        doc.update(evidence=ev.sources, left_out=ev.left_out, cautions=ev.cautions, twin=str(out), facts=ev.facts,
                   trials_from_record=record.reused if record is not None else 0)
        for what in doc["out_of_time"]:  # full-size runs that would have ended past --minutes
            typer.echo(f"ssdlab: warning: --minutes {minutes:g} left no time for {what}", err=True)
        if report_dir is not None:
            from ..fit import report  # matplotlib and plotly: imported only for a report

            try:  # from runs, the twin's whole fingerprint at the drive's size first: seconds to a minute
                ps = report.prints(ev.measured, fitting.twin_phases(res, ev)) if ev.measured else []
                doc["report"] = str(report.write(doc, report_dir, ps, f"Twin of {name}"))
            except KeyboardInterrupt:  # the twin is written: kept, and said so
                _unmake(report_dir, made)
                typer.echo(f"ssdlab: fit interrupted while writing its report: the twin is written to {out}; "
                           f"no report written to {report_dir}", err=True)
                raise typer.Exit(interrupted_status()) from None
            except Exception as e:  # (a full disk): what failed, and that the twin is kept
                _unmake(report_dir, made)
                what = one_line(e) if isinstance(e, (UserError, ValueError)) else f"{type(e).__name__}: {one_line(e)}"
                fail(f"{what}; the twin is written to {out}, no report written to {report_dir}",
                     EXIT_USER if isinstance(e, (UserError, ValueError)) else 1)
    if json_out:
        print_json(doc)
        return
    show(doc)


def _open_record() -> Any:
    """The record of finished trials (fit/trial_record.py) in the user's state directory. A
    directory another user could tamper with is refused (exit 2, before any trial runs); one
    that cannot be made (a read-only home) is said in a warning, and the fit runs without it."""
    from ..fit.trial_record import TrialRecord, default_dir

    where = default_dir()
    try:
        return TrialRecord(where)
    except safe_path.UnsafePath as e:
        if e.refusal:
            raise UserError(f"{one_line(e)} (or set XDG_STATE_HOME to a directory only you can write)") from None
        typer.echo(f"ssdlab: warning: {one_line(e)}: a stopped fit keeps no trials (set XDG_STATE_HOME to a "
                   "directory you can write)", err=True)
        return None


def _kept(record: Any) -> str:
    """What a stopped fit keeps: its finished trials, in the record."""
    if record is None or record.failed:
        return "no trial record was kept, so the same command again starts over"
    n = record.kept + record.reused
    if not n:
        return "no trial had finished"
    return (f"its {n} finished trial{'s' if n > 1 else ''} {'are' if n > 1 else 'is'} kept in {record.dir}: the same "
            "command again takes them from there and goes on")


def _unmake(report_dir: Path | None, made: bool) -> None:
    """The report directory this fit made, while still empty: a fit that ends without a
    twin leaves none behind."""
    if made and report_dir is not None:
        with contextlib.suppress(OSError):
            report_dir.rmdir()  # only an empty one


def _range(p: dict[str, Any]) -> str:
    """A parameter's range as the table gives it: "not checked" where nothing but the twin's
    value was looked at (the budget ended before its slice): "60..60" would read as pinned."""
    if not p["pinned"] and p["lo"] == p["hi"]:
        return "not checked"
    return f"{_value(p, p['lo'], False)}..{_value(p, p['hi'], False)}"


def _value(p: dict[str, Any], x: float, unit: bool = True) -> str:
    """A parameter's value as the table gives it: a policy by its name (ftl.striping's
    "dynamic", not "1 0 static, 1 dynamic")."""
    if p.get("choices"):
        return str(p["choices"][int(round(x))])
    return f"{x:.4g} {p['unit']}" if unit else f"{x:.4g}"


def show(doc: dict[str, Any]) -> None:
    from ..fit.profile_out import RANGE_HEAD, pinned_label

    emit_table(f"twin parameters (class {doc['class']}, {doc['trials']} trials)",
               ["parameter", "twin", "class", "pinned", RANGE_HEAD],
               [[p["key"], _value(p, p["value"]), _value(p, p["class_value"], False),
                 pinned_label(p), _range(p)] for p in doc["parameters"]])
    if doc["crossval"]:
        emit_table("cross-validation: each group held back, predicted by a fit to the rest",
                   ["held back", "figure", "evidence", "predicted", "error", "within tolerance"],
                   [[h["group"], h["figure"], h["measured"], "-" if h["predicted"] is None else f"{h['predicted']:.4g}",
                     "-" if h["error"] is None else f"{100 * h['error']:+.1f} %", "yes" if h["passed"] else "no"]
                    for h in doc["crossval"]])
    for c in doc["conflicts"]:
        print(f"conflict: {c}")
    for x in doc["left_out"]:
        print(f"left out: {x}")
    for r in doc["figures"]:
        if r.get("expected_failure"):
            print(f"not fitted (expected failure): {r['figure']}")
    held = doc["crossval"]
    predicted = (f"; {sum(bool(h['passed']) for h in held)} of {len(held)} predicted within tolerance by a fit "
                 "that did not see their group (cross-validation)") if held else ""
    if not held and "crossval" in doc.get("stages", {}):  # asked for, but nothing to hold back
        predicted = "; not cross-validated: the evidence is one group of figures, none to hold back"
    print(f"{doc['passed']} of {doc['total']} evidence figures within tolerance on the twin fitted to them"
          f"{predicted}; twin: {doc['twin']}" + (f"; report: {doc['report']}" if doc.get("report") else ""))
