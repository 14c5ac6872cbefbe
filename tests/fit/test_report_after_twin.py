"""A fit stopped (Ctrl-C, SIGTERM), or failing, after its twin is written, while its report is
made (from runs, the report runs the twin's whole fingerprint at the drive's size for its
overlay): the twin is kept, and the one line says so and where; the report directory the fit
made is not left behind empty."""

from __future__ import annotations

import json
import signal

import pytest

from clirun import cli
from drives import SMALL, set_flags

pytestmark = pytest.mark.xdist_group("fit-report-after-twin")


@pytest.fixture(scope="module")
def fingerprint(tmp_path_factory):
    d = tmp_path_factory.mktemp("fp")
    db = d / "r.sqlite"
    r = cli("run", "fingerprint", "--drive", "sim:tlc-256", *set_flags(SMALL), "--seconds", "10", "--interval", "2",
            "--db", str(db), "--json", check=True)
    return db, json.loads(r.stdout)["run_id"]


@pytest.mark.parametrize("signum, status", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_fit_stopped_during_its_report_keeps_its_twin_and_says_so(fingerprint, tmp_path, monkeypatch, capsys,
                                                                     signum, status):
    import os

    from ssdlab.cli import app
    from ssdlab.fit import fitting
    from ssdlab.targets.sim import SimTarget

    def stopped(*a, **k):
        os.kill(os.getpid(), signum)
        while True:
            pass

    monkeypatch.setattr(fitting, "twin_phases", stopped)
    db, rid = fingerprint
    out, report = tmp_path / "twin.toml", tmp_path / "report"
    handlers = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        with pytest.raises(SystemExit) as e:
            app(["fit", "--runs", str(rid), "--db", str(db), "--out", str(out), "-o", str(report), "--jobs", "1",
                 "--trials", "2", "--params", "nand.native.read_us", "--no-crossval"])
    finally:
        for s, h in handlers.items():
            signal.signal(s, h)
    assert e.value.code == status
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "fit interrupted while writing its report" in err[0], err
    assert f"the twin is written to {out}" in err[0] and f"no report written to {report}" in err[0], err
    SimTarget(out.read_text())  # the whole twin, usable as --drive sim:./twin.toml
    assert not report.exists()  # the directory this fit made, left empty: removed


def test_a_report_that_fails_after_the_twin_says_the_twin_is_kept(fingerprint, tmp_path, monkeypatch, capsys):
    from ssdlab.cli import app
    from ssdlab.fit import report as fit_report
    from ssdlab.targets.sim import SimTarget

    def full(*a, **k):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(fit_report, "write", full)
    db, rid = fingerprint
    out, report = tmp_path / "twin.toml", tmp_path / "report"
    with pytest.raises(SystemExit) as e:
        app(["fit", "--runs", str(rid), "--db", str(db), "--out", str(out), "-o", str(report), "--jobs", "1",
             "--trials", "2", "--params", "nand.native.read_us", "--no-crossval"])
    assert e.value.code == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "No space left on device" in err[0], err
    assert f"the twin is written to {out}" in err[0] and f"no report written to {report}" in err[0], err
    SimTarget(out.read_text())
    assert not report.exists()
