"""Cross-validation's folds: what a fold's search runs."""

from __future__ import annotations

from ssdlab.fit import search
from test_search import Stuck


def test_a_folds_search_is_the_searchs_opening():
    """A fold runs the die-count scan, screening and the steps after them (within its
    trials), and not another basin or CMA-ES, which in a 256 GB drive's fingerprint fit
    lowered none of its 14 folds' losses; the search itself goes on from there while a figure
    fails."""
    fold = Stuck(scalable=True)
    fold.run(search.Budget(400), opening_only=True)
    assert fold.failing() and [p["phase"] for p in fold.phases] == ["screen", "steps"]
    whole = Stuck(scalable=True)
    whole.run(search.Budget(400))
    assert "cma-es" in [p["phase"] for p in whole.phases]
    assert len(whole.trials) > len(fold.trials)
