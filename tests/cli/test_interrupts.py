"""Ctrl-C handling: a stop lasts as long as the block that took it."""

import os
import signal

import pytest

from ssdlab import executor, interrupts


def test_a_stop_taken_in_one_block_does_not_stop_code_run_after_it():
    with pytest.raises(KeyboardInterrupt), interrupts.handled():
        os.kill(os.getpid(), signal.SIGINT)
        while True:
            pass
    assert not interrupts.stopping()
    # a pool started later in the same process runs its units (it checks stopping())
    with executor.PoolExecutor(1) as e:
        assert [d.value for d in e.run([executor.Unit(0, abs, (-3,))])] == [3]


def test_a_sigterm_is_still_told_apart_after_the_block():
    with pytest.raises(KeyboardInterrupt), interrupts.handled():
        os.kill(os.getpid(), signal.SIGTERM)
        while True:
            pass
    assert interrupts.terminated() and not interrupts.stopping()


def _swallows_a_stop() -> int:
    """A unit whose code takes Ctrl-C and drops it (as the simulator can when the stop comes
    with a phase's last sample): the handler ran, no KeyboardInterrupt came out."""
    try:
        os.kill(os.getpid(), signal.SIGINT)
        while True:
            pass
    except KeyboardInterrupt:
        return 1


def test_a_stop_a_unit_swallowed_stops_the_inline_executor_after_it():
    ran = []

    def unit(i: int) -> int:
        ran.append(i)
        return _swallows_a_stop() if i == 0 else i

    with pytest.raises(KeyboardInterrupt), interrupts.handled():
        list(executor.Executor().run([executor.Unit(i, unit, (i,)) for i in range(3)]))
    assert ran == [0]
