"""--destroy-data given with simulated drives only lets nothing be written: the run goes on
(a simulated drive writes nothing but the results store), and a warning says the device
named is no --drive of the run."""

from __future__ import annotations

from clirun import cli


def test_a_consent_with_only_simulated_drives_warns_that_it_does_nothing(tmp_path):
    r = cli("run", "fill", "--drive", "sim:tlc-256", "--destroy-data=/dev/sdz", "--plan", "--db", str(tmp_path / "r.db"))
    assert r.returncode == 0, r.stderr
    assert r.stderr.startswith("ssdlab: warning: --destroy-data=/dev/sdz has no effect: every --drive of this run "
                               "is simulated"), r.stderr
    assert r.stderr.count("\n") == 1 and "# fill on sim:tlc-256" in r.stdout


def test_no_warning_without_the_consent(tmp_path):
    r = cli("run", "fill", "--drive", "sim:tlc-256", "--plan", "--db", str(tmp_path / "r.db"))
    assert r.returncode == 0 and "warning" not in r.stderr, r.stderr
