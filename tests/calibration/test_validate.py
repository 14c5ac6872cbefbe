"""Calibration: the built-in profiles against the published figures of methodology.md.

The default run checks a representative subset (one capacity of each NVMe family: every
figure but the 256 GB drives' stall checks, whose 2000 s consistency runs would double its
time; the 128 GB drives check those figures); `-m slow` (and `make bench`) checks every
figure. A figure the current simulator cannot reach is an xfail carrying the reason
(validate.XFAIL, also in docs/calibration.md), strict: it fails the suite if it starts
to pass, so the list stays honest."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from ssdlab import validate as val
from ssdlab.calibration import FILL
from ssdlab.cli import app
from ssdlab.profiles import builtin_ids

FAST = ["xg6-256", "pm981a-256", "sn520-128", "pm991-128", "bg4-128"]
FAST_WITHOUT = {("xg6-256", "consistency"), ("pm981a-256", "consistency")}


def fast(f: val.Figure) -> bool:
    return f.drive in FAST and (f.drive, f.run[0]) not in FAST_WITHOUT


def params(chosen):
    out = []
    for f in val.FIGURES:
        if chosen is None or chosen(f):
            why = val.XFAIL.get((f.drive, f.name))
            marks = [pytest.mark.xfail(reason=why, strict=True)] if why else []
            out.append(pytest.param(f.drive, f.name, marks=marks, id=f"{f.drive}:{f.name}"))
    return out


# one worker runs this module and its validate runs are session fixtures: computed once, even
# when that worker interleaves other modules' tests with these (a module fixture would be
# torn down and computed again)
pytestmark = pytest.mark.xdist_group("validate")


def row(doc, drive, name):
    return next(r for r in doc["figures"] if r["drive"] == drive and r["figure"] == name)


@pytest.fixture(scope="session")
def fast_validation():
    """validate(FAST) of the `fast` figures, and the runs it made (seeded: the same on every call), so that a
    test of the command's output for some of these drives need not run them again."""
    runs: dict = {}
    real = val.run_all

    def recording(*args, **kw):
        out = real(*args, **kw)
        runs.update(out)
        return out

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(val, "run_all", recording)
        mp.setattr(val, "FIGURES", [f for f in val.FIGURES if fast(f)])
        doc = val.validate(FAST)
    return doc, runs


@pytest.fixture(scope="session")
def fast_doc(fast_validation):
    return fast_validation[0]


@pytest.fixture
def fast_runs_reused(fast_validation, monkeypatch):
    """validate's runs answered from fast_validation's (every run it asks for must be one of
    them, without overrides): validate's selection, evaluation and output run as they are."""
    runs = fast_validation[1]

    def reuse(jobs, workers=None, log=None, overrides=(), ray=None):
        assert not overrides and not ray
        return {j: runs[j] for j in jobs}

    monkeypatch.setattr(val, "run_all", reuse)


@pytest.fixture(scope="session")
def full_doc():
    return val.validate(None)


@pytest.mark.parametrize("drive,name", params(fast))
def test_figure_fast(fast_doc, drive, name):
    r = row(fast_doc, drive, name)
    assert r["pass"], f"{drive} {name}: published {r['published']}, simulated {r['simulated']}"


@pytest.mark.slow
@pytest.mark.parametrize("drive,name", params(None))
def test_figure_all(full_doc, drive, name):
    r = row(full_doc, drive, name)
    assert r["pass"], f"{drive} {name}: published {r['published']}, simulated {r['simulated']}"


@pytest.mark.slow
def test_full_run_within_budget(full_doc):
    assert full_doc["wall_seconds"] <= 15 * 60


def test_every_calibrated_drive_has_a_profile():
    ids = set(builtin_ids())
    required = {"xg6-256", "xg6-1024", "pm981a-256", "pm981a-512", "sn520-128", "sn520-256",
                "pm991-128", "pm991-256", "bg4-128", "bg4-256", "870qvo-1000", "870qvo-4000",
                "mx100-256", "m550-256", "m4-256", "510-250"}
    assert required <= ids
    # Every built-in profile is checked: published figures, spec sheets, no freezes.
    assert set(val.drives()) == ids
    assert any("pcie4" in i and "qlc" not in i for i in ids)
    assert any("pcie4" in i and "qlc" in i for i in ids)


def test_every_xfail_names_a_figure():
    names = {(f.drive, f.name) for f in val.FIGURES}
    assert set(val.XFAIL) <= names


def test_ratings_run_on_the_makers_host_and_reviews_on_theirs(fast_doc):
    """The PM981a's rating was measured on Samsung's host, its read plateau on the review's:
    each row runs on its own (the spec row with the testbed's link efficiency), so the same
    drive reads at the plateau in one and near its rating in the other."""
    rows = {(r["drive"], r["figure"]): r for r in fast_doc["figures"]}
    rated = rows[("pm981a-256", "rated seq read")]
    assert "--set host.protocol_efficiency=0.87" in rated["test"]
    assert rated["pass"] and rated["simulated"] > 3300
    # the review's runs of the same drive keep the profile's fitted review-host link
    assert all("--set" not in r["test"] for r in fast_doc["figures"] if r["kind"] == "published")
    from ssdlab.calibration import QUICK

    assert 2600 <= val.run_one("pm981a-256", QUICK)["metrics"]["cdm_seq1m_q8t1_read_mbps"] <= 2700


def test_check_value_and_range():
    f = val.Figure("d", "x", FILL, lambda c: None, value=100.0)
    assert f.check(115.0)[0] and f.check(85.0)[0]
    assert not f.check(116.0)[0] and not f.check(None)[0]
    assert f.check(110.0)[1] == pytest.approx(0.10)
    r = val.Figure("d", "x", FILL, lambda c: None, lo=2100.0, hi=3500.0)
    assert r.check(2100.0) == (True, 0.0) and r.check(3000.0) == (True, 0.0)
    ok, err = r.check(2000.0)
    assert not ok and err == pytest.approx(-100 / 2100)
    open_hi = val.Figure("d", "x", FILL, lambda c: None, lo=1.2)
    assert open_hi.check(4.0)[0] and not open_hi.check(1.1)[0]
    assert open_hi.published() == ">= 1.2"


def test_unknown_figure_is_a_user_error_before_anything_runs():
    r = CliRunner().invoke(app, ["validate", "--drive", "xg6-256", "--figure", "post-cahce"])
    assert r.exit_code == 2 and "no figure 'post-cahce' among the figures of xg6-256" in r.output
    assert "'post-cache'" in r.output and r.output.strip().count("\n") == 0


def test_unknown_drive_is_a_user_error():
    r = CliRunner().invoke(app, ["validate", "--drive", "nope"])
    assert r.exit_code == 2
    assert "no figures for nope" in r.output


def test_set_changes_the_profile_for_every_figure(fast_doc):
    """--set is a what-if run: slower native programs lower the post-cache figure, the
    document says which overrides it used, and a bad override is one line, exit 2."""
    r = CliRunner().invoke(app, ["validate", "--drive", "xg6-256", "--figure", "post-cache", "--json",
                                 "--set", "nand.native.prog_us=4000"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert doc["overrides"] == ["nand.native.prog_us=4000"]
    post = {(x["drive"], x["figure"]): x["simulated"] for x in fast_doc["figures"]}
    (slower,) = doc["figures"]  # --figure: that figure alone
    assert slower["figure"] == "post-cache"
    assert slower["simulated"] < 0.8 * post[("xg6-256", "post-cache")]
    assert "--set nand.native.prog_us=4000" in val.markdown(doc)
    bad = CliRunner().invoke(app, ["validate", "--drive", "xg6-256", "--set", "nand.bogus=1"])
    assert bad.exit_code == 2 and "unknown field `bogus`" in bad.output
    assert "Traceback" not in bad.output


def test_cli_json_is_one_document(fast_runs_reused):
    r = CliRunner().invoke(app, ["validate", "--drive", "bg4-128", "--json"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert doc["total"] == len(doc["figures"])
    published = {x["figure"] for x in doc["figures"] if x["kind"] == "published"}
    assert published == {"SLC share", "peak", "after the cache", "last 16 GB"}
    assert {x["kind"] for x in doc["figures"]} == {"published", "spec sheet", "behaviour", "latency"}
    for x in doc["figures"]:
        assert set(val.HEADERS) - {"error"} <= set(x) | {"pass"}


def test_markdown_lists_every_figure(fast_doc):
    md = val.markdown(fast_doc)
    assert md.count("\n| ") >= 2 * len(fast_doc["figures"])
    assert f"{fast_doc['passed']} of {fast_doc['total']} figures pass" in md
