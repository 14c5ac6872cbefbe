"""`review` and `validate` through executor.py: their independent tests run in parallel and
store and print exactly what running them one after another does."""

import json

import pytest
from typer.testing import CliRunner

pytest.importorskip("ssdlab._sim")

from ssdlab import validate as val  # noqa: E402
from ssdlab.calibration import FILL, QUICK  # noqa: E402
from ssdlab.cli import app  # noqa: E402
from ssdlab.store import Store  # noqa: E402
from ssdlab.targets import open_target  # noqa: E402

from drives import SMALL  # noqa: E402
from fakes import FinishingExecutor  # noqa: E402
SETS = [x for s in SMALL for x in ("--set", s)]
runner = CliRunner()


def review(tmp_path, name, *args):
    db = tmp_path / f"{name}.sqlite"
    r = runner.invoke(app, ["review", "--drive", "sim:tlc-256", *SETS, "--seconds", "2",
                            "--repeat", "1", "--interval", "0", "--db", str(db),
                            "-o", str(tmp_path / name), "--json", *args])
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout), Store(db)


def stored(store):
    """Every stored run without its timestamps: test, args, status, drives, phases."""
    out = []
    for r in sorted(store.runs(), key=lambda r: r["id"]):
        run = store.run(r["id"])
        drives = [(d["spec"], d["status"], d["metrics"],
                   [(p["seq"], p["name"], p["status"], p["totals"])
                    for p in store.phases(d["id"], with_data=False)]) for d in run["drives"]]
        out.append((r["id"], r["test"], r["status"], r["args"], drives))
    return out


# the two tests of the parallel review share one (its tests' drives are built afresh, so a
# review gives the same document and store each time): one worker runs both, and it is
# computed once there
@pytest.fixture(scope="session")
def parallel_review(tmp_path_factory):
    return review(tmp_path_factory.mktemp("review"), "par", "--jobs", "2")


@pytest.mark.xdist_group("parallel_review")
def test_parallel_review_stores_and_prints_what_the_sequential_one_does(tmp_path, parallel_review):
    seq, sstore = review(tmp_path, "seq", "--jobs", "1")
    par, pstore = parallel_review
    assert [d["test"] for d in par["runs"]] == ["fill", "consistency", "working-set", "trim",
                                                 "idle", "quick", "copy", "trace"]
    assert par["runs"] == seq["runs"]  # run ids, metrics, statuses: the same document
    assert stored(pstore) == stored(sstore)
    assert not list(pstore.path.parent.glob("*.pending.json"))  # a test that waited: its file removed
    assert par["report"].endswith("report.html")


@pytest.mark.xdist_group("parallel_review")
def test_a_review_test_gives_what_ssdlab_run_gives(tmp_path, parallel_review):
    """Each test starts from a freshly built drive, so it is independent of the others."""
    doc, _ = parallel_review
    r = runner.invoke(app, ["run", "trim", "--drive", "sim:tlc-256", *SETS, "--seconds", "2",
                            "--db", str(tmp_path / "run.sqlite"), "--json"])
    assert r.exit_code == 0, r.output
    trim = next(x for x in doc["runs"] if x["test"] == "trim")
    assert json.loads(r.stdout)["drives"][0]["metrics"] == trim["drives"][0]["metrics"]


@pytest.mark.xdist_group("parallel_review")
def test_a_parallel_reviews_report_is_the_report_of_its_runs(tmp_path, parallel_review):
    """The review draws its report on its worker processes: the same files, byte for byte,
    as `ssdlab report` of its runs drawn afterwards in one process."""
    from pathlib import Path

    doc, store = parallel_review
    ids = [str(d["run_id"]) for d in doc["runs"]]
    r = runner.invoke(app, ["report", *ids, "--db", str(store.path), "-o", str(tmp_path / "after")])
    assert r.exit_code == 0, r.output
    drawn, after = Path(doc["report"]).parent, tmp_path / "after"
    names = sorted(p.name for p in drawn.iterdir())
    assert len(names) > 10 and names == sorted(p.name for p in after.iterdir())
    for n in names:
        assert (drawn / n).read_bytes() == (after / n).read_bytes(), n


def test_validate_runs_are_the_same_inline_and_on_the_pool():
    jobs = [("sn520-128", FILL), ("xg6-256", QUICK)]
    one = val.run_all(jobs, workers=1)
    two = val.run_all(jobs, workers=2)
    for v in (*one.values(), *two.values()):
        v.pop("wall_s")
    # compared as text: one run's standard deviation is NaN, never equal to itself
    assert repr(sorted(one.items())) == repr(sorted(two.items()))



def test_ctrl_c_in_a_parallel_review_keeps_every_finished_test(tmp_path):
    from ssdlab import review as rv
    from ssdlab.methodology import Options

    store = Store(tmp_path / "r.sqlite")
    opts = Options(seconds=2, repeat=1, interval=0)
    runs = []
    with pytest.raises(KeyboardInterrupt):
        drive = open_target("sim:tlc-256", overrides=SMALL)
        req = rv.Request(store, [("sim:tlc-256", drive)], SMALL, 42, opts, {"review": True})
        rv.run_parallel(req, FinishingExecutor(2, stop=True), lambda test, rid, outs: runs.append(test))
    # the two longest units finished: idle, and the tests that begin with purge and the same
    # fill (one unit, sharing that state: fill, consistency, working-set, trim); quick and
    # copy did not, so the others are stored out of order rather than lost
    assert runs == ["fill", "consistency", "working-set", "trim", "idle"]
    stored = store.runs()
    assert sorted(r["test"] for r in stored) == sorted(runs)
    assert all(r["status"] == "complete" for r in stored)
