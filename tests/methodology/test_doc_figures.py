"""Figures docs/methodology.md quotes as what a simulated drive gives now, read from the page
and checked against the run they describe (a figure of the page's that goes stale fails here)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ssdlab.cli import app
from ssdlab.store import Store

pytest.importorskip("ssdlab._sim")
PAGE = (Path(__file__).resolve().parents[2] / "docs" / "methodology.md").read_text()
runner = CliRunner()


def run(db: Path, *args: str) -> dict:
    r = runner.invoke(app, ["run", *args, "--db", str(db), "--json"])
    assert r.exit_code == 0, r.stderr
    return json.loads(r.stdout)


def test_the_fill_of_a_0_8_gb_area_is_as_the_page_quotes_it(tmp_path):
    """`peak_mbps` and `slc_cache_gb` both quote tlc-256 shrunk to 0.8 GB: its segments' size,
    the first segment's speed and the range of the cached ones after it."""
    quoted = re.findall(r"a 0\.8 GB area in (\d+) MB segments: (\d+), then (\d+)-(\d+) MB/s", PAGE)
    assert len(quoted) == 2, quoted
    doc = run(tmp_path / "r.sqlite", "fill", "--drive", "sim:tlc-256", "--set", "user_capacity_gb=0.8")
    store = Store(tmp_path / "r.sqlite", create=False)
    fill = [p for p in store.phases(store.run(doc["run_id"])["drives"][0]["id"]) if p["name"] == "fill"][0]
    gb, mbps = fill["segments"]["gb"], fill["segments"]["mbps"]
    cached = [round(v) for v in mbps[1:5]]  # the cache's segments after the first (0.12 GB of cache)
    assert doc["drives"][0]["metrics"]["slc_cache_gb"] == pytest.approx(0.12)
    for seg_mb, first, lo, hi in quoted:
        assert round(gb[0] * 1000) == int(seg_mb)
        assert (round(mbps[0]), min(cached), max(cached)) == (int(first), int(lo), int(hi))
    assert f"peak {max(cached)}" in PAGE and doc["drives"][0]["metrics"]["peak_mbps"] == pytest.approx(max(cached), abs=0.5)


def test_the_consistency_wafs_of_tlc_256_are_as_the_page_quotes_them(tmp_path):
    waf, steady = re.findall(r"On tlc-256: `waf` ([\d.]+), `steady_waf` ([\d.]+)", PAGE)[0]
    m = run(tmp_path / "r.sqlite", "consistency", "--drive", "sim:tlc-256")["drives"][0]["metrics"]
    assert (f"{m['waf']:.2f}", f"{m['steady_waf']:.2f}") == (waf, steady)
