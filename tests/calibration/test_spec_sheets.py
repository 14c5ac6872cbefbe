"""The spec-sheet rows: a retail twin's ratings fill in what a drive's own source lacks, and every
family rated at two capacities by the same kind of source is checked on its ratio too."""

from __future__ import annotations

import pytest

from ssdlab.calibration import spec_sheets


def family(drive: str) -> str:
    return drive.rsplit("-", 1)[0]


def test_every_family_rated_at_two_capacities_has_its_ratio_rows():
    table = spec_sheets.ratings()
    kinds = {d: {k for k, rated, _ in spec_sheets.rating_sets(r) if rated and k in ("rating", "twin")}
             for d, r in table.items()}
    names = {(f.drive, f.name) for f in spec_sheets.figures()}
    pairs = 0
    for a in table:
        for b in table:
            if a < b and family(a) == family(b) and (kinds[a] & kinds[b] or "twin" in table[a] or "twin" in table[b]):
                small, large = sorted((a, b), key=lambda d: float(d.rsplit("-", 1)[1]))
                assert table[large].get("sibling") == small, f"{large}: no sibling = \"{small}\""
                assert any(d == large and f" over {small}" in n for d, n in names)
                pairs += 1
    assert pairs >= 2  # 870 QVO (own ratings), PM981a (the 970 EVO Plus, its twin)


def test_the_ratio_row_reads_both_drives_on_the_makers_host():
    f = next(f for f in spec_sheets.figures()
             if f.drive == "pm981a-512" and f.name.startswith("rated write after the SLC cache over"))
    assert f.value == pytest.approx(900 / 400)
    assert f.needs == (("pm981a-256", f.run),) and "host.protocol_efficiency=0.87" in f.run[4]
    runs = {("pm981a-512", f.run): {"metrics": {"post_cache_mbps": 800.0}},
            ("pm981a-256", f.run): {"metrics": {"post_cache_mbps": 400.0}}}
    from ssdlab.calibration import Ctx

    measured = f.measure(Ctx("pm981a-512", runs))
    assert measured == pytest.approx(2.0) and f.check(measured)[0]
    assert not f.check(1.5)[0]  # the die ratio of a capped family would not pass


def test_a_twin_rating_never_replaces_the_drives_own():
    own = {f.name for f in spec_sheets.figures() if f.drive == "pm981a-256"}
    assert "rated seq write" in own and "rated seq write (twin's rating)" not in own
    assert "rated write after the SLC cache (twin's rating)" in own
