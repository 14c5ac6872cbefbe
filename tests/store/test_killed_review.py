"""A parallel review stores its tests in test order, so a test that finishes before an
earlier one waits to be stored: meanwhile it is held in a pending file, which a review
killed outright (SIGKILL) leaves for `ssdlab results import`, and which a review that goes
on removes once the test is stored. A review stopped by a unit the executor could not run
(a worker that died) stores such tests before its error goes on."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import clirun
import pytest

pytest.importorskip("ssdlab._sim")

from ssdlab import pending  # noqa: E402
from ssdlab import review as rv  # noqa: E402
from ssdlab.executor import Done, Executor, _outcome  # noqa: E402
from ssdlab.methodology import Options  # noqa: E402
from ssdlab.runner import RunFailed, StoreWriteFailed  # noqa: E402
from ssdlab.store import Store  # noqa: E402
from ssdlab.targets import open_target  # noqa: E402

from drives import SMALL, set_flags  # noqa: E402

OPTS = ["--seconds", "2", "--repeat", "1", "--interval", "0"]

# `ssdlab review` whose executor hands back the unit of test LATE alone and then nothing
# more, as if every earlier test still computed; READY appears once the review has taken
# that unit (the executor is asked for the next one only then)
STALLED_REVIEW = """
import os, time
import ssdlab.executor as ex

class Stalled(ex.Executor):
    kind = "pool"
    workers = 2

    def run(self, units):
        yield ex._outcome(next(u for u in units if u.key[0][0] == os.environ["LATE"]))
        open(os.environ["READY"], "a").close()
        time.sleep(600)

ex.open_executor = lambda jobs=None, ray=None: Stalled()
from ssdlab.cli import app
app()
"""


def test_a_killed_parallel_review_keeps_a_finished_test_that_waited(tmp_path: Path) -> None:
    db, ready = tmp_path / "r.sqlite", tmp_path / "ready"
    p = subprocess.Popen([sys.executable, "-c", STALLED_REVIEW, "review", "--drive", "sim:tlc-256",
                          *set_flags(SMALL), *OPTS, "--db", str(db), "-o", str(tmp_path / "rep"), "--jobs", "2"],
                         env=clirun.environ(READY=str(ready), LATE="quick"), stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    with clirun.reaped(p):
        t0 = time.monotonic()
        while not ready.exists() and p.poll() is None and time.monotonic() - t0 < 120:
            time.sleep(0.05)
        assert p.poll() is None, p.communicate()
        p.kill()
        p.wait()
    assert Store(db, create=False).runs() == []  # fill, the first test, never finished
    (held,) = tmp_path.glob("r.sqlite.*.pending.json")  # quick, finished, waited for it
    r = clirun.cli("results", "import", str(held), "--db", str(db), timeout=120)
    assert r.returncode == 0, r.stderr
    store = Store(db, create=False)
    (run,) = store.runs()
    assert run["test"] == "quick" and run["status"] == "complete" and run["args"]["review"] is True
    # what the review would have stored: what `ssdlab run quick` stores for the same drive
    one = clirun.cli("run", "quick", "--drive", "sim:tlc-256", *set_flags(SMALL), *OPTS,
                     "--db", str(tmp_path / "one.sqlite"), "--json", timeout=120)
    assert one.returncode == 0, one.stderr
    (drv,) = store.run(run["id"])["drives"]
    assert drv["status"] == "complete" and drv["metrics"] == json.loads(one.stdout)["drives"][0]["metrics"]
    alone = Store(tmp_path / "one.sqlite", create=False)
    assert phases(store, drv["id"]) == phases(alone, alone.run(1)["drives"][0]["id"])


def phases(store: Store, run_drive_id: int) -> list:
    return [(p["seq"], p["name"], p["status"], p["totals"]) for p in store.phases(run_drive_id, with_data=False)]


class InOrder(Executor):
    """Hands back the units in the order of their tests in `first` (the others after)."""
    kind = "pool"

    def __init__(self, first: list[str]):
        self.first = first

    def run(self, units):
        for u in self.ordered(units):
            yield _outcome(u)

    def ordered(self, units):
        return sorted(units, key=lambda u: self.first.index(u.key[0][0]) if u.key[0][0] in self.first else 99)


class FailsOn(InOrder):
    """InOrder, but the unit of test `broken` fails in the executor itself, not in its test
    (a worker that died under it): `error` comes back as its outcome, or with `raised`, the
    executor raises it (as the process pool does for a dead worker)."""

    def __init__(self, first: list[str], broken: str, error: Exception, raised: bool = False):
        super().__init__(first)
        self.broken, self.error, self.raised = broken, error, raised

    def run(self, units):
        for u in self.ordered(units):
            if u.key[0][0] != self.broken:
                yield _outcome(u)
            elif self.raised:
                raise self.error
            else:
                yield Done(u.key, error=self.error)


def test_a_test_that_waited_is_stored_in_order_and_its_file_removed(tmp_path: Path) -> None:
    store = Store(tmp_path / "r.sqlite")
    drive = open_target("sim:tlc-256", overrides=SMALL)
    req = rv.Request(store, [("sim:tlc-256", drive)], SMALL, 42, Options(seconds=2, repeat=1, interval=0),
                     {"review": True})
    seen: list[tuple[str, int, list[str]]] = []
    copies: list[Path] = []

    def on_run(test: str, run_id: int, outcomes: list) -> None:
        files = sorted(tmp_path.glob("r.sqlite.*.pending.json"))
        seen.append((test, run_id, [f.name.split("-")[0] for f in files]))
        for f in files:  # as a review killed now would leave it
            copies.append(tmp_path / "copy.json")
            copies[-1].write_bytes(f.read_bytes())

    rv.run_parallel(req, InOrder(["quick", "fill"]), on_run, tests=["fill", "quick"])
    # quick finished first and waited, held in its file, until fill was stored
    assert seen == [("fill", 1, ["r.sqlite.quick"]), ("quick", 2, [])]
    assert not list(tmp_path.glob("*.pending.json")) and [r["test"] for r in store.runs()] == ["quick", "fill"]
    # a review killed after storing the test but before removing its file: the file adds nothing
    assert pending.import_file(store, copies[0]) == (2, 0)
    assert len(store.runs()) == 2


def test_a_store_that_fails_leaves_the_tests_that_waited_in_their_files_and_names_them(tmp_path: Path,
                                                                                   monkeypatch) -> None:
    """fill's run cannot be stored (the disk full, as the store's write says): quick, finished
    and waiting for it, stays in its file, which the command's line names for the import."""
    store = Store(tmp_path / "r.sqlite")
    drive = open_target("sim:tlc-256", overrides=SMALL)
    req = rv.Request(store, [("sim:tlc-256", drive)], SMALL, 42, Options(seconds=2, repeat=1, interval=0),
                     {"review": True})
    stored = rv.run_test

    def full(store_: Store, test: str, *a, **kw):
        if test == "fill":
            raise StoreWriteFailed("cannot write results store r.sqlite (database or disk is full); "
                                   "what the run recorded is saved to fill.pending.json")
        return stored(store_, test, *a, **kw)

    monkeypatch.setattr(rv, "run_test", full)
    with pytest.raises(StoreWriteFailed) as e:
        rv.run_parallel(req, InOrder(["quick", "fill"]), lambda *a: None, tests=["fill", "quick"])
    (held,) = tmp_path.glob("r.sqlite.quick-*.pending.json")
    line = str(e.value)
    assert "\n" not in line and line.startswith("cannot write results store r.sqlite")
    assert f"the finished test that waited to be stored is saved to {held} (quick)" in line
    assert line.endswith("`ssdlab results import FILE` for each")
    assert store.runs() == []
    run_id, phases_in = pending.import_file(store, held)
    assert store.run(run_id)["test"] == "quick" and store.run(run_id)["status"] == "complete" and phases_in > 0


@pytest.mark.parametrize("raised", [False, True], ids=["outcome", "raised"])
def test_a_unit_that_fails_in_the_executor_stores_the_finished_tests_that_waited(tmp_path: Path,
                                                                             raised: bool) -> None:
    """quick finished and waited for fill, whose worker then died: quick is stored (its file
    removed), then the review stops with the executor's error."""
    store = Store(tmp_path / "r.sqlite")
    drive = open_target("sim:tlc-256", overrides=SMALL)
    req = rv.Request(store, [("sim:tlc-256", drive)], SMALL, 42, Options(seconds=2, repeat=1, interval=0),
                     {"review": True})
    died = RuntimeError("a worker process died (out of memory?); run with fewer --jobs")
    seen: list[str] = []
    with pytest.raises(rv.ReviewStopped) as e:
        rv.run_parallel(req, FailsOn(["quick", "fill"], "fill", died, raised), lambda test, *a: seen.append(test),
                        tests=["fill", "quick", "copy"])
    assert e.value.error is died
    assert seen == ["quick"] and [(r["test"], r["status"]) for r in store.runs()] == [("quick", "complete")]
    assert not list(tmp_path.glob("*.pending.json"))


def test_a_store_that_fails_after_a_unit_failed_keeps_the_tests_that_waited_in_their_files(tmp_path: Path,
                                                                                      monkeypatch) -> None:
    """fill's worker died and storing quick, finished before it, finds the store full: quick
    and copy, which waited too, keep their files, which the store's line names."""
    store = Store(tmp_path / "r.sqlite")
    drive = open_target("sim:tlc-256", overrides=SMALL)
    req = rv.Request(store, [("sim:tlc-256", drive)], SMALL, 42, Options(seconds=2, repeat=1, interval=0),
                     {"review": True})

    def full(store_: Store, test: str, *a, **kw):
        raise StoreWriteFailed(f"cannot write results store r.sqlite (database or disk is full); "
                               f"what the run recorded is saved to {test}.pending.json")

    monkeypatch.setattr(rv, "run_test", full)
    died = RuntimeError("a worker process died (out of memory?); run with fewer --jobs")
    with pytest.raises(StoreWriteFailed) as e:
        rv.run_parallel(req, FailsOn(["quick", "copy", "fill"], "fill", died), lambda *a: None,
                        tests=["fill", "quick", "copy"])
    (quick,) = tmp_path.glob("r.sqlite.quick-*.pending.json")
    (copy,) = tmp_path.glob("r.sqlite.copy-*.pending.json")
    assert f"the finished tests that waited to be stored are saved to {quick} (quick), {copy} (copy)" in str(e.value)
    assert store.runs() == []


@pytest.mark.parametrize("command", ["review", "pts"])
def test_a_command_whose_worker_died_says_so_then_what_it_stored_and_how_to_go_on(tmp_path: Path, monkeypatch,
                                                                                  command: str) -> None:
    """The error's line (exit status 1), then the tests stored and those not, and the commands
    to go on: as when a test of the review fails."""
    from typer.testing import CliRunner

    import ssdlab.executor
    from ssdlab.cli import app

    died = RuntimeError("a worker process died (out of memory?); run with fewer --jobs")
    first, broken, args = (["quick"], "fill", ["review", *OPTS]) if command == "review" else (
        ["pts-iops"], "pts-throughput", ["pts", "--test", "iops", "--test", "throughput", "--quick"])
    monkeypatch.setattr(ssdlab.executor, "open_executor", lambda jobs=None, ray=None: FailsOn(first, broken, died))
    db, rep = tmp_path / "r.sqlite", tmp_path / "rep"
    r = CliRunner().invoke(app, [*args, "--drive", "sim:tlc-256", *set_flags(SMALL), "--db", str(db), "-o", str(rep),
                                 "--jobs", "2"])
    assert r.exit_code == 1, r.output
    lines = [x for x in r.stderr.splitlines() if not x.startswith("ssdlab:   ")]  # (pts: each stored test)
    assert lines[0] == ("ssdlab: error: RuntimeError: a worker process died (out of memory?); run with fewer --jobs "
                        "(set SSDLAB_DEBUG=1 for the traceback)"), r.stderr
    assert lines[1].startswith(f"ssdlab: {command} stopped; tests stored: {first[0]} (run 1); not run: {broken}")
    assert len(lines) == 3 and "to go on" in lines[2], r.stderr
    assert [r["test"] for r in Store(db, create=False).runs()] == first
    assert not list(tmp_path.glob("*.pending.json"))


def failing(monkeypatch, broken: set[str]) -> None:
    """The units of the tests in `broken` fail in their test (the simulator raised in it)."""
    compute_group = rv.compute_group

    def computed(jobs, keep):
        out = compute_group(jobs, keep)
        for job, c in zip(jobs, out):
            if job.test in broken:  # its second phase raised
                c.results, c.error = c.results[:1], RuntimeError(f"{job.test} broke")
        return out

    monkeypatch.setattr(rv, "compute_group", computed)


def test_a_test_that_fails_stops_the_review_after_the_finished_tests_are_stored(tmp_path: Path, monkeypatch) -> None:
    """quick and copy finished while fill, the first test, ran; fill then failed: the review
    stops as a sequential one does (RunFailed), fill stored as failed, but quick and copy are
    stored too, not dropped; copy failing as well is stored so and named."""
    store = Store(tmp_path / "r.sqlite")
    drive = open_target("sim:tlc-256", overrides=SMALL)
    req = rv.Request(store, [("sim:tlc-256", drive)], SMALL, 42, Options(seconds=2, repeat=1, interval=0),
                     {"review": True})
    failing(monkeypatch, {"fill", "copy"})
    seen: list[str] = []
    with pytest.raises(RunFailed) as e:
        rv.run_parallel(req, InOrder(["quick", "copy", "fill"]), lambda test, *a: seen.append(test),
                        tests=["fill", "quick", "copy"])
    runs = {r["test"]: (r["id"], r["status"]) for r in store.runs()}
    assert runs == {"fill": (e.value.run_id, "failed"), "quick": (runs["quick"][0], "complete"),
                    "copy": (runs["copy"][0], "failed")}
    assert e.value.also == [("copy", runs["copy"][0])] and seen == ["quick"]
    assert not list(tmp_path.glob("*.pending.json"))


def test_a_review_whose_test_failed_lists_the_tests_stored_after_it_too(tmp_path: Path, monkeypatch) -> None:
    from typer.testing import CliRunner

    import ssdlab.executor
    from ssdlab.cli import app

    failing(monkeypatch, {"fill"})
    monkeypatch.setattr(ssdlab.executor, "open_executor", lambda jobs=None, ray=None: InOrder(["quick"]))
    db = tmp_path / "r.sqlite"
    r = CliRunner().invoke(app, ["review", "--drive", "sim:tlc-256", *set_flags(SMALL), *OPTS, "--db", str(db),
                                 "-o", str(tmp_path / "rep"), "--jobs", "2"])
    assert r.exit_code == 1, r.output
    lines = r.stderr.splitlines()
    assert lines[0].startswith("ssdlab: error: run 1 failed: RuntimeError: fill broke"), r.stderr
    stored, _, not_run = lines[1].partition("; not run: ")
    assert stored.startswith("ssdlab: review stopped; tests stored: fill (run 1, failed), "), r.stderr
    runs = Store(db, create=False).runs()  # (newest first) the tests that finished with fill too
    assert stored.endswith(f"quick (run {len(runs)})") and "quick" not in not_run, r.stderr
    assert [(x["test"], x["status"]) for x in runs][::len(runs) - 1] == [("quick", "complete"), ("fill", "failed")]


class Breaks:
    """A drive that raises at its second phase (the simulator failed in it)."""

    def __init__(self, target, test: str):
        self.target, self.test, self.phases = target, test, 0

    def __getattr__(self, name: str):
        return getattr(self.target, name)

    def run_phases(self, phases, on_start=None, on_end=None):
        self.phases += len(phases)
        if self.phases >= 2:
            raise RuntimeError(f"{self.test} broke")
        return self.target.run_phases(phases, on_start, on_end)


@pytest.mark.parametrize("jobs", ["2", "1"])
def test_a_pts_whose_test_failed_lists_the_tests_stored_and_how_to_go_on(tmp_path: Path, monkeypatch,
                                                                         jobs: str) -> None:
    """As a review's: the error's line, then `pts stopped; tests stored: ...` and the command
    that runs the rest; in parallel (iops finished before throughput failed, latency still
    computing) and test after test."""
    from typer.testing import CliRunner

    import ssdlab.cli.pts
    import ssdlab.executor
    from ssdlab.cli import app

    if jobs == "2":
        failing(monkeypatch, {"pts-throughput"})
        monkeypatch.setattr(ssdlab.executor, "open_executor", lambda jobs=None, ray=None: InOrder(["pts-iops"]))
    else:
        run_test = ssdlab.cli.pts.run_test

        def breaking(store, test, drives, *a, **kw):
            if test == "pts-throughput":
                drives = [(s, Breaks(t, test)) for s, t in drives]
            return run_test(store, test, drives, *a, **kw)

        monkeypatch.setattr(ssdlab.cli.pts, "run_test", breaking)
    db = tmp_path / "r.sqlite"
    r = CliRunner().invoke(app, ["pts", "--test", "iops", "--test", "throughput", "--test", "latency", "--quick",
                                 "--drive", "sim:tlc-256", *set_flags(SMALL), "--db", str(db), "-o", str(tmp_path / "rep"),
                                 "--jobs", jobs, "--json"])
    assert r.exit_code == 1, r.output
    doc = json.loads(r.stdout)  # a script learns the runs kept, as from an interrupted pts
    assert doc["report"] is None
    assert [(d["run_id"], d["test"], d["status"]) for d in doc["runs"]] == [
        (1, "pts-iops", "complete"), (2, "pts-throughput", "failed")]
    lines = [x for x in r.stderr.splitlines() if x.startswith(("ssdlab: error", "ssdlab: pts stopped", "ssdlab: to go"))]
    assert lines == [
        "ssdlab: error: run 2 failed: RuntimeError: pts-throughput broke (set SSDLAB_DEBUG=1 for the traceback)",
        "ssdlab: pts stopped; tests stored: pts-iops (run 1), pts-throughput (run 2, failed); not run: pts-latency",
        f"ssdlab: to go on, the same `ssdlab pts` with --test throughput --test latency; then `ssdlab report 1 2 "
        f"<the new runs> -o {tmp_path / 'rep'} --db {db}` of all the runs"], r.stderr
