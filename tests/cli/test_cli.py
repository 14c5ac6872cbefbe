import json
import os

import clirun
import pytest
from fakes import FakeTarget, with_fake_drives
from typer.testing import CliRunner

import ssdlab.targets
from ssdlab.cli import app
from ssdlab.phase import GB
from ssdlab.store import Store

runner = CliRunner()


class RefusingTarget(FakeTarget):
    """A real drive's safety check and plan, in miniature: writes are refused."""

    def preflight(self, phases):
        from ssdlab.targets.fio.target import writes
        from ssdlab.targets.guard.safety import UnsafeTarget

        if any(writes(p) for p in phases):
            raise UnsafeTarget("refusing fake:refused: it carries data (signatures ext4); "
                               "if you mean to erase it, pass --destroy-data=fake:refused")

    def plan(self, phases):
        return "# plan of fake:refused\n" + "".join(f"$ {p.kind} {p.name}\n" for p in phases)
real_open = ssdlab.targets.open_target


@pytest.fixture
def db(tmp_path, monkeypatch):
    """`--drive fake:NAME` opens a FakeTarget (fake:interrupt stops mid-run); other
    specs go to the real open_target."""

    def open_target(drive, **kw):
        spec = str(drive)
        if spec == "fake:interrupt":
            return FakeTarget(interrupt_at=("random", 3))
        if spec == "fake:valueerror":
            return FakeTarget(fail_at="fill", fail_with=ValueError)
        if spec == "fake:bug":
            return FakeTarget(fail_at="fill")
        if spec == "fake:refused":
            return RefusingTarget(capacity=8 * GB)
        if spec.startswith("fake:"):
            return FakeTarget(capacity=8 * GB, cache_bytes=2 * GB)
        return real_open(drive, **kw)

    monkeypatch.setattr(ssdlab.targets, "open_target", open_target)
    monkeypatch.setattr(ssdlab.targets, "parse_drive", with_fake_drives(ssdlab.targets.parse_drive))
    return str(tmp_path / "r.sqlite")


def invoke(*args):
    return runner.invoke(app, [str(a) for a in args])


def run_json(db, *args):
    r = invoke("run", *args, "--db", db, "--json")
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)


def test_run_json_contract(db):
    doc = run_json(db, "fill", "--drive", "fake:a", "--drive", "fake:b")
    assert set(doc) == {"run_id", "test", "drives"}
    assert doc["test"] == "fill" and isinstance(doc["run_id"], int)
    assert [d["drive"] for d in doc["drives"]] == ["fake:a", "fake:b"]
    for d in doc["drives"]:
        assert set(d) == {"drive", "metrics", "status"}
        assert d["status"] == "complete"
        # the fake's 2 GB cache, in whole 249 MB segments (1/32 of its area, rounded down)
        assert d["metrics"]["slc_cache_gb"] == 1.992
        assert d["metrics"]["mbps_per_watt"] is None
    assert r_stderr_is_quiet(db)


def r_stderr_is_quiet(db):
    r = invoke("run", "trim", "--drive", "fake:a", "--seconds", "5", "--db", db, "--json")
    return r.exit_code == 0 and r.stderr == "" and json.loads(r.stdout)["test"] == "trim"


def test_run_options_reach_the_test(db):
    doc = run_json(db, "consistency", "--drive", "fake:a", "--seconds", "30", "--spare", "25",
                   "--testbed", "rig-1")
    store = Store(db)
    r = store.run(doc["run_id"])
    assert r["testbed"] == "rig-1" and r["args"]["spare"] == 25.0
    phases = store.phases(r["drives"][0]["id"])
    assert phases[-1]["spec"]["stop_seconds"] == 30
    assert phases[-1]["series"]["iops"].size == 30
    assert phases[1]["spec"]["length"] <= 0.75 * 8 * GB


def test_plan_runs_nothing(db, tmp_path):
    r = invoke("run", "trim", "--drive", "fake:a", "--plan", "--json")
    assert r.exit_code == 0, r.output
    plan = json.loads(r.stdout)["plan"][0]
    assert [p["kind"] for p in plan["phases"]] == ["purge", "io", "io", "trim", "io"]
    assert not (tmp_path / "r.sqlite").exists()


@pytest.mark.parametrize("args, message", [
    (["run", "nope", "--drive", "fake:a"], "unknown test 'nope'"),
    (["run", "fill"], "at least one --drive"),
    (["run", "fill", "--drive", "bogus"], "unknown drive 'bogus'"),
    (["run", "fill", "--drive", "sim:nope"], "unknown profile 'nope'"),
    (["run", "fill", "--drive", "missing.toml"], "profile file 'missing.toml' not found"),
    (["run", "fill", "--drive", "fake:a", "--set", "nand.channels"], "bad --set 'nand.channels'"),
    (["run", "fill", "--drive", "fake:a", "--spare", "100"], "--spare 100"),
    (["run", "fill", "--drive", "fake:a", "--repeat", "0"], "--repeat 0"),
    (["results", "show", "99"], "no run 99"),
    (["results", "export", "1", "--format", "xml"], "--format xml"),
    (["report", "-o", "out"], "name runs to report, or --latest"),
    (["report", "--latest", "-o", "out"], "no runs in"),
    (["report", "--latest", "-o", "out"], "yet: run a test first, or check --db"),
    (["compare", "5"], "no run 5"),
])
def test_user_errors_are_one_line_exit_2(db, args, message):
    Store(db).close()  # an empty store: read commands never create one
    r = invoke(*args, "--db", db)
    assert r.exit_code == 2, r.output
    assert r.stdout == ""
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], r.stderr


def test_unwritable_db_is_exit_2(db, tmp_path):
    f = tmp_path / "file"
    f.write_text("")
    r = invoke("run", "fill", "--drive", "fake:a", "--db", f / "r.sqlite")
    assert r.exit_code == 2
    assert r.stderr.count("\n") == 1 and "cannot open results store" in r.stderr


def test_interrupted_run_is_kept(db):
    r = invoke("run", "consistency", "--drive", "fake:a", "--drive", "fake:interrupt",
               "--seconds", "60", "--db", db, "--json")  # 60 s: 3 s rounds, steady after the burst
    assert r.exit_code == 130
    assert "interrupted" in r.stderr
    doc = json.loads(r.stdout)  # still one JSON document: the run id and each drive's state
    assert [d["status"] for d in doc["drives"]] == ["complete", "interrupted"]
    assert doc["drives"][0]["metrics"]["steady_iops"] > 0 and doc["drives"][1]["metrics"] == {}
    store = Store(db)
    run = store.run(store.latest_run_id())
    assert run["status"] == "interrupted"
    assert store.phases(run["drives"][1]["id"], with_data=False)[-1]["status"] == "partial"


def test_results_list_show_export(db):
    doc = run_json(db, "fill", "--drive", "fake:a")
    rid = doc["run_id"]
    r = invoke("results", "list", "--db", db, "--json")
    assert [x["id"] for x in json.loads(r.stdout)] == [rid]
    r = invoke("results", "list", "--db", db)
    assert r.exit_code == 0 and "fill" in r.stdout and "fake:a" in r.stdout
    r = invoke("results", "show", rid, "--db", db, "--json")
    shown = json.loads(r.stdout)
    assert shown["drives"][0]["metrics"] == doc["drives"][0]["metrics"]
    r = invoke("results", "export", rid, "--format", "csv", "--db", db)
    assert r.exit_code == 0 and r.stdout.startswith("run_id,drive,phase_seq")
    assert ",segments,mbps," in r.stdout
    r = invoke("results", "export", rid, "--format", "json", "--db", db)
    # an 8 GB drive's fill is recorded in 1/32 of its area, rounded down to whole MB (methodology/fill.py)
    assert json.loads(r.stdout)["drives"][0]["phases"][1]["segments"]["gb"][0] == 0.249


def test_export_never_replaces_a_fifo_or_device_with_a_file(db, tmp_path):
    """`-o` naming a FIFO (or /dev/null): refused, the node left as it was, not renamed over."""
    import os
    import stat

    rid = run_json(db, "fill", "--drive", "fake:a")["run_id"]
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    r = invoke("results", "export", rid, "--format", "csv", "-o", fifo, "--db", db)
    assert r.exit_code == 2 and r.stderr.count("\n") == 1, r.stderr
    assert f"-o {fifo}: {fifo} is a device, FIFO or socket" in r.stderr and "stdout" in r.stderr
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert not [p.name for p in tmp_path.iterdir() if not p.name.startswith(("pipe", "r.sqlite"))]


def test_a_phase_too_small_for_its_blocks_is_refused_before_the_run(tmp_path):
    """--spare 99.99 leaves 12 MiB for quick's 16 MiB AS SSD blocks: exit 2, no run stored
    (it was a run stored as failed, exit 1, when the simulator refused the phase)."""
    db = tmp_path / "r.sqlite"
    r = invoke("run", "quick", "--drive", "sim:sn520-128", "--spare", "99.99", "--repeat", "1",
               "--seconds", "0.1", "--interval", "0", "--db", db)
    assert r.exit_code == 2 and r.stderr.count("\n") == 1, r.stderr
    assert "too few for 1 job(s) of 16777216-byte blocks" in r.stderr and "less --spare" in r.stderr
    assert not db.exists()  # checked before the store is made


def test_compare_shows_pct_change(db):
    a = run_json(db, "fill", "--drive", "fake:a")["run_id"]
    b = run_json(db, "fill", "--drive", "fake:b", "--testbed", "other")["run_id"]
    r = invoke("compare", a, b, "--db", db, "--json")
    assert r.exit_code == 0
    assert "different testbed tags" in r.stderr
    doc = json.loads(r.stdout)
    assert doc["columns"] == [f"{a}:fake:a (8 GB)", f"{b}:fake:b (8 GB)"]
    peak = next(x for x in doc["rows"] if x["metric"] == "peak_mbps")
    assert peak["pct"] == [None, 0.0]


def test_report_calls_build_report(db, tmp_path):
    pytest.importorskip("ssdlab.report")
    rid = run_json(db, "fill", "--drive", "fake:a")["run_id"]
    r = invoke("report", "--latest", "-o", tmp_path / "rep", "--db", db)
    assert r.exit_code == 0, r.output
    html = r.stdout.strip()
    assert html.endswith(".html") and (tmp_path / "rep").is_dir()
    assert str(rid) in open(html).read()


def test_command_line_mistakes_are_one_line_in_a_real_process(tmp_path):

    for args, message in ((["run"], "Missing argument"), (["run", "fill", "--bogus"], "--bogus"),
                          (["run", "fill", "--drive", "x", "--spare", "abc"], "--spare")):
        p = clirun.cli(*args, timeout=60)
        assert p.returncode == 2 and p.stdout == ""
        assert p.stderr.count("\n") == 1 and message in p.stderr, p.stderr


def test_a_missing_test_names_the_tests_to_choose_from(tmp_path):
    for cmd in ("run", "sweep"):
        p = clirun.cli(cmd, timeout=60)
        assert p.returncode == 2 and p.stdout == "" and p.stderr.count("\n") == 1, p.stderr
        assert "Missing argument 'test': one of: fill, consistency," in p.stderr, p.stderr


def test_version_is_printed():
    p = clirun.cli("--version", timeout=60)
    assert p.returncode == 0 and p.stderr == "", p.stderr
    assert p.stdout == f"ssdlab {ssdlab.__version__}\n"


def test_target_value_error_mid_run_is_exit_1_and_failed(db):
    """Everything the user gave is checked before a run starts: a ValueError from inside
    the run (a parse failure, a bug) is not the user's error (exit 1, not 2)."""
    r = invoke("run", "fill", "--drive", "fake:valueerror", "--db", db, "--json")
    assert r.exit_code == 1 and r.stdout == ""
    assert r.stderr == ("ssdlab: error: run 1 failed: ValueError: fake failure in fill "
                        "(set SSDLAB_DEBUG=1 for the traceback)\n")
    run = Store(db).run(1)
    assert run["status"] == "failed" and run["drives"][0]["status"] == "failed"


def test_unexpected_exception_is_one_line_exit_1(db):
    r = invoke("run", "fill", "--drive", "fake:bug", "--db", db)
    assert r.exit_code == 1
    assert r.stderr.count("\n") == 1 and "RuntimeError: fake failure in fill" in r.stderr
    assert Store(db).run(1)["status"] == "failed"


def test_default_store_lives_in_the_user_data_dir(db, tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    r = invoke("run", "fill", "--drive", "fake:a", "--json")
    assert r.exit_code == 0, r.output
    assert (tmp_path / "xdg" / "ssdlab" / "results.sqlite").is_file()
    r = invoke("results", "list", "--json")
    assert len(json.loads(r.stdout)) == 1


def test_human_output_and_unused_seconds_warning(db):
    r = invoke("run", "fill", "--drive", "fake:a", "--seconds", "5", "--db", db)
    assert r.exit_code == 0
    assert "warning: --seconds is not used by fill" in r.stderr
    assert "peak_mbps\t" in r.stdout and f"stored as run 1 in {db}" in r.stdout


def test_refused_drive_exits_2_and_stores_no_run(db):
    r = invoke("run", "fill", "--drive", "fake:a", "--drive", "fake:refused", "--db", db, "--json")
    assert r.exit_code == 2 and r.stdout == ""
    assert r.stderr == ("ssdlab: error: refusing fake:refused: it carries data (signatures ext4); "
                        "if you mean to erase it, pass --destroy-data=fake:refused\n")
    assert Store(db).runs(10) == []  # checked before the run was created: no `failed` run
    rep = os.path.join(os.path.dirname(db), "rep")
    for cmd in ("review", "pts"):  # refused before the report directory is made
        r = invoke(cmd, "--drive", "fake:refused", "-o", rep, "--db", db)
        assert r.exit_code == 2 and r.stderr.count("\n") == 1 and "refusing" in r.stderr
        assert Store(db).runs(10) == [] and not os.path.exists(rep)


def test_read_only_working_set_passes_the_safety_check(db):
    doc = run_json(db, "working-set", "--drive", "fake:refused", "--no-precondition",
                   "--seconds", "1")
    assert doc["drives"][0]["status"] == "complete"
    assert doc["drives"][0]["metrics"]["iops_by_gb"]["1"] > 0
    store = Store(db)
    run = store.run(doc["run_id"])
    assert run["args"]["precondition"] is False
    names = [p["name"] for p in store.phases(run["drives"][0]["id"], with_data=False)]
    # no purge, no fill: the working sets, then the QD1 reads over the whole area
    assert names[-1] == "qd1_reads" and all(n.startswith("ws_") for n in names[:-1])
    # with its preconditioning the same test writes, and is refused
    r = invoke("run", "working-set", "--drive", "fake:refused", "--db", db)
    assert r.exit_code == 2 and "refusing fake:refused" in r.stderr


def test_no_precondition_only_where_a_test_allows_it(db):
    r = invoke("run", "fill", "--drive", "fake:a", "--no-precondition", "--db", db)
    assert r.exit_code == 2 and r.stdout == ""
    assert r.stderr.count("\n") == 1 and "only working-set can skip" in r.stderr


def test_plan_of_a_real_drive_is_the_targets_own_with_fio_jobs(db, tmp_path):
    r = invoke("run", "working-set", "--drive", "fake:refused", "--plan", "--fio-jobs", "--seconds", "1")
    assert r.exit_code == 0, r.output
    assert r.stdout.startswith(
        "# plan of fake:refused\n$ purge purge\n$ io fill\n$ idle settle\n$ io ws_1\n")
    assert "kind" not in r.stdout  # not the phase table
    r = invoke("run", "working-set", "--drive", "fake:refused", "--plan", "--fio-jobs", "--no-precondition")
    assert r.stdout.splitlines()[1] == "$ io ws_1"
    # without --fio-jobs: its estimate and device line, then the phase table
    r = invoke("run", "working-set", "--drive", "fake:refused", "--plan", "--seconds", "1")
    assert r.exit_code == 0 and r.stdout.startswith("# estimate: about "), r.output
    assert "# plan of fake:refused\n" in r.stdout and "$ io" not in r.stdout
    assert "# working-set on fake:refused\n#\tname\tkind\twhat\n" in r.stdout
    # a simulated drive: the phase table
    r = invoke("run", "trim", "--drive", "fake:a", "--plan", "--seconds", "5")
    assert r.exit_code == 0 and r.stdout.startswith("# trim on fake:a\n#\tname\tkind\twhat\n")
    assert not (tmp_path / "r.sqlite").exists()


def test_sigterm_stops_a_run_like_ctrl_c(tmp_path):
    import signal
    import time

    from clirun import fake_cli

    ready, db = tmp_path / "ready", tmp_path / "r.sqlite"
    p = fake_cli(ready, "run", "consistency", "--drive", "fake:a", "--seconds", "600", "--db", str(db),
                 "--json")
    with clirun.reaped(p):
        t0 = time.monotonic()
        while not ready.exists() and p.poll() is None and time.monotonic() - t0 < 60:
            time.sleep(0.05)
        time.sleep(0.5)  # a few samples into the random-write phase
        p.send_signal(signal.SIGTERM)
        out, err = p.communicate(timeout=60)
    assert p.returncode == 143, err
    assert err == "ssdlab: run 1 interrupted; what was recorded is kept\n"
    doc = json.loads(out)
    assert doc["drives"][0]["status"] == "interrupted"
    store = Store(db)
    run = store.run(1)
    assert run["status"] == "interrupted"
    ph = store.phases(run["drives"][0]["id"])
    assert [x["status"] for x in ph] == ["complete", "complete", "partial"]
    assert 0 < ph[-1]["series"]["iops"].size < 600


def test_unwritable_report_directory_is_exit_2(db, tmp_path):
    pytest.importorskip("ssdlab.report")
    run_json(db, "fill", "--drive", "fake:a")
    f = tmp_path / "file"
    f.write_text("")
    r = invoke("report", "--latest", "-o", f / "rep", "--db", db)
    assert r.exit_code == 2 and r.stdout == ""
    assert r.stderr == f"ssdlab: error: cannot write the report to {f / 'rep'}: {f} is not a directory\n"
