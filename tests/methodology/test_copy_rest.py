"""The copy test measures each copy and each transfer on a drive at rest: the source files it
writes first (and the copy before a transfer) would otherwise use up the SLC cache, and the
figure would be the state the test's own preparation left."""

from __future__ import annotations

import pytest

from drives import SMALL
from ssdlab.methodology import Options, get
from ssdlab.methodology import copy as cp
from ssdlab.phase import GB
from ssdlab.profiles import load_text
from ssdlab.runner import walk_phases

TEST = get("copy")


def test_every_measured_step_follows_a_rest():
    names = [p.name for p in cp.phases(64 * GB, Options())]
    for kind in cp.KINDS:
        for step in (f"{kind}_copy", f"{kind}_transfer_0"):
            before = names[names.index(step) - 1]
            assert before == f"{kind}_rest_{step.split('_')[1]}", (step, before)


def test_a_transfer_after_the_copy_gets_the_cache_back():
    """8 GB with a 1 GB SLC cache: the large files are 1.6 GB, their 3.2 GB source written
    first. Right after it and the copy, the transfer ran 367 MB/s (native speed for most of
    it); at rest the cache takes its first GB from the 500 MB/s source again: 462."""
    pytest.importorskip("ssdlab._sim")
    from ssdlab.targets.sim import SimTarget

    t = SimTarget(load_text("tlc-256"), SMALL)
    opts = Options()
    m = TEST.analyze(walk_phases(TEST, t, t.identify().capacity, opts), opts)
    assert m["large_transfer_mbps"] > 430
    assert m["small_transfer_mbps"] > 400
