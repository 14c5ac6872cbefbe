"""A fit keeps each trial as it ends (fit/trial_record.py): killed or stopped part-way and run
again, the same command takes the trials it ran from the record and goes on to the twin a fit
never stopped gives; the record's key changes with everything a trial's result depends on; a
line cut short is skipped; the record is bounded; a directory another user could tamper with
is refused before any trial runs."""

from __future__ import annotations

import json
import os
import signal
import time

import pytest

from clirun import cli, environ, reaped, start
from drives import SMALL
from fitruns import evidence_of, fingerprint_run, handlers_kept, signal_self
from otheruser import as_nobody, needs_other_user, sticky  # noqa: F401 (a fixture)

pytestmark = pytest.mark.xdist_group("fit-trial-record")
HIDDEN = [*SMALL, "nand.native.prog_us=1600", "nand.native.read_us=75"]
FIT = ["--trials", "16", "--params", "nand.native.prog_us,nand.native.read_us", "--no-crossval", "--jobs", "1",
       "--seed", "7", "--start", "tlc-256"]


@pytest.fixture(scope="module")
def fingerprint(tmp_path_factory):
    return fingerprint_run(tmp_path_factory, HIDDEN, "5")


def recorded(state) -> int:
    """The trials in the record under the state directory `state`."""
    d = state / "ssdlab" / "fit-trials"
    return sum(p.read_bytes().count(b"\n") for p in d.glob("*.jsonl")) if d.is_dir() else 0


def timeless(doc: dict) -> dict:
    """A fit's --json without what says how long it took or what it ran (the result itself)."""
    doc = {k: v for k, v in doc.items() if k not in ("seconds", "stages", "twin", "trials_from_record")}
    doc["search_phases"] = [{k: v for k, v in p.items() if k != "seconds"} for p in doc["search_phases"]]
    return doc


def test_a_killed_fit_run_again_goes_on_from_its_trials_to_the_twin_of_a_fit_never_stopped(fingerprint, tmp_path):
    db, rid = fingerprint
    args = ["fit", "--runs", str(rid), "--db", str(db), *FIT, "--json"]
    (tmp_path / "whole").mkdir()
    (tmp_path / "again").mkdir()
    whole_state, state = tmp_path / "whole-state", tmp_path / "state"
    # a fit never stopped
    r = cli(*args, "--out", str(tmp_path / "whole" / "twin.toml"), env=environ(XDG_STATE_HOME=str(whole_state)),
            timeout=600, check=True)
    whole = json.loads(r.stdout)
    # the same fit, killed (SIGKILL: no handler runs) once it has finished a few trials
    twin = tmp_path / "again" / "twin.toml"
    with reaped(start(*args, "--out", str(twin), env=environ(XDG_STATE_HOME=str(state)))) as p:
        t = time.monotonic()
        while p.poll() is None and recorded(state) < 8 and time.monotonic() - t < 300:
            time.sleep(0.02)
        p.kill()
        p.wait()
    kept = recorded(state)
    ran = sum(s["trials_run"] for s in whole["stages"].values())
    assert p.returncode == -signal.SIGKILL and 8 <= kept < ran, (p.returncode, kept, ran)
    assert not twin.exists()
    # run again: the trials it had finished come from the record, not the simulator
    r = cli(*args, "--out", str(twin), env=environ(XDG_STATE_HOME=str(state)), timeout=600, check=True)
    again = json.loads(r.stdout)
    assert again["trials_from_record"] >= kept
    assert sum(s["trials_run"] for s in again["stages"].values()) <= ran - kept
    # and the result is the uninterrupted fit's: the same twin, the same figures
    assert twin.read_text() == (tmp_path / "whole" / "twin.toml").read_text()
    assert timeless(again) == timeless(whole)


def test_a_stopped_fit_says_how_many_trials_it_kept_and_where(fingerprint, tmp_path, monkeypatch, capsys):
    from ssdlab.cli import app
    from ssdlab.cli import fit as fit_cli

    seen = []

    def stop_at_the_fifth(self, stage, t):
        seen.append(t)
        if len(seen) == 5:
            signal_self(signal.SIGTERM)

    monkeypatch.setattr(fit_cli.Bar, "trial", stop_at_the_fifth)
    state = tmp_path / "state"
    monkeypatch.setenv("XDG_STATE_HOME", str(state))
    db, rid = fingerprint
    with handlers_kept(), pytest.raises(SystemExit) as e:
        app(["fit", "--runs", str(rid), "--db", str(db), "--out", str(tmp_path / "twin.toml"), *FIT])
    assert e.value.code == 143
    err = capsys.readouterr().err.strip().splitlines()
    n = recorded(state)
    assert n >= 5
    where = state / "ssdlab" / "fit-trials"
    assert err == [f"ssdlab: fit interrupted: no twin written to {tmp_path / 'twin.toml'}; its {n} finished trials "
                   f"are kept in {where}: the same command again takes them from there and goes on (--minutes "
                   "bounds a fit's time)"]
    assert os.stat(where).st_mode & 0o777 == 0o700
    assert all(os.stat(p).st_mode & 0o777 == 0o600 for p in where.iterdir())


def trial_args():
    run = ("qd1-read", 0.0, None, 1, ())
    return "[drive]\nname = 'x'\n", {run: ["nand.native.read_us=70"]}, [run], {}, 42


def test_the_key_changes_with_everything_a_trial_depends_on(monkeypatch):
    from ssdlab.fit import trial_record
    from ssdlab.fit.trial_record import TrialRecord

    text, ov, runs, plans, seed = trial_args()
    run = runs[0]
    base = TrialRecord.key(text, ov, runs, plans, seed)
    assert TrialRecord.key(text, {run: list(ov[run])}, list(runs), dict(plans), seed) == base  # its content alone
    other = ("qd1-read", 0.0, 5.0, 1, ())
    changed = [TrialRecord.key(text + "# another class\n", ov, runs, plans, seed),
               TrialRecord.key(text, {run: ["nand.native.read_us=71"]}, runs, plans, seed),
               TrialRecord.key(text, {run: [*ov[run], "nand.blocks_per_plane=256"]}, runs, plans, seed),  # size
               TrialRecord.key(text, {other: ov[run]}, [other], plans, seed),  # the test's options
               TrialRecord.key(text, ov, runs, {run: ("a plan",)}, seed),
               TrialRecord.key(text, ov, runs, plans, seed + 1)]
    monkeypatch.setattr(trial_record, "build_id", lambda: "another simulator build")
    changed.append(TrialRecord.key(text, ov, runs, plans, seed))
    assert len({base, *changed}) == len(changed) + 1


def test_the_build_is_every_file_of_the_package_with_the_simulator():
    import ssdlab._sim
    from ssdlab.fit import trial_record

    trial_record.build_id.cache_clear()
    first = trial_record.build_id()
    assert len(first) == 64 and trial_record.build_id() == first
    # the compiled simulator is one of the files hashed
    root = os.path.dirname(os.path.dirname(trial_record.__file__))
    assert os.path.dirname(ssdlab._sim.__file__) == root


def test_a_record_keeps_and_gives_back_a_trial_and_skips_a_line_cut_short(tmp_path):
    from ssdlab.fit.trial_record import TrialRecord

    text, ov, runs, plans, seed = trial_args()
    doc = {"metrics": {"iops": 1234.5, "nan": float("nan")}, "capacity": 8 * 10**9, "phases": {}}
    with TrialRecord(tmp_path / "r") as rec:
        assert rec.get(text, ov, runs, plans, seed) is None
        rec.put(text, ov, runs, plans, seed, {runs[0]: doc})
        assert rec.kept == 1
    (f,) = (tmp_path / "r").iterdir()
    with open(f, "ab") as out:
        out.write(b"0" * 64 + b' [{"metrics": {"iops"')  # a kill (a crash) mid-line
    other = {runs[0]: ["nand.native.read_us=90"]}
    with TrialRecord(tmp_path / "r") as rec:
        back = rec.get(text, ov, runs, plans, seed)
        assert back is not None and back[runs[0]]["metrics"]["iops"] == 1234.5 and rec.reused == 1
        assert back[runs[0]]["capacity"] == 8 * 10**9
        rec.put(text, other, runs, plans, seed, {runs[0]: doc})  # on a line of its own after the cut one
    with TrialRecord(tmp_path / "r") as rec:
        assert rec.get(text, other, runs, plans, seed) is not None
        assert rec.get(text, ov, runs, plans, seed) is not None


def test_the_record_is_bounded(tmp_path, monkeypatch):
    from ssdlab.fit import trial_record
    from ssdlab.fit.trial_record import TrialRecord

    d = tmp_path / "r"
    d.mkdir(mode=0o700)
    now = time.time()
    for name, age_days, size in (("old.jsonl", 31, 10), ("a.jsonl", 1, 600), ("b.jsonl", 2, 600),
                                 ("c.jsonl", 3, 600), ("notes.txt", 90, 10)):
        (d / name).write_bytes(b"x" * size)
        os.utime(d / name, (now - age_days * 86400,) * 2)
    monkeypatch.setattr(trial_record, "DIR_CAP", 1300)
    TrialRecord(d).close()
    # not used for 30 days: gone; then the least recently used beyond the cap; others left alone
    assert sorted(p.name for p in d.iterdir()) == ["a.jsonl", "b.jsonl", "notes.txt"]
    # a file stops growing at its cap
    monkeypatch.setattr(trial_record, "FILE_CAP", 2000)
    text, ov, runs, plans, seed = trial_args()
    with TrialRecord(d) as rec:
        for i in range(40):
            rec.put(text, {runs[0]: [f"nand.native.read_us={70 + i}"]}, runs, plans, seed, {runs[0]: {"i": i}})
        assert 0 < rec.kept < 40
    assert all(p.stat().st_size <= 2000 for p in d.glob("*.jsonl"))


def test_a_record_directory_others_may_write_is_refused_before_any_trial(fingerprint, tmp_path):
    db, rid = fingerprint
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)  # anyone may put a link there (not sticky, unlike /tmp)
    out = tmp_path / "twin.toml"
    r = cli("fit", "--runs", str(rid), "--db", str(db), "--out", str(out), *FIT,
            env=environ(XDG_STATE_HOME=str(shared)))
    err = r.stderr.strip().splitlines()
    assert r.returncode == 2 and len(err) == 1, r.stderr
    assert "refusing the fit's trial record" in err[0] and "XDG_STATE_HOME" in err[0], err
    assert not out.exists() and not (shared / "ssdlab").exists()


@needs_other_user
def test_a_record_directory_through_another_users_link_is_refused(fingerprint, sticky, tmp_path):
    db, rid = fingerprint
    mine = tmp_path / "mine"
    mine.mkdir(mode=0o700)
    as_nobody("ln", "-s", str(mine), str(sticky / "ssdlab"))  # where the record's directory would be made
    out = tmp_path / "twin.toml"
    r = cli("fit", "--runs", str(rid), "--db", str(db), "--out", str(out), *FIT,
            env=environ(XDG_STATE_HOME=str(sticky)))
    err = r.stderr.strip().splitlines()
    assert r.returncode == 2 and len(err) == 1, r.stderr
    assert f"{sticky / 'ssdlab'} is a symlink owned by uid" in err[0] and "XDG_STATE_HOME" in err[0], err
    assert not out.exists() and list(mine.iterdir()) == []


def test_a_search_takes_a_recorded_trial_instead_of_running_it_and_keeps_its_pace(fingerprint, tmp_path):
    # a point run by one search (two workers' executor: the trial ran in a worker process, and
    # was recorded here, where its result came back) is taken from the record by another,
    # whose executor is never asked to run it, with the same figures; the pace it plans
    # --minutes by is the recorded trial's (its runs' seconds over the workers), not 0
    from ssdlab.executor import open_executor
    from ssdlab.fit.search import Search
    from ssdlab.fit.space import start
    from ssdlab.fit.trial_record import TrialRecord

    ev = evidence_of(fingerprint)
    st = start("tlc-256", ev.facts)

    class Refusing:
        workers = 2

        def run(self, units):
            assert not units, f"asked to run {len(units)} trials the record holds"
            yield from ()

    with TrialRecord(tmp_path / "r") as rec, open_executor(2) as ex:
        ran = Search(ev, st, 7, ex, record=rec).evaluate([st.unit_start()])
        assert rec.kept == 1 and rec.reused == 0
        again = Search(ev, st, 7, Refusing(), record=rec)
        taken = again.evaluate([st.unit_start()])
        assert rec.reused == 1
    assert taken[0].values == ran[0].values and taken[0].loss == ran[0].loss
    assert again.pace > 0
