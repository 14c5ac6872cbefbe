"""`fit --json` gives each figure's evidence as numbers beside the display string it always
gave (`measured` stays: --json shapes are contracts)."""

from __future__ import annotations

from pathlib import Path

from ssdlab.fit import crossval, evidence, fitting

FIGURES = Path(__file__).resolve().parents[2] / "python/ssdlab/calibration/figures/sn520-128.toml"


def test_each_figure_has_its_evidence_as_numbers_with_the_unit():
    ev = evidence.from_figures(FIGURES)
    rows = fitting.figure_rows(ev, {})
    assert rows and all(isinstance(r["measured"], str) for r in rows)
    for r, f in zip(rows, ev.figures):
        n = r["measured_value"]
        assert set(n) == {"value", "lo", "hi", "unit"} and n["unit"] == r["unit"] == f.unit
        numbers = [x for x in (n["value"], n["lo"], n["hi"]) if x is not None]
        assert numbers and all(isinstance(x, float | int) for x in numbers), r
    peak = next(r for r in rows if r["figure"] == "peak")
    assert peak["measured"] == "750..860" and peak["measured_value"] == {"value": None, "lo": 750, "hi": 860,
                                                                        "unit": "MB/s"}


def test_a_held_back_figure_has_them_too():
    ev = evidence.from_figures(FIGURES)
    f = ev.figures[0]
    h = crossval.Held("g", f.name, f.published(), 1.0, 0.0, True, 0.5, f.published_numbers())
    assert vars(h)["measured"] == f.published() and vars(h)["measured_value"]["unit"] == f.unit
