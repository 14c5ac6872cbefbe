"""A fit stopped (Ctrl-C, SIGTERM), or failing, after its twin is written, while its report is
made (from runs, the report runs the twin's whole fingerprint at the drive's size for its
overlay): the twin is kept, and the one line says so and where; the report directory the fit
made is not left behind empty."""

from __future__ import annotations

import signal

import pytest

from drives import SMALL
from fitruns import fingerprint_run, handlers_kept, signal_self

pytestmark = pytest.mark.xdist_group("fit-report-after-twin")


@pytest.fixture(scope="module")
def fingerprint(tmp_path_factory):
    return fingerprint_run(tmp_path_factory, SMALL, "2")


@pytest.mark.parametrize("signum, status", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_fit_stopped_during_its_report_keeps_its_twin_and_says_so(fingerprint, tmp_path, monkeypatch, capsys,
                                                                     signum, status):
    from ssdlab.cli import app
    from ssdlab.fit import fitting
    from ssdlab.targets.sim import SimTarget

    monkeypatch.setattr(fitting, "twin_phases", lambda *a, **k: signal_self(signum))
    db, rid = fingerprint
    out, report = tmp_path / "twin.toml", tmp_path / "report"
    with handlers_kept(), pytest.raises(SystemExit) as e:
        app(["fit", "--runs", str(rid), "--db", str(db), "--out", str(out), "-o", str(report), "--jobs", "1",
             "--trials", "2", "--params", "nand.native.read_us", "--no-crossval"])
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
