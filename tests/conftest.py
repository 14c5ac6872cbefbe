"""Shared fixtures (the FakeTarget itself: fakes.py), the hypothesis profile, and the
session's rule on skips."""

from __future__ import annotations

import pytest
from fakes import FakeTarget
from hypothesis import HealthCheck, settings

# Property tests check behaviour, not timings: hypothesis's default 200 ms deadline per
# example and its too-slow health check fail on a slow or loaded machine (the CI's is
# not this one). Loaded here, before the test modules, so their @settings inherit it.
settings.register_profile("ssdlab", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("ssdlab")


@pytest.fixture(autouse=True)
def own_state_dir(tmp_path_factory, monkeypatch):
    """ssdlab keeps state under $XDG_STATE_HOME (a fit's trial record): each test its own,
    never the user's, and none reused from another test."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path_factory.mktemp("state")))


@pytest.fixture
def fake():
    return FakeTarget()


@pytest.fixture
def store(tmp_path):
    from ssdlab.store import Store

    s = Store(tmp_path / "results.sqlite")
    yield s
    s.close()


@pytest.fixture
def small_fs(tmp_path):
    """A 70 MB tmpfs (root), room enough to start a run and soon full."""
    from mounts import tmpfs

    with tmpfs(tmp_path / "fs", "70m") as d:
        yield d


# `make test` runs the serial tests from the files that say `mark.serial` (collecting the
# whole suite again took 3.5 s): a test marked serial any other way would be left out there.
def pytest_collection_modifyitems(config, items):
    from pathlib import Path

    said: dict[Path, bool] = {}
    for item in items:
        if item.get_closest_marker("serial") is None:
            continue
        path = Path(item.path)
        if path not in said:
            said[path] = "mark.serial" in path.read_text()
        if not said[path]:
            raise pytest.UsageError(f"{item.nodeid} is marked serial, but its file never says `mark.serial`, "
                                    "which is how the Makefile finds the serial tests: mark it there")


# `make test` sets SSDLAB_NO_SKIPS=1: it installs every tool its tests need, so a skipped
# test means one went untested, and the session fails. Only a skip for hardware that
# cannot be here (a real NVMe drive) is allowed; its reason starts with "[hardware]".
def pytest_sessionfinish(session, exitstatus):
    import os

    tr = session.config.pluginmanager.get_plugin("terminalreporter")
    if not os.environ.get("SSDLAB_NO_SKIPS") or tr is None:
        return
    bad = []
    for rep in tr.stats.get("skipped", []):
        reason = rep.longrepr[2] if isinstance(rep.longrepr, tuple) else str(rep.longrepr)
        if "[hardware]" not in reason:
            bad.append(f"{rep.nodeid}: {reason}")
    if bad:
        tr.ensure_newline()
        tr.write_line(f"SSDLAB_NO_SKIPS: {len(bad)} test(s) skipped for a reason other than "
                      "missing hardware (their tools should have been installed):", red=True)
        for b in bad:
            tr.write_line("  " + b, red=True)
        if session.exitstatus == 0:
            session.exitstatus = 1
