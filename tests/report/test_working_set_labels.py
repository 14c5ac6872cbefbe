"""Working-set sizes keep the digits that make them true and distinct: a tiny drive's
0.066 GB set is "0.066", not "0.1"; a whole area of 1.04 GB beside the 1 GB set is "1.04",
not a second "1" (whose phase name and `iops_by_gb` key would clash). The same text names
the phase, the metric's key, the comparison row and the tick of the HTML and PNG figures."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from ssdlab.cli import app
from ssdlab.figures import working_set
from ssdlab.methodology import Options
from ssdlab.methodology.working_set import phases
from ssdlab.phase import GB


def _names(capacity: int) -> list[str]:
    return [p.name for p in phases(capacity, Options()) if p.name.startswith("ws_")]


@pytest.mark.parametrize("capacity, names", [
    (67_000_000, ["ws_0.066"]),  # the area is whole MiB: 0.0661 GB
    (256 * 2**20, ["ws_0.27"]),
    (int(1.04 * GB), ["ws_1", "ws_1.04"]),
    (int(2.01 * GB), ["ws_1", "ws_2", "ws_2.01"]),
    (10 * GB, ["ws_1", "ws_2", "ws_4", "ws_8", "ws_10"]),  # the nominal sets as before
    (int(255.8 * GB), ["ws_1", "ws_2", "ws_4", "ws_8", "ws_16", "ws_32", "ws_64", "ws_128", "ws_255.8"]),
])
def test_phase_names_are_true_and_distinct(capacity, names):
    assert _names(capacity) == names


def test_tables_and_figures_show_them(tmp_path, monkeypatch):
    db = str(tmp_path / "r.sqlite")
    runner = CliRunner()
    ids = []
    for gb in ("0.067", "1.04"):
        r = runner.invoke(app, ["run", "working-set", "--drive", "sim:tlc-256", "--set", f"user_capacity_gb={gb}",
                                "--seconds", "0.2", "--db", db, "--json"])
        assert r.exit_code == 0, r.output
        doc = json.loads(r.stdout)
        ids.append(str(doc["run_id"]))
        assert list(doc["drives"][0]["metrics"]["iops_by_gb"]) == (["0.066"] if gb == "0.067" else ["1", "1.04"])
    r = runner.invoke(app, ["compare", *ids, "--db", db])
    assert "iops_by_gb[0.066]" in r.stdout and "iops_by_gb[1.04]" in r.stdout and "[0.1]" not in r.stdout

    pngs: list[list[str]] = []
    save = working_set.P._save

    def keep_ticks(fig, out, name):
        fig.canvas.draw()
        pngs.append([t.get_text() for t in fig.axes[-1].get_xticklabels()])
        return save(fig, out, name)

    monkeypatch.setattr(working_set.P, "_save", keep_ticks)
    r = runner.invoke(app, ["report", *ids, "--db", db, "-o", str(tmp_path / "rep")])
    assert r.exit_code == 0, r.output
    assert pngs == [["0.066", "1", "1.04"]]
    html = (tmp_path / "rep" / "report.html").read_text()
    assert '"ticktext":["0.066","1","1.04"]' in html.replace(" ", "")
    assert "IOPS @ 0.066 GB" in html and "@ 0.1 GB" not in html
