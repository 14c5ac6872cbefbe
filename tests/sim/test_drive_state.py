"""Shared drive states (targets/sim_state.py): a test whose first phases come from a kept
state gives bit-identical results to the same test on a freshly filled drive, and a state is
found only under its own key (profile, overrides, seed, recipe)."""

import numpy as np
import pytest

pytest.importorskip("ssdlab._sim")

from ssdlab import _sim  # noqa: E402
from ssdlab.detached import compute, compute_group, job_for, plan_groups, state_keys  # noqa: E402
from ssdlab.methodology import Options  # noqa: E402
from ssdlab.profiles import load_text  # noqa: E402
from ssdlab.targets.sim import SimTarget  # noqa: E402
from ssdlab.targets.sim_state import (  # noqa: E402
    StateCache, StateKey, drives_at_once, phase_key, plan_keys, share_groups, shared_recipes)
from ssdlab import phase as ph  # noqa: E402

from drives import SMALL  # noqa: E402

OPTS = Options(seconds=2, repeat=1, interval=0)


def same(a, b) -> bool:
    """Two phase results alike to the bit (name aside)."""
    def eq(x, y):
        if isinstance(x, dict):
            return x.keys() == y.keys() and all(eq(x[k], y[k]) for k in x)
        if isinstance(x, (np.ndarray, list)):
            return np.array_equal(np.asarray(x), np.asarray(y), equal_nan=True)
        return x == y or (x != x and y != y)
    return all(eq(getattr(a, f), getattr(b, f)) for f in ("series", "segments", "latency", "totals"))


def test_tests_from_a_kept_fill_match_tests_from_a_fresh_fill():
    jobs = [job_for("sim:tlc-256", load_text("tlc-256"), SMALL, 42, t, OPTS) for t in ("consistency", "working-set", "trim")]
    groups = plan_groups(jobs)
    assert [g for g, _ in groups] == [[0, 1, 2]]  # all three begin with purge and the same fill
    # the fill, reached by all three (and with --seconds 2 the random writes that follow it
    # in consistency and trim alike)
    assert sorted(groups[0][1].values()) == [2, 3]
    shared = compute_group(tuple(jobs), groups[0][1])
    for job, got in zip(jobs, shared):
        fresh = compute(job)
        assert got.error is None and fresh.error is None
        assert [r.phase for r in got.results] == [r.phase for r in fresh.results]
        for a, b in zip(got.results, fresh.results):
            assert same(a, b), f"{job.test}: phase {a.phase.name}"


def test_a_phase_from_a_state_is_the_phase_run_and_a_state_is_found_only_under_its_key():
    text = load_text("tlc-256")
    states = StateCache()
    first = SimTarget(text, SMALL, 42, states)
    cap = first.identify().capacity
    fill = [ph.purge(), ph.seq_write("fill", stop_bytes=cap // 2**20 * 2**20)]
    rand = ph.rand_io("random", 0, stop_seconds=2)
    states.keep = {plan_keys(first.key, fill, cap)[-1]: None}  # any number of runs
    for p in fill:
        first.run(p)
    assert not states.states  # kept once the target goes on or closes
    want = first.run(rand)
    assert len(states.states) == 1 and states.hits == 0

    again = SimTarget(text, SMALL, 42, states)
    got = [again.run(p) for p in fill]
    assert states.hits == 2  # purge and fill from the kept state
    assert [r.phase.name for r in got] == ["purge", "fill"]
    assert same(again.run(rand), want)

    for other in (SimTarget(text, [*SMALL, "host.write_buffer_kib=2048"], 42, states),
                  SimTarget(text, SMALL, 43, states)):
        hits = states.hits
        for p in fill:
            other.run(p)
        assert states.hits == hits, "a state of another drive or seed must not be used"
    hits = states.hits
    shorter = SimTarget(text, SMALL, 42, states)
    shorter.run(fill[0])
    shorter.run(ph.seq_write("fill", stop_bytes=2**30))  # another recipe: runs
    assert states.hits == hits + 1  # only the purge came from the state


def test_only_recipes_several_runs_share_are_kept():
    base = StateKey.new("profile", [], 42)
    purge, fill = ph.purge().resolve(2**30), ph.seq_write("f", stop_bytes=2**20).resolve(2**30)
    a = [base.then(phase_key(purge)), base.then(phase_key(purge)).then(phase_key(fill))]
    b = [*a, a[-1].then("x")]
    assert shared_recipes([a]) == {}  # one run: nothing to share
    assert shared_recipes([a, b]) == {a[-1]: 2}  # the fill (two runs reach it), not the purge alone
    # the run that ends at the fill goes first: it hands its drive over, the other takes it
    groups, keep = share_groups([b, a])
    assert groups == [[1, 0]] and drives_at_once(keep, [b, a]) == 1
    c = [*a, a[-1].then("y")]
    groups, keep = share_groups([b, c])  # neither ends at the fill: the first copies it
    assert drives_at_once(keep, [b, c]) == 2
    groups, keep = share_groups([a, b, c])  # three runs: the middle one loads a copy
    assert groups == [[0, 1, 2]] and drives_at_once(keep, [a, b, c]) == 2


def test_a_test_that_leaves_a_kept_recipe_part_way_runs_it_again():
    """Purge from the state, then a phase of its own: the drive is rebuilt at the purge."""
    text = load_text("tlc-256")
    states = StateCache()
    a = SimTarget(text, SMALL, 42, states)
    cap = a.identify().capacity
    fill = [ph.purge(), ph.seq_write("fill", stop_bytes=cap // 2**20 * 2**20)]
    states.keep = {plan_keys(a.key, fill, cap)[-1]: None}
    for p in fill:
        a.run(p)
    a.close()  # the drive's own state goes to the cache
    half = ph.seq_write("half", stop_bytes=2**30, queue_depth=4)
    b = SimTarget(text, SMALL, 42, states)
    b.run(fill[0])
    got = b.run(half)
    fresh = SimTarget(text, SMALL, 42)
    fresh.run(fill[0])
    assert same(got, fresh.run(half))


def test_state_keys_follow_the_plan():
    job = job_for("sim:tlc-256", load_text("tlc-256"), SMALL, 42, "consistency", OPTS)
    keys = state_keys(job)
    assert len(keys) == 3 and keys[0].recipe == keys[2].recipe[:1]
    assert _sim.Drive.describe(job.profile_text, list(SMALL))["user_bytes"] > 0
